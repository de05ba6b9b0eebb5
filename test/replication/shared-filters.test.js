// Polling filters shared in Redis (--redis-url) across a producer and two replicas: a filter made through
// one node is polled through any of them, each change handed out once; ethers v5 polling through a
// round-robin HAProxy; Redis killed and restarted empty.

import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { ContractFactory, Contract, JsonRpcProvider, NonceManager, Wallet } from 'ethers'
import { ethers as ethers5 } from 'ethers5'
import { createPublicClient, http } from 'viem'
import { RedisFilterStore } from '../../dist/shared/redis-filters.js'
import { compile } from '../helpers/contracts.js'
import { startHaproxy } from '../helpers/haproxy.js'
import { startNats } from '../helpers/nats.js'
import { CHAIN_ID, DEV_ADDRESSES, DEV_KEYS } from '../helpers/node.js'
import { scrape, total, value } from '../helpers/prom.js'
import { startRedis } from '../helpers/redis.js'
import { startProducer, startReplica, waitForHead, writeGenesis } from '../helpers/replication.js'
import { rpc, rpcResult, sleep, withTimeout } from '../helpers/rpc.js'
import { keelChain } from '../helpers/viem.js'

const { Token } = compile()

let nats, redis, producer, replicas, nodes, lb, provider, token, erc20

before(async () => {
  nats = await startNats()
  redis = await startRedis()
  const args = ['--redis-url', redis.url]
  // automine: a block per transfer, so blocks arrive as fast as the test sends
  producer = await startProducer(nats, writeGenesis(), { blockTime: 0, args })
  replicas = await Promise.all([startReplica(nats, producer, { args }), startReplica(nats, producer, { args })])
  nodes = [producer, ...replicas]
  lb = await startHaproxy(nodes)
  provider = new JsonRpcProvider(producer.url, CHAIN_ID, { staticNetwork: true, pollingInterval: 100 })
  const deployer = new NonceManager(new Wallet(DEV_KEYS[0], provider))
  const contract = await new ContractFactory(Token.abi, Token.bytecode, deployer).deploy()
  await withTimeout(contract.waitForDeployment(), 30_000, 'token deployment')
  token = await contract.getAddress()
  erc20 = new Contract(token, Token.abi, deployer)
})

after(async () => {
  provider?.destroy()
  await lb?.stop()
  await Promise.all((replicas ?? []).map((r) => r.stop()))
  await producer?.stop()
  await nats?.close()
  await redis?.close()
})

/** Every node at the producer's head (no transaction in flight): filters made now start at the same block. */
async function settled() {
  const head = BigInt(await rpcResult(producer.url, 'eth_blockNumber'))
  for (const node of replicas) await waitForHead(node.url, head)
  return head
}

/** `count` token transfers, each mined in a block of its own; their receipts. */
async function transfers(count) {
  const receipts = []
  for (let i = 0; i < count; i++) {
    const tx = await erc20.transfer(DEV_ADDRESSES[1 + (i % 5)], BigInt(i + 1))
    receipts.push(await withTimeout(tx.wait(), 30_000, `transfer ${i}`))
  }
  return receipts
}

async function blockHashes(from, to) {
  const hashes = []
  for (let n = from; n <= to; n++) hashes.push((await rpcResult(producer.url, 'eth_getBlockByNumber', [`0x${n.toString(16)}`, false])).hash)
  return hashes
}

/** eth_newFilter calls on all nodes, and eth_getFilterChanges calls answered per node. */
async function filterCalls() {
  const scrapes = await Promise.all(nodes.map((node) => scrape(node.metricsUrl)))
  return {
    made: scrapes.reduce((sum, m) => sum + total(m, 'keel_rpc_requests_total', { method: 'eth_newFilter', outcome: 'ok' }), 0),
    changes: scrapes.map((m) => total(m, 'keel_rpc_requests_total', { method: 'eth_getFilterChanges', outcome: 'ok' })),
  }
}

const logKey = (log) => `${BigInt(log.blockNumber)}:${BigInt(log.logIndex)}:${log.transactionHash}`

test('a block filter and a log filter made through one node, polled in turn through all three while blocks arrive: every block and log once, in order', async () => {
  const start = await settled()
  const blockFilter = await rpcResult(producer.url, 'eth_newBlockFilter')
  const logFilter = await rpcResult(replicas[0].url, 'eth_newFilter', [{ address: token }])
  const seenBlocks = []
  const seenLogs = []
  let sending = true
  let polls = 0
  const poller = (async () => {
    // polls continue until the sender is done and a full round through every node brings nothing new
    for (let quiet = 0; sending || quiet < nodes.length * 2; polls++) {
      const node = nodes[polls % nodes.length]
      const [blocks, logs] = await Promise.all([
        rpcResult(node.url, 'eth_getFilterChanges', [blockFilter]),
        rpcResult(node.url, 'eth_getFilterChanges', [logFilter]),
      ])
      seenBlocks.push(...blocks)
      seenLogs.push(...logs)
      quiet = blocks.length + logs.length === 0 && !sending ? quiet + 1 : 0
      if (!sending) await settled()
      await sleep(20)
    }
  })()
  await transfers(12)
  sending = false
  await withTimeout(poller, 30_000, 'polling')
  const head = await settled()
  assert.ok(head >= start + 12n)
  assert.deepEqual(seenBlocks, await blockHashes(start + 1n, head), 'each block hash once, in order, no gap')
  const expected = await rpcResult(producer.url, 'eth_getLogs', [{ address: token, fromBlock: `0x${(start + 1n).toString(16)}`, toBlock: `0x${head.toString(16)}` }])
  assert.equal(expected.length, 12)
  assert.deepEqual(seenLogs.map(logKey), expected.map(logKey), 'each log once, in order')
  assert.deepEqual(seenLogs, expected)
  assert.ok(polls >= 6, `polled through every node (${polls} polls)`)
})

test('pollers on three nodes at once share one cursor: together they see each block once', async () => {
  const start = await settled()
  const filter = await rpcResult(replicas[1].url, 'eth_newBlockFilter')
  const seen = nodes.map(() => [])
  let sending = true
  const pollers = nodes.map(async (node, i) => {
    for (let quiet = 0; sending || quiet < 3; ) {
      const hashes = await rpcResult(node.url, 'eth_getFilterChanges', [filter])
      seen[i].push(...hashes)
      quiet = hashes.length === 0 && !sending ? quiet + 1 : 0
      if (!sending) await settled()
      await sleep(5)
    }
  })
  await transfers(10)
  sending = false
  await withTimeout(Promise.all(pollers), 30_000, 'pollers')
  const head = await settled()
  const expected = await blockHashes(start + 1n, head)
  const all = seen.flat()
  assert.equal(new Set(all).size, all.length, 'no block hash twice')
  assert.deepEqual(new Set(all), new Set(expected), 'every block hash')
  // each poller's own answers keep the chain's order
  for (const got of seen) assert.deepEqual(got, expected.filter((h) => got.includes(h)))
})

test('a pending-transaction filter sees every transaction the producer admits, whichever node is polled', async () => {
  await settled()
  const filter = await rpcResult(replicas[0].url, 'eth_newPendingTransactionFilter')
  const sent = (await transfers(8)).map((r) => r.hash)
  const seen = []
  const deadline = Date.now() + 10_000
  for (let i = 0; seen.length < sent.length && Date.now() < deadline; i++) {
    seen.push(...(await rpcResult(nodes[i % 3].url, 'eth_getFilterChanges', [filter])))
    await sleep(50)
  }
  assert.deepEqual(seen, sent, 'each admitted hash once, in admission order')
  for (const node of nodes) assert.deepEqual(await rpcResult(node.url, 'eth_getFilterChanges', [filter]), [])
})

test('eth_getFilterLogs and eth_uninstallFilter from any node', async () => {
  const head = await settled()
  const filter = await rpcResult(producer.url, 'eth_newFilter', [{ address: token, fromBlock: '0x1' }])
  const all = await rpcResult(producer.url, 'eth_getLogs', [{ address: token, fromBlock: '0x1', toBlock: `0x${head.toString(16)}` }])
  assert.ok(all.length >= 30)
  for (const node of replicas) assert.deepEqual(await rpcResult(node.url, 'eth_getFilterLogs', [filter]), all)
  assert.equal(await rpcResult(replicas[1].url, 'eth_uninstallFilter', [filter]), true)
  for (const node of nodes) {
    const answer = await rpc(node.url, 'eth_getFilterChanges', [filter])
    assert.deepEqual(answer.error, { code: -32000, message: 'filter not found' })
  }
  assert.equal(await rpcResult(producer.url, 'eth_uninstallFilter', [filter]), false)
})

test('ethers v5 over HTTP through a round-robin HAProxy: every block and every pending transaction', async () => {
  const v5 = new ethers5.providers.StaticJsonRpcProvider(lb.url, { chainId: CHAIN_ID, name: 'keel' })
  v5.pollingInterval = 100
  const blocks = []
  const pending = []
  try {
    const start = Number(await settled())
    v5.on('block', (n) => blocks.push(n))
    v5.on('pending', (tx) => pending.push(tx?.hash))
    // both pollers running before the first transfer
    const deadline = Date.now() + 10_000
    while (blocks.length === 0 && Date.now() < deadline) await sleep(50)
    await sleep(500)
    const sent = (await transfers(6)).map((r) => r.hash)
    const head = Number(await settled())
    const until = Date.now() + 10_000
    while ((blocks.at(-1) !== head || pending.length < sent.length) && Date.now() < until) await sleep(50)
    assert.deepEqual(blocks, Array.from({ length: head - start + 1 }, (_, i) => start + i), 'every block number once, in order')
    assert.deepEqual(pending, sent, 'every pending transaction once')
  } finally {
    v5.removeAllListeners()
    v5.polling = false
  }
})

test('viem watchContractEvent and ethers v6 contract.on over HTTP through the load balancer: every Transfer once (eth_newFilter polled through any node)', async () => {
  await settled()
  const polledBefore = await filterCalls()
  const viemLogs = []
  const client = createPublicClient({ chain: keelChain(lb.url), transport: http(lb.url), pollingInterval: 100 })
  const unwatch = client.watchContractEvent({ address: token, abi: Token.abi, eventName: 'Transfer', onLogs: (logs) => viemLogs.push(...logs) })
  const v6 = new JsonRpcProvider(lb.url, CHAIN_ID, { staticNetwork: true, pollingInterval: 100 })
  const ethersLogs = []
  const watched = new Contract(token, Token.abi, v6)
  await watched.on('Transfer', (...args) => ethersLogs.push(args.at(-1).log))
  try {
    // both filters installed before the first transfer
    await sleep(1000)
    const receipts = await transfers(6)
    const sent = receipts.map((r) => r.hash)
    const deadline = Date.now() + 15_000
    while ((viemLogs.length < sent.length || ethersLogs.length < sent.length) && Date.now() < deadline) await sleep(50)
    await sleep(500)
    assert.deepEqual(viemLogs.map((l) => l.transactionHash), sent, 'viem: each Transfer once, in order')
    assert.deepEqual(ethersLogs.map((l) => l.transactionHash), sent, 'ethers: each Transfer once, in order')
    // they did poll filters, and through every node
    const polled = await filterCalls()
    assert.ok(polled.made - polledBefore.made >= 2, `eth_newFilter calls: ${polled.made - polledBefore.made}`)
    for (let i = 0; i < nodes.length; i++) assert.ok(polled.changes[i] > polledBefore.changes[i], `eth_getFilterChanges answered by node ${i}`)
  } finally {
    unwatch()
    await watched.removeAllListeners()
    v6.destroy()
  }
})

describe('Redis down, then restarted empty', () => {
  test('shared filters answer "filter not found", new ones live on their node, other calls go on; then filters are shared again', async () => {
    await settled()
    const shared = await rpcResult(producer.url, 'eth_newBlockFilter')
    assert.deepEqual(await rpcResult(replicas[0].url, 'eth_getFilterChanges', [shared]), [])
    await redis.stop()
    for (const node of nodes) {
      const answer = await rpc(node.url, 'eth_getFilterChanges', [shared])
      assert.deepEqual(answer.error, { code: -32000, message: 'filter not found' })
    }
    // a filter made now is kept by the node that made it
    const local = await rpcResult(replicas[0].url, 'eth_newBlockFilter')
    const [receipt] = await transfers(1)
    await settled()
    assert.deepEqual(await rpcResult(replicas[0].url, 'eth_getFilterChanges', [local]), [receipt.blockHash])
    assert.equal((await rpc(producer.url, 'eth_getFilterChanges', [local])).error?.message, 'filter not found')
    for (const node of nodes) {
      assert.equal(BigInt(await rpcResult(node.url, 'eth_blockNumber')), BigInt(receipt.blockNumber))
      const m = await scrape(node.metricsUrl)
      assert.equal(value(m, 'keel_filters_redis_unavailable'), 1)
      assert.ok(value(m, 'keel_filters_redis_failures_total') >= 1)
    }
    assert.equal(value(await scrape(replicas[0].metricsUrl), 'keel_filters_local'), 1)

    await redis.start()
    // the nodes reconnect within a second or so; the first filter made in Redis is valid on every node
    let again
    const deadline = Date.now() + 15_000
    while (Date.now() < deadline) {
      const id = await rpcResult(producer.url, 'eth_newBlockFilter')
      if ((await rpc(replicas[1].url, 'eth_getFilterChanges', [id])).result !== undefined) {
        again = id
        break
      }
      await sleep(200)
    }
    assert.ok(again !== undefined, 'a filter shared again after Redis came back')
    // Redis came back empty: the filter of before the outage is gone; the node-local one still works
    assert.equal((await rpc(replicas[1].url, 'eth_getFilterChanges', [shared])).error?.message, 'filter not found')
    const [next] = await transfers(1)
    await settled()
    assert.deepEqual(await rpcResult(replicas[0].url, 'eth_getFilterChanges', [again]), [next.blockHash])
    assert.deepEqual(await rpcResult(replicas[0].url, 'eth_getFilterChanges', [local]), [next.blockHash])
    assert.equal(value(await scrape(replicas[1].metricsUrl), 'keel_filters_redis_unavailable'), 0)
    assert.match(producer.stderr() + producer.stdout(), /filters: Redis unavailable/)
    const warnings = (producer.stderr() + producer.stdout()).match(/filters: Redis unavailable/g)
    assert.equal(warnings.length, 1, 'logged once per outage')
  })
})

test('a filter not polled for the timeout expires in Redis; each poll pushes the expiry back', async () => {
  const store = new RedisFilterStore(redis.url, CHAIN_ID, 1000)
  try {
    await store.connect(1000)
    await store.install('0xabc', 'blocks', '', 5n, 400)
    for (let i = 0; i < 4; i++) {
      await sleep(200)
      assert.deepEqual(await store.poll('0xabc', 5n + BigInt(i), 400), { kind: 'blocks', spec: '', after: 5n + BigInt(Math.max(0, i - 1)), upTo: 5n + BigInt(i) })
    }
    await sleep(600)
    assert.equal(await store.poll('0xabc', 10n, 400), undefined)
    assert.equal(await store.read('0xabc', 400), undefined)
  } finally {
    await store.close()
  }
})
