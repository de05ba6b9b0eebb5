// A node started on a database without the explorer's indexes (a chain written before Keel kept them)
// builds them in the background from its blocks, says so in its log, and ends with exactly the entries
// the producer wrote while it built the same blocks. The indexes are removed here from a chain a node
// built, and compared key by key after the rebuild; on a chain whose old states are pruned, the blocks
// that cannot run again are indexed from their transactions' top-level fields.

import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { bytesToHex, hexToBytes } from '@ethereumjs/util'
import { Interface } from 'ethers'
import { deploy, openTempChain } from '../../bench/lib/temp-chain.js'
import { compile } from '../helpers/contracts.js'
import { openChainLevel } from '../../dist/chain/store/level.js'
import { Keys, Prefix } from '../../dist/chain/store/schema.js'
import { startNode } from '../helpers/node.js'
import { rpc, rpcResult, sleep } from '../helpers/rpc.js'
import { scrape, value } from '../helpers/prom.js'
import { BENEFICIARY, HISTORY, RELAY_SINK, buildExplorerChain, keelSeal } from './explorer-chain.js'

const dataDir = mkdtempSync(join(tmpdir(), 'keel-indexes-'))
let node

after(async () => {
  await node?.stop()
  rmSync(dataDir, { recursive: true, force: true })
})

const INDEX_PREFIXES = [Prefix.appearance, Prefix.senderNonce, Prefix.creator]

/** Every index entry (key and value as hex), and the mark. */
async function readIndexes() {
  const level = await openChainLevel(join(dataDir, 'chain'))
  try {
    const entries = []
    for (const prefix of INDEX_PREFIXES) {
      for await (const [key, value] of level.iterator({ gte: Uint8Array.of(prefix), lt: Uint8Array.of(prefix + 1) })) entries.push([bytesToHex(key), bytesToHex(value)])
    }
    const mark = await level.get(Keys.meta('indexes'))
    return { entries, mark: mark === undefined ? undefined : bytesToHex(mark) }
  } finally {
    await level.close()
  }
}

async function dropIndexes() {
  const level = await openChainLevel(join(dataDir, 'chain'))
  try {
    const ops = [{ type: 'del', key: Keys.meta('indexes') }]
    for (const prefix of INDEX_PREFIXES) {
      for await (const key of level.keys({ gte: Uint8Array.of(prefix), lt: Uint8Array.of(prefix + 1) })) ops.push({ type: 'del', key })
    }
    await level.batch(ops)
  } finally {
    await level.close()
  }
}

test('the indexes of blocks written without them are built in the background, entry for entry as the producer writes them', async () => {
  node = await startNode({ dataDir, blockTime: 1 })
  const chain = await buildExplorerChain(node.url, keelSeal(node.url))
  const head = Number(await rpcResult(node.url, 'eth_blockNumber', []))
  await node.stop()
  node = undefined
  const written = await readIndexes()
  assert.equal(written.mark, '0x0000000000000000', 'a chain indexed from its genesis')
  assert.ok(written.entries.length > 100, `${written.entries.length} entries`)

  await dropIndexes()
  node = await startNode({ dataDir, blockTime: 1 })
  const deadline = Date.now() + 60_000
  while (!/explorer indexes built for every block/.test(node.stderr()) && Date.now() < deadline) await sleep(100)
  assert.match(node.stderr(), /explorer indexes built for every block/)
  assert.match(node.stderr(), new RegExp(`building the explorer indexes of older blocks.*"indexedFrom":${head + 1}`))
  assert.deepEqual((await rpcResult(node.url, 'ots_searchTransactionsBefore', [RELAY_SINK, 0, 25])).txs.map((t) => t.hash), [chain.tx.relayed])
  assert.deepEqual((await rpcResult(node.url, 'ots_searchTransactionsBefore', [BENEFICIARY, 0, 25])).txs.map((t) => t.hash), [chain.tx.makeAndKill])
  assert.equal((await rpcResult(node.url, 'ots_searchTransactionsAfter', [HISTORY, 0, 25])).txs.length, 30)
  assert.deepEqual(await rpcResult(node.url, 'ots_getContractCreator', [chain.kept]), { hash: chain.tx.make, creator: chain.factory })
  assert.equal(value(await scrape(node.metricsUrl), 'keel_indexes_complete_from_block'), 1)
  await node.stop()
  node = undefined

  const rebuilt = await readIndexes()
  assert.equal(rebuilt.mark, '0x0000000000000001', 'built down to block 1')
  assert.deepEqual(rebuilt.entries, written.entries)
})

test('while older blocks are not indexed, the address history says how far the indexes reach instead of answering short', async () => {
  // block 1's body gone: its indexes can never be built, so the mark stays at block 2
  await dropIndexes()
  const level = await openChainLevel(join(dataDir, 'chain'))
  try {
    await level.del(Keys.body(1n))
  } finally {
    await level.close()
  }
  node = await startNode({ dataDir, blockTime: 1 })
  const deadline = Date.now() + 60_000
  while (!/building the explorer indexes of older blocks failed/.test(node.stderr()) && Date.now() < deadline) await sleep(100)
  assert.match(node.stderr(), /building the explorer indexes of older blocks failed; they stay incomplete below the mark.*block 1 is not in the database/)
  // the pacing transfers of explorer-chain.js go to 0x…a0 from block 1 on
  const pacerSink = '0x00000000000000000000000000000000000000a0'
  const before = await rpc(node.url, 'ots_searchTransactionsBefore', [pacerSink, 0, 25])
  assert.equal(before.error.code, -32000)
  assert.equal(before.error.message, "the explorer's indexes are being built: they reach back to block 2, older blocks are not indexed yet; ask again once they are")
  assert.match((await rpc(node.url, 'ots_searchTransactionsAfter', [pacerSink, 0, 25])).error.message, /reach back to block 2/)
  assert.equal(value(await scrape(node.metricsUrl), 'keel_indexes_complete_from_block'), 2)
  // a page that ends above the mark is whole: the newest of HISTORY's transactions
  const newest = await rpcResult(node.url, 'ots_searchTransactionsBefore', [HISTORY, 0, 25])
  assert.equal(newest.txs.length, 32)
  assert.equal(newest.lastPage, false)
})

test('a block whose parent state is pruned (--state-history) is indexed from its transactions\' top-level fields, and the log counts them', async () => {
  const { Relay } = compile()
  const HISTORY_BLOCKS = 128
  const chain = await openTempChain({ stateHistory: HISTORY_BLOCKS })
  let open = true
  try {
    const relay = await deploy(chain, Relay.bytecode)
    const relayAbi = new Interface(Relay.abi)
    const key = chain.dev[1].key
    await chain.submit(chain.sign(key, { to: hexToBytes(relay), value: 8n, gasLimit: 300_000n, data: hexToBytes(relayAbi.encodeFunctionData('relay', [relay, RELAY_SINK, 3])) }))
    const relayed = (await chain.sealBlock()).txHashes[0]
    // past the window and its pruning margin, so that blocks 1 and 2 cannot run again
    for (let i = 0; i < HISTORY_BLOCKS + 24; i++) {
      await chain.submit(chain.sign(chain.dev[2].key, { to: hexToBytes('0x00000000000000000000000000000000000000f1'), value: 1n, gasLimit: 21_000n }))
      await chain.sealBlock()
    }
    await chain.close({ keepData: true })
    open = false
    const shallowDir = chain.dir
    const level = await openChainLevel(join(shallowDir, 'chain'))
    try {
      const ops = [{ type: 'del', key: Keys.meta('indexes') }]
      for (const prefix of INDEX_PREFIXES) for await (const k of level.keys({ gte: Uint8Array.of(prefix), lt: Uint8Array.of(prefix + 1) })) ops.push({ type: 'del', key: k })
      await level.batch(ops)
    } finally {
      await level.close()
    }
    const pruned = await startNode({ dataDir: shallowDir, dev: false, args: ['--state-history', String(HISTORY_BLOCKS)] })
    try {
      const deadline = Date.now() + 60_000
      while (!/explorer indexes built for every block/.test(pruned.stderr()) && Date.now() < deadline) await sleep(100)
      const done = /explorer indexes built for every block.*"shallowBlocks":(\d+)/.exec(pruned.stderr())
      assert.ok(done !== null, 'the build finished')
      assert.ok(Number(done[1]) >= 2, `${done[1]} blocks indexed from their top-level fields`)
      // the transaction is the relay's (its recipient) and its sender's, but the value three calls deep is lost with the state
      const relayHistory = await rpcResult(pruned.url, 'ots_searchTransactionsBefore', [relay, 0, 25])
      assert.ok(relayHistory.txs.some((t) => t.hash === relayed))
      assert.deepEqual((await rpcResult(pruned.url, 'ots_searchTransactionsBefore', [RELAY_SINK, 0, 25])).txs, [])
      assert.deepEqual(await rpcResult(pruned.url, 'ots_getContractCreator', [relay]), { hash: (await rpcResult(pruned.url, 'eth_getBlockByNumber', ['0x1', false])).transactions[0], creator: chain.dev[0].address })
    } finally {
      await pruned.stop()
      rmSync(shallowDir, { recursive: true, force: true })
    }
  } finally {
    if (open) await chain.close()
    rmSync(chain.dir, { recursive: true, force: true })
  }
})
