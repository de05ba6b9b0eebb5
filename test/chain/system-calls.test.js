// The blocks Keel builds are valid blocks of the forks it runs: @ethereumjs's own runBlock re-executes each
// one from the genesis state and must arrive at the same state root, receipts root, logs bloom, gas used
// and EIP-7685 requests hash. The genesis deploys all four system contracts (as geth's --dev does), so
// every block writes the EIP-4788 and EIP-2935 rings, and one block carries an EIP-7002 withdrawal
// request and an EIP-7251 consolidation request, which the block's system calls dequeue into its requests.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Block, createBlockHeaderFromRLP } from '@ethereumjs/block'
import { MerkleStateManager } from '@ethereumjs/statemanager'
import { createTxFromRLP } from '@ethereumjs/tx'
import { Account, bigIntToBytes, bytesToHex, concatBytes, createAddressFromString, hexToBytes, setLengthLeft } from '@ethereumjs/util'
import { createVM, paramsVM, runBlock } from '@ethereumjs/vm'
import { sha256 } from '@noble/hashes/sha2.js'
import { openTempChain } from '../../bench/lib/temp-chain.js'
import { Keys } from '../../dist/chain/store/schema.js'
import { allocOf, BEACON_ROOTS, CONSOLIDATION_QUEUE, HISTORY_STORAGE, WITHDRAWAL_QUEUE } from '../../dist/chain/system-contracts.js'
import { createChainCommon } from '../../dist/evm/common.js'
import { loadFastCrypto } from '../../dist/evm/crypto.js'

const EMPTY_REQUESTS_HASH = bytesToHex(sha256(new Uint8Array(0)))

/** The genesis state built by @ethereumjs alone, from the genesis's alloc. */
async function genesisState(common, alloc) {
  const sm = new MerkleStateManager({ common })
  for (const [address, account] of Object.entries(alloc)) {
    const at = createAddressFromString(address.startsWith('0x') ? address : `0x${address}`)
    await sm.putAccount(at, new Account(BigInt(account.nonce ?? 0), BigInt(account.balance ?? 0)))
    if (account.code !== undefined) await sm.putCode(at, hexToBytes(account.code))
    for (const [key, value] of Object.entries(account.storage ?? {})) await sm.putStorage(at, setLengthLeft(hexToBytes(key), 32), hexToBytes(value))
  }
  return sm
}

test('system calls: @ethereumjs runBlock re-executes Keel\'s blocks to the same state root and requests hash', async () => {
  const crypto = await loadFastCrypto()
  const chain = await openTempChain({
    alloc: {
      [BEACON_ROOTS.address]: allocOf(BEACON_ROOTS),
      [WITHDRAWAL_QUEUE.address]: allocOf(WITHDRAWAL_QUEUE),
      [CONSOLIDATION_QUEUE.address]: allocOf(CONSOLIDATION_QUEUE),
    },
  })
  try {
    assert.equal(chain.genesis.alloc[HISTORY_STORAGE.address].code, HISTORY_STORAGE.code, 'the default genesis deploys EIP-2935\'s contract')
    const [a, b] = chain.dev
    const raws = new Map()
    const submit = async (raw) => raws.set((await chain.submit(raw)).hash, raw)

    const empty = await chain.sealBlock()

    const pubkey = new Uint8Array(48).fill(0xaa)
    const amount = hexToBytes('0x0000000000000102') // a partial withdrawal of 258 gwei (big-endian in the call)
    await submit(chain.sign(a.key, { to: hexToBytes(WITHDRAWAL_QUEUE.address), data: concatBytes(pubkey, amount), value: 1000n, gasLimit: 300_000n }))
    const source = new Uint8Array(48).fill(0xbb)
    const target = new Uint8Array(48).fill(0xcc)
    await submit(chain.sign(b.key, { to: hexToBytes(CONSOLIDATION_QUEUE.address), data: concatBytes(source, target), value: 1000n, gasLimit: 300_000n }))
    await submit(chain.sign(a.key, { to: hexToBytes(`0x${'0e'.repeat(20)}`), value: 5n, gasLimit: 21_000n }))
    const withRequests = await chain.sealBlock()
    assert.equal(withRequests.txHashes.length, 3)
    const afterRequests = await chain.sealBlock()

    const headerOf = (event) => createBlockHeaderFromRLP(event.headerRlp, { common: chain.common, setHardfork: true })
    // EIP-7685: sha256 over sha256(type ‖ data) of each non-empty request list; EIP-7002 returns the amount little-endian
    const expected = sha256(concatBytes(
      sha256(concatBytes(Uint8Array.of(1), hexToBytes(a.address), pubkey, amount.slice().reverse())),
      sha256(concatBytes(Uint8Array.of(2), hexToBytes(b.address), source, target)),
    ))
    assert.equal(bytesToHex(headerOf(withRequests).requestsHash), bytesToHex(expected))
    assert.equal(bytesToHex(headerOf(empty).requestsHash), EMPTY_REQUESTS_HASH)
    assert.equal(bytesToHex(headerOf(afterRequests).requestsHash), EMPTY_REQUESTS_HASH, 'the queues were emptied')

    // the oracle: a VM of @ethereumjs's own, from the same genesis, runs the blocks and checks every header field it derives
    const common = createChainCommon(chain.genesis, crypto.customCrypto, paramsVM)
    const sm = await genesisState(common, chain.genesis.alloc)
    const genesisHeader = createBlockHeaderFromRLP(await chain.level.get(Keys.header(0n)), { common, setHardfork: true })
    assert.equal(bytesToHex(await sm.getStateRoot()), bytesToHex(genesisHeader.stateRoot), 'genesis state root')
    const vm = await createVM({ common, stateManager: sm })
    for (const event of [empty, withRequests, afterRequests]) {
      const header = createBlockHeaderFromRLP(event.headerRlp, { common, setHardfork: true })
      const txs = event.txHashes.map((hash) => createTxFromRLP(hexToBytes(raws.get(hash)), { common }))
      const block = new Block(header, txs, [], [], { common })
      // throws on a receipts root, bloom, gas used or requests hash that differs from the header's
      const result = await runBlock(vm, { block, generate: false, skipBlockValidation: true, skipHeaderValidation: true, setHardfork: true })
      assert.equal(bytesToHex(result.stateRoot), bytesToHex(header.stateRoot), `state root of block ${header.number}`)
      assert.ok(result.receipts.every((r) => r.status === 1), 'every transaction succeeded')
    }

    // what the pre-transaction system calls left in state
    const head = headerOf(afterRequests)
    const storage = (contract, slot) => sm.getStorage(createAddressFromString(contract.address), setLengthLeft(bigIntToBytes(slot), 32))
    assert.equal(bytesToHex(await storage(HISTORY_STORAGE, (head.number - 1n) % 8191n)), bytesToHex(head.parentHash))
    assert.equal(bytesToHex(await storage(BEACON_ROOTS, head.timestamp % 8191n)), bytesToHex(bigIntToBytes(head.timestamp)))
  } finally {
    await chain.close()
  }
})

test('system calls: a genesis without the system contracts seals blocks as before, with the empty requests hash', async () => {
  const chain = await openTempChain({ alloc: { [HISTORY_STORAGE.address]: null } })
  try {
    const to = hexToBytes(`0x${'0e'.repeat(20)}`)
    await chain.submit(chain.sign(chain.dev[0].key, { to, value: 1n, gasLimit: 21_000n }))
    const first = await chain.sealBlock()
    const firstRoot = chain.head.stateRoot
    const second = await chain.sealBlock()
    assert.equal(first.txHashes.length, 1)
    assert.equal(second.txHashes.length, 0)
    // nothing but transactions changes the state: an empty block keeps its parent's state root
    assert.equal(bytesToHex(chain.head.stateRoot), bytesToHex(firstRoot))
    assert.equal(bytesToHex(chain.head.requestsHash), EMPTY_REQUESTS_HASH)
  } finally {
    await chain.close()
  }
})
