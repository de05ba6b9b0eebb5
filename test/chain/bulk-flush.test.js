// The producer's bulk trie flush (archive mode) and the MPT's key-by-key path (--state-history, which
// pruning needs) reach the same state root after every block of the same transactions.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { bytesToHex, hexToBytes, privateToAddress } from '@ethereumjs/util'
import { Interface } from 'ethers'
import { decodeReceipts } from '../../dist/chain/receipts.js'
import { HISTORY_STORAGE } from '../../dist/chain/system-contracts.js'
import { compile } from '../helpers/contracts.js'
import { benchKeys, deploy, openTempChain } from '../../bench/lib/temp-chain.js'

const { Token } = compile()
const tokenAbi = new Interface(Token.abi)
/** The token's transfer calldata. */
const transfer = (to, amount) => hexToBytes(tokenAbi.encodeFunctionData('transfer', [to, amount]))
const addressOf = (key) => bytesToHex(privateToAddress(key))

test('bulk flush and MPT flush agree on every state root (accounts created, storage written, zeroed)', async () => {
  const senders = benchKeys(30, 41)
  const fresh = (i) => `0x${(0xb0000 + i).toString(16).padStart(40, '0')}`
  // without EIP-2935's contract, which would store each chain's own parent hashes (they differ with the sealing time)
  const alloc = { [HISTORY_STORAGE.address]: null }
  const chains = [await openTempChain({ funded: senders, alloc }), await openTempChain({ funded: senders, alloc, stateHistory: 128 })]
  try {
    const roots = [[], []]
    for (let c = 0; c < 2; c++) {
      const chain = chains[c]
      const token = await deploy(chain, Token.bytecode)
      roots[c].push(chain.head.stateRoot)
      const blocks = [
        // native transfers to new accounts and tokens to every sender (new slots)
        () => senders.flatMap((key, i) => [
          chain.sign(key, { to: hexToBytes(fresh(i)), value: BigInt(i + 1), gasLimit: 21_000n }),
          chain.sign(chain.dev[0].key, { to: hexToBytes(token), data: transfer(addressOf(key), BigInt(1000 + i)) }),
        ]),
        // slots updated and created by the senders' own transfers
        () => senders.slice(1).map((key, i) => chain.sign(key, { to: hexToBytes(token), data: transfer(fresh(200 + i), 7n) })),
        // a holder's whole balance moved: its slot is deleted from the storage trie
        () => [chain.sign(senders[0], { to: hexToBytes(token), data: transfer(fresh(300), 1000n) })],
      ]
      for (const txs of blocks) {
        for (const raw of txs()) await chain.submit(raw)
        const event = await chain.sealBlock()
        assert.ok(event.txHashes.length > 0)
        assert.deepEqual(decodeReceipts(event.receiptsRlp).map((r) => r.status), event.txHashes.map(() => 1), 'every transaction succeeded')
        roots[c].push(chain.head.stateRoot)
      }
    }
    assert.deepEqual(roots[0].map((r) => Buffer.from(r).toString('hex')), roots[1].map((r) => Buffer.from(r).toString('hex')))
  } finally {
    for (const chain of chains) await chain.close()
  }
})

test('accounts missing from the producer cache are read through the trie reader, as the MPT reads them', async () => {
  const { BulkFlushStateManager } = await import('../../dist/chain/store/bulk-flush-sm.js')
  const { FixedMerkleStateManager } = await import('../../dist/evm/state-manager.js')
  const { Address } = await import('@ethereumjs/util')
  const senders = benchKeys(20, 43)
  const fresh = (i) => `0x${(0xc1000 + i).toString(16).padStart(40, '0')}`
  const chain = await openTempChain({ funded: senders })
  try {
    for (let b = 0; b < 3; b++) {
      for (let i = 0; i < senders.length; i++) {
        await chain.submit(chain.sign(senders[i], { to: hexToBytes(fresh(b * 100 + i)), value: BigInt(b + 1), gasLimit: 21_000n }))
      }
      assert.equal((await chain.sealBlock()).txHashes.length, senders.length)
    }
    const sm = chain.producer.sm
    assert.ok(sm instanceof BulkFlushStateManager)
    let mptReads = 0
    const mptGet = sm._trie.get.bind(sm._trie)
    sm._trie.get = (...args) => {
      mptReads++
      return mptGet(...args)
    }
    const addresses = [
      ...senders.map(addressOf),
      ...[0, 1, 19, 100, 119, 200, 219].map(fresh),
      fresh(999), // never written
    ].map((a) => new Address(hexToBytes(a)))
    const viaReader = []
    sm._caches.clear()
    for (const a of addresses) viaReader.push(await sm.getAccount(a))
    assert.equal(mptReads, 0, 'the MPT was not asked')
    sm._caches.clear()
    for (let i = 0; i < addresses.length; i++) {
      const viaMpt = await FixedMerkleStateManager.prototype.getAccount.call(sm, addresses[i])
      assert.equal(viaReader[i]?.serialize().toString(), viaMpt?.serialize().toString(), `account ${addresses[i]}`)
    }
    assert.equal(mptReads, addresses.length)
    assert.equal(viaReader.at(-1), undefined)
    assert.equal(viaReader[senders.length + 1].balance, 1n)
    assert.equal(viaReader[senders.length + 5].balance, 3n)
  } finally {
    await chain.close()
  }
})

test('storage slots missing from the producer cache are read through the trie reader, as the MPT reads them', async () => {
  const { BulkFlushStateManager } = await import('../../dist/chain/store/bulk-flush-sm.js')
  const { FixedMerkleStateManager } = await import('../../dist/evm/state-manager.js')
  const { Address, setLengthLeft } = await import('@ethereumjs/util')
  const { keccak256 } = await import('ethers')
  const fresh = (i) => `0x${(0xc2000 + i).toString(16).padStart(40, '0')}`
  const chain = await openTempChain()
  try {
    const token = await deploy(chain, Token.bytecode)
    for (let b = 0; b < 3; b++) {
      for (let i = 0; i < 20; i++) {
        await chain.submit(chain.sign(chain.dev[0].key, { to: hexToBytes(token), data: transfer(fresh(b * 100 + i), BigInt(b * 100 + i + 1)), gasLimit: 80_000n }))
      }
      assert.equal((await chain.sealBlock()).txHashes.length, 20)
    }
    const sm = chain.producer.sm
    assert.ok(sm instanceof BulkFlushStateManager)
    let storageTries = 0
    const open = sm._getStorageTrie.bind(sm)
    sm._getStorageTrie = (...args) => {
      storageTries++
      return open(...args)
    }
    // OpenZeppelin ERC20: balances are mapping slot 0, keccak(holder . 0)
    const balanceSlot = (holder) => hexToBytes(keccak256(new Uint8Array([...setLengthLeft(hexToBytes(holder), 32), ...new Uint8Array(32)])))
    const contract = new Address(hexToBytes(token))
    const holders = [chain.dev[0].address, fresh(0), fresh(19), fresh(100), fresh(219), fresh(999) /* never held */]
    const slots = [...holders.map(balanceSlot), new Uint8Array(32), hexToBytes(`0x${'ff'.repeat(32)}`)]
    const stranger = new Address(hexToBytes(fresh(998)))
    sm._caches.clear()
    const viaReader = []
    for (const slot of slots) viaReader.push(await sm.getStorage(contract, slot))
    viaReader.push(await sm.getStorage(stranger, slots[0]))
    assert.equal(storageTries, 0, 'no MPT storage trie was opened')
    sm._caches.clear()
    for (let i = 0; i < slots.length; i++) {
      const viaMpt = await FixedMerkleStateManager.prototype.getStorage.call(sm, contract, slots[i])
      assert.equal(bytesToHex(viaReader[i]), bytesToHex(viaMpt), `slot ${i}`)
    }
    assert.equal(bytesToHex(viaReader.at(-1)), bytesToHex(await FixedMerkleStateManager.prototype.getStorage.call(sm, stranger, slots[0])))
    assert.ok(storageTries > 0)
    assert.equal(BigInt(bytesToHex(viaReader[1])), 1n)
    assert.equal(BigInt(bytesToHex(viaReader[4])), 220n)
    assert.equal(viaReader[5].length, 0)
    // a read is cached as the library caches it: a second read of a missing slot asks no trie
    storageTries = 0
    sm._caches.clear()
    await sm.getStorage(contract, slots[5])
    assert.deepEqual(sm._caches.storage.get(contract, slots[5]), Uint8Array.of(0x80))
  } finally {
    await chain.close()
  }
})

test('the builder caches trimmed to a few entries after every block keep the state roots of untrimmed ones', async () => {
  const { builderCaches } = await import('../../dist/chain/store/builder-caches.js')
  const senders = benchKeys(12, 47)
  const fresh = (i) => `0x${(0xc3000 + i).toString(16).padStart(40, '0')}`
  const alloc = { [HISTORY_STORAGE.address]: null }
  const chains = [await openTempChain({ funded: senders, alloc }), await openTempChain({ funded: senders, alloc })]
  const tiny = builderCaches({ accounts: 4, slots: 3, codes: 1 })
  chains[1].producer.sm._caches = tiny
  try {
    const roots = [[], []]
    const sizes = []
    for (let c = 0; c < 2; c++) {
      const chain = chains[c]
      // two tokens: the code cache holds more than one contract
      const tokens = [await deploy(chain, Token.bytecode), await deploy(chain, Token.bytecode)]
      for (let b = 0; b < 4; b++) {
        for (const [i, key] of senders.entries()) {
          await chain.submit(chain.sign(key, { to: hexToBytes(fresh(b * 100 + i)), value: BigInt(b + 1), gasLimit: 21_000n }))
          for (const token of tokens) await chain.submit(chain.sign(chain.dev[0].key, { to: hexToBytes(token), data: transfer(b % 2 === 0 ? addressOf(key) : fresh(b * 100 + i), BigInt(1000 + i)) }))
        }
        const event = await chain.sealBlock()
        assert.deepEqual(decodeReceipts(event.receiptsRlp).map((r) => r.status), event.txHashes.map(() => 1), 'every transaction succeeded')
        roots[c].push(Buffer.from(chain.head.stateRoot).toString('hex'))
        if (c === 1) sizes.push(tiny.account.size())
      }
    }
    assert.deepEqual(roots[1], roots[0])
    assert.ok(sizes.every((n) => n <= 4), `accounts kept after each block: ${sizes}`)
    assert.ok(tiny.code.size() <= 1 && tiny.storage.size() <= 2, 'code and storage caches emptied past their bounds')
  } finally {
    for (const chain of chains) await chain.close()
  }
})
