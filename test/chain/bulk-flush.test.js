// The producer's bulk trie flush (archive mode) and the MPT's key-by-key path (--state-history, which
// pruning needs) reach the same state root after every block of the same transactions.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { bytesToHex, hexToBytes, privateToAddress } from '@ethereumjs/util'
import { Interface } from 'ethers'
import { decodeReceipts } from '../../dist/chain/receipts.js'
import { compile } from '../helpers/contracts.js'
import { benchKeys, deploy, openTempChain } from '../../bench/lib/temp-chain.js'

test('bulk flush and MPT flush agree on every state root (accounts created, storage written, zeroed)', async () => {
  const senders = benchKeys(30, 41)
  const { Token } = compile()
  const abi = new Interface(Token.abi)
  const transfer = (to, amount) => hexToBytes(abi.encodeFunctionData('transfer', [to, amount]))
  const fresh = (i) => `0x${(0xb0000 + i).toString(16).padStart(40, '0')}`
  const addressOf = (key) => bytesToHex(privateToAddress(key))
  const chains = [await openTempChain({ funded: senders }), await openTempChain({ funded: senders, stateHistory: 128 })]
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
    const sm = chain.producer.vm.stateManager
    assert.ok(sm instanceof BulkFlushStateManager)
    let mptReads = 0
    const mptGet = sm._trie.get.bind(sm._trie)
    sm._trie.get = (...args) => {
      mptReads++
      return mptGet(...args)
    }
    const addresses = [
      ...senders.map((key) => bytesToHex(privateToAddress(key))),
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
