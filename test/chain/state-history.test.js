// --state-history N: the state of the last N blocks stays readable, older trie nodes are deleted, and the
// head state stays whole (every proof verifies), also across a restart. The same workload on an archive
// node keeps every node, so the pruned database holds fewer.

import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ClassicLevel } from 'classic-level'
import { createMPTFromProof } from '@ethereumjs/mpt'
import { ContractFactory, getBytes, JsonRpcProvider, keccak256, NonceManager, Wallet, toQuantity } from 'ethers'
import { compile } from '../helpers/contracts.js'
import { DEV_KEYS, startNode } from '../helpers/node.js'
import { rpc, rpcResult } from '../helpers/rpc.js'

const HISTORY = 128
const BLOCKS = HISTORY + 16 + 60
const RECIPIENTS = Array.from({ length: 8 }, (_, i) => `0x${(0xbeef00 + i).toString(16).padStart(40, '0')}`)

let work
before(() => {
  work = mkdtempSync(join(tmpdir(), 'keel-history-'))
})
after(() => rmSync(work, { recursive: true, force: true }))

/** One block per transaction (automine): storage writes and transfers that supersede trie nodes. */
async function workload(url) {
  const provider = new JsonRpcProvider(url, 24589, { staticNetwork: true })
  const wallet = new NonceManager(new Wallet(DEV_KEYS[0], provider))
  const { Storage } = compile()
  const storage = await new ContractFactory(Storage.abi, Storage.bytecode, wallet).deploy()
  await storage.waitForDeployment()
  for (let i = 0; i < BLOCKS; i++) {
    const tx = i % 2 === 0
      ? await storage.set(i + 1)
      : await wallet.sendTransaction({ to: RECIPIENTS[i % RECIPIENTS.length], value: BigInt(i) })
    await tx.wait()
  }
  provider.destroy()
  return storage.getAddress()
}

async function verifyProof(url, address, block) {
  const { stateRoot } = await rpcResult(url, 'eth_getBlockByNumber', [block, false])
  const proof = await rpcResult(url, 'eth_getProof', [address, ['0x0'], block])
  const trie = await createMPTFromProof(proof.accountProof.map(getBytes), { useKeyHashing: true })
  assert.equal(toQuantity(trie.root()), toQuantity(stateRoot), `account proof of ${address} at ${block}`)
  const account = await trie.get(getBytes(address))
  assert.ok(account !== null || BigInt(proof.balance) === 0n, `account ${address} is in the proven state`)
  for (const sp of proof.storageProof) {
    if (sp.proof.length === 0) continue
    const storageTrie = await createMPTFromProof(sp.proof.map(getBytes), { useKeyHashing: true })
    assert.equal(toQuantity(storageTrie.root()), toQuantity(proof.storageHash), `storage proof of ${address}`)
  }
  return proof
}

async function trieNodeCount(dataDir) {
  const db = new ClassicLevel(join(dataDir, 'chain'), { keyEncoding: 'view', valueEncoding: 'view' })
  let n = 0
  for await (const _ of db.keys({ gte: Uint8Array.of(0x73), lt: Uint8Array.of(0x74) })) n++
  await db.close()
  return n
}

test(`--state-history ${HISTORY}: recent state served, older state pruned, head state whole`, { timeout: 240_000 }, async () => {
  const prunedDir = join(work, 'pruned')
  const pruned = await startNode({ dataDir: prunedDir, blockTime: 0, args: ['--state-history', String(HISTORY)] })
  let storage
  try {
    storage = await workload(pruned.url)
    const head = Number(await rpcResult(pruned.url, 'eth_blockNumber'))
    assert.ok(head >= BLOCKS, `made ${head} blocks`)
    // the head state is whole: proofs of every account the workload touched verify
    for (const address of [storage, ...RECIPIENTS]) await verifyProof(pruned.url, address, 'latest')
    assert.equal(BigInt(await rpcResult(pruned.url, 'eth_getStorageAt', [storage, '0x0', 'latest'])), BigInt(BLOCKS - 1))
    // a state inside the window is readable, one older than the window is refused as geth does
    await verifyProof(pruned.url, storage, toQuantity(head - HISTORY + 1))
    const old = await rpc(pruned.url, 'eth_getBalance', [RECIPIENTS[0], toQuantity(head - HISTORY - 30)])
    assert.equal(old.error?.code, -32000)
    assert.match(old.error.message, /^historical state 0x[0-9a-f]{64} is not available$/)
    const oldCall = await rpc(pruned.url, 'eth_call', [{ to: storage, data: '0x3fa4f245' }, toQuantity(head - HISTORY - 30)])
    assert.match(oldCall.error?.message ?? '', /^historical state/)
    // blocks and receipts are history, not state: still there
    assert.ok(await rpcResult(pruned.url, 'eth_getBlockByNumber', ['0x1', true]))
    // eth_capabilities tells a router the window: its oldest state block is served, the one before is not
    const caps = await rpcResult(pruned.url, 'eth_capabilities')
    assert.deepEqual(caps.state, { disabled: false, oldestBlock: toQuantity(head - HISTORY), deleteStrategy: { type: 'window', retentionBlocks: toQuantity(HISTORY) } })
    assert.deepEqual(caps.stateproofs, caps.state)
    assert.deepEqual(caps.blocks, { disabled: false, oldestBlock: '0x0' })
    assert.equal(caps.head.number, toQuantity(head))
    assert.ok((await rpc(pruned.url, 'eth_getBalance', [RECIPIENTS[0], caps.state.oldestBlock])).result !== undefined)
    assert.match((await rpc(pruned.url, 'eth_getBalance', [RECIPIENTS[0], toQuantity(head - HISTORY - 1)])).error?.message ?? '', /^historical state/)
    // a restart resumes on the pruned database with the head state intact, and keeps pruning
    await pruned.stop()
    const again = await startNode({ dataDir: prunedDir, blockTime: 0, args: ['--state-history', String(HISTORY)] })
    try {
      for (const address of [storage, ...RECIPIENTS]) await verifyProof(again.url, address, 'latest')
      // NonceManager: ethers shares identical requests made within 250 ms, so back-to-back sends from a plain
      // Wallet on an automining node would reuse a nonce read before the previous transaction was mined
      const provider = new JsonRpcProvider(again.url, 24589, { staticNetwork: true })
      const wallet = new NonceManager(new Wallet(DEV_KEYS[1], provider))
      for (let i = 0; i < 20; i++) await (await wallet.sendTransaction({ to: RECIPIENTS[0], value: 1n })).wait()
      await verifyProof(again.url, RECIPIENTS[0], 'latest')
      provider.destroy()
    } finally {
      await again.stop()
    }
  } finally {
    await pruned.stop()
  }

  const archiveDir = join(work, 'archive')
  const archive = await startNode({ dataDir: archiveDir, blockTime: 0 })
  try {
    await workload(archive.url)
  } finally {
    await archive.stop()
  }
  const [prunedNodes, archiveNodes] = [await trieNodeCount(prunedDir), await trieNodeCount(archiveDir)]
  assert.ok(prunedNodes < archiveNodes, `pruned database holds ${prunedNodes} trie nodes, archive ${archiveNodes}`)
})

test('--state-history below 128 (other than 0) is refused at start', async () => {
  await assert.rejects(startNode({ args: ['--state-history', '16'] }), /expected 0 \(archive\) or at least 128/)
})
