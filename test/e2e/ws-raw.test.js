// eth_subscribe over a raw `ws` client against an in-process Keel node: payload shapes checked against the
// execution-apis schemas, subscribe/unsubscribe semantics and errors, notifications never ahead of the
// subscribe answer, connection limits, and connection/subscription counts back to zero (no leaks).

import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { ContractFactory, Interface, JsonRpcProvider, NonceManager, Wallet, id as topicOf } from 'ethers'
import { compile } from '../helpers/contracts.js'
import { DEV_ADDRESSES, DEV_KEYS } from '../helpers/node.js'
import { rpc, sleep, withTimeout } from '../helpers/rpc.js'
import { validateSchema } from '../helpers/schema.js'
import { RawWsClient, startInProcessNode } from '../helpers/ws.js'

const { Token } = compile()
const TRANSFER = topicOf('Transfer(address,address,uint256)')
const SUB_ID = /^0x[0-9a-f]{1,32}$/
const MAX_SUBSCRIPTIONS = 8
const MAX_CONNECTIONS_PER_IP = 40
const MESSAGE_LIMIT = 2048
const IDLE_SECONDS = 8

let node
let provider
const clients = []

async function connect() {
  const client = await RawWsClient.connect(node.wsUrl)
  clients.push(client)
  return client
}

/** Waits until the node's counts satisfy `predicate` (closing is asynchronous on both sides). */
async function statsUntil(predicate, what, ms = 5_000) {
  const deadline = Date.now() + ms
  for (;;) {
    const stats = node.wsStats()
    if (predicate(stats)) return stats
    if (Date.now() > deadline) assert.fail(`${what}: ${JSON.stringify(stats)}`)
    await sleep(25)
  }
}

before(async () => {
  node = await startInProcessNode({
    'block-time': '1',
    'ws-max-subscriptions': String(MAX_SUBSCRIPTIONS),
    'ws-max-connections-per-ip': String(MAX_CONNECTIONS_PER_IP),
    'ws-message-limit': String(MESSAGE_LIMIT),
    'ws-idle-timeout-seconds': String(IDLE_SECONDS),
  })
  provider = new JsonRpcProvider(node.url, undefined, { pollingInterval: 100, staticNetwork: true })
})

after(async () => {
  for (const client of clients) client.socket.terminate()
  provider?.destroy()
  await node?.close()
})

test('newHeads: one header per block, in order, shaped as the execution-apis Block minus its body', async () => {
  const ws = await connect()
  const id = await ws.call('eth_subscribe', ['newHeads'])
  assert.match(id, SUB_ID)
  await ws.until((c) => c.notifications(id).length >= 3, 10_000, 'three newHeads')
  const heads = ws.notifications(id)
  for (let i = 0; i < heads.length; i++) {
    const header = heads[i]
    for (const field of ['transactions', 'uncles', 'size', 'withdrawals']) assert.equal(field in header, false, field)
    // The Block schema forbids unknown fields: every header field must be one of its fields.
    validateSchema('Block', { ...header, size: '0x0', transactions: [], uncles: [] })
    if (i > 0) {
      assert.equal(BigInt(header.number), BigInt(heads[i - 1].number) + 1n, 'consecutive numbers')
      assert.equal(header.parentHash, heads[i - 1].hash)
    }
  }
  const block = await ws.call('eth_getBlockByNumber', [heads[0].number, false])
  assert.equal(block.hash, heads[0].hash)
  for (const [key, value] of Object.entries(heads[0])) assert.deepEqual(value, block[key], key)
  const raw = ws.frames.find((f) => f.method === 'eth_subscription')
  assert.deepEqual(Object.keys(raw), ['jsonrpc', 'method', 'params'])
  assert.deepEqual(Object.keys(raw.params), ['subscription', 'result'])
  assert.equal(raw.jsonrpc, '2.0')
  await ws.close()
})

test('logs: one notification per matching log, block and log order, equal to eth_getLogs', async () => {
  const wallet = new NonceManager(new Wallet(DEV_KEYS[0], provider))
  const token = await (await new ContractFactory(Token.abi, Token.bytecode, wallet).deploy()).waitForDeployment()
  const address = (await token.getAddress()).toLowerCase()
  const ws = await connect()
  const byAddress = await ws.call('eth_subscribe', ['logs', { address, topics: [TRANSFER] }])
  // Same criteria spelled differently: shares the filter group.
  const sameCriteria = await ws.call('eth_subscribe', ['logs', { address: [address.toUpperCase().replace('0X', '0x')], topics: [[TRANSFER], null] }])
  const other = await ws.call('eth_subscribe', ['logs', { address: DEV_ADDRESSES[9] }])
  const all = await ws.call('eth_subscribe', ['logs', {}])
  assert.equal(node.wsStats().subscriptions.logFilters, 3)

  const iface = new Interface(Token.abi)
  const sent = []
  for (let i = 1; i <= 6; i++) {
    sent.push(await wallet.sendTransaction({ to: address, data: iface.encodeFunctionData('transfer', [DEV_ADDRESSES[i % 5 + 1], BigInt(i)]) }))
  }
  const receipts = await Promise.all(sent.map((tx) => tx.wait()))
  const from = Math.min(...receipts.map((r) => r.blockNumber))
  const to = Math.max(...receipts.map((r) => r.blockNumber))
  await ws.until((c) => c.notifications(byAddress).length >= 6 && c.notifications(sameCriteria).length >= 6, 10_000, 'six logs')

  const expected = await rpc(node.url, 'eth_getLogs', [{ address, topics: [TRANSFER], fromBlock: `0x${from.toString(16)}`, toBlock: `0x${to.toString(16)}` }])
  const logs = ws.notifications(byAddress)
  assert.deepEqual(logs, expected.result)
  assert.deepEqual(ws.notifications(sameCriteria), expected.result)
  for (const log of logs) {
    validateSchema('Log', log)
    assert.equal(log.removed, false)
  }
  for (let i = 1; i < logs.length; i++) {
    const a = [BigInt(logs[i - 1].blockNumber), BigInt(logs[i - 1].logIndex)]
    const b = [BigInt(logs[i].blockNumber), BigInt(logs[i].logIndex)]
    assert.ok(a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]), 'block then log order')
  }
  assert.deepEqual(ws.notifications(other), [])
  assert.ok(ws.notifications(all).length >= 6)
  await ws.close()
  await statsUntil((s) => s.subscriptions.logFilters === 0, 'log filter groups dropped with the connection')
})

test('newPendingTransactions: hashes, and full objects with true; syncing answers false', async () => {
  const ws = await connect()
  const hashes = await ws.call('eth_subscribe', ['newPendingTransactions'])
  const full = await ws.call('eth_subscribe', ['newPendingTransactions', true])
  const syncing = await ws.call('eth_subscribe', ['syncing'])
  const wallet = new Wallet(DEV_KEYS[2], provider)
  const tx = await wallet.sendTransaction({ to: DEV_ADDRESSES[3], value: 5n })
  await ws.until((c) => c.notifications(hashes).includes(tx.hash) && c.notifications(full).some((t) => t.hash === tx.hash), 10_000, 'pending tx')
  const object = ws.notifications(full).find((t) => t.hash === tx.hash)
  assert.equal(object.from.toLowerCase(), wallet.address.toLowerCase())
  assert.equal(object.to.toLowerCase(), DEV_ADDRESSES[3].toLowerCase())
  assert.equal(BigInt(object.value), 5n)
  assert.deepEqual(ws.notifications(syncing), [false])
  await ws.close()
})

test('eth_unsubscribe answers true once, then "subscription not found"; only the owner may unsubscribe', async () => {
  const ws = await connect()
  const stranger = await connect()
  const id = await ws.call('eth_subscribe', ['newHeads'])
  const notFound = await stranger.request('eth_unsubscribe', [id])
  assert.deepEqual(notFound.error, { code: -32000, message: 'subscription not found' })
  assert.equal(await ws.call('eth_unsubscribe', [id]), true)
  const again = await ws.request('eth_unsubscribe', [id])
  assert.deepEqual(again.error, { code: -32000, message: 'subscription not found' })
  const count = ws.notifications(id).length
  const head = await ws.call('eth_blockNumber')
  await withTimeout(
    (async () => {
      while ((await ws.call('eth_blockNumber')) === head) await sleep(100)
    })(),
    5_000,
    'next block',
  )
  await sleep(200)
  assert.equal(ws.notifications(id).length, count, 'no notification after unsubscribe')
  await ws.close()
  await stranger.close()
})

test('errors: unknown kind, bad arguments, eth_subscribe over HTTP', async () => {
  const ws = await connect()
  assert.deepEqual((await ws.request('eth_subscribe', ['newBlocks'])).error, {
    code: -32601,
    message: 'no "newBlocks" subscription in eth namespace',
  })
  assert.equal((await ws.request('eth_subscribe', [])).error.code, -32602)
  assert.equal((await ws.request('eth_subscribe', [42])).error.code, -32602)
  assert.equal((await ws.request('eth_subscribe', ['logs', { topics: 'x' }])).error.code, -32602)
  assert.equal((await ws.request('eth_subscribe', ['newPendingTransactions', 'yes'])).error.code, -32602)
  const overHttp = await rpc(node.url, 'eth_subscribe', ['newHeads'])
  assert.deepEqual(overHttp.error, { code: -32601, message: 'notifications not supported' })
  await ws.close()
})

test('no notification reaches the client before the subscribe answer, also inside a batch', async () => {
  const ws = await connect()
  // syncing notifies at once; the batch answer waits for the slower eth_getLogs / eth_getBalance calls.
  for (let round = 0; round < 20; round++) {
    ws.sendRaw(
      JSON.stringify([
        { jsonrpc: '2.0', id: `s${round}`, method: 'eth_subscribe', params: ['syncing'] },
        { jsonrpc: '2.0', id: `h${round}`, method: 'eth_subscribe', params: ['newHeads'] },
        { jsonrpc: '2.0', id: `l${round}`, method: 'eth_getLogs', params: [{ fromBlock: '0x0', toBlock: 'latest' }] },
        { jsonrpc: '2.0', id: `b${round}`, method: 'eth_getBalance', params: [DEV_ADDRESSES[0], 'latest'] },
      ]),
    )
    await ws.until((c) => c.frames.some((f) => Array.isArray(f) && f[0].id === `s${round}`), 5_000, 'batch answer')
    const batch = ws.frames.findIndex((f) => Array.isArray(f) && f[0].id === `s${round}`)
    const [syncing, heads] = ws.frames[batch]
    await ws.call('eth_unsubscribe', [heads.result])
    const frameOf = (id) => ws.frames.findIndex((f) => f.method === 'eth_subscription' && f.params.subscription === id)
    await ws.until(() => frameOf(syncing.result) >= 0, 5_000, 'syncing notification')
    assert.ok(frameOf(syncing.result) > batch, 'syncing notification after the batch answer')
    const firstHead = frameOf(heads.result)
    if (firstHead >= 0) assert.ok(firstHead > batch, 'newHeads after the batch answer')
    await ws.call('eth_unsubscribe', [syncing.result])
  }
  assert.equal(node.wsStats().subscriptions.awaitingAnswer, 0)
  await ws.close()
})

test('limits: subscriptions per connection, message size', async () => {
  const ws = await connect()
  for (let i = 0; i < MAX_SUBSCRIPTIONS; i++) await ws.call('eth_subscribe', ['newHeads'])
  const refused = await ws.request('eth_subscribe', ['newHeads'])
  assert.equal(refused.error.code, -32000)
  assert.match(refused.error.message, /too many subscriptions.*limit 8/)
  // Other calls keep working on the same connection.
  assert.equal(await ws.call('eth_chainId'), '0x600d')

  const big = await connect()
  big.sendRaw(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: ['x'.repeat(MESSAGE_LIMIT + 100)] }))
  const closed = await withTimeout(big.closed, 5_000, 'oversized message closes the socket')
  assert.equal(closed.code, 1009)
  assert.match(closed.reason, /message too big/)
  await ws.close()
})

test('limits: connections per client address are refused with HTTP 429 past the quota', async () => {
  const extra = []
  const before = node.wsStats().transport.refusedPerIp
  let refusal
  for (let i = 0; i <= MAX_CONNECTIONS_PER_IP && refusal === undefined; i++) {
    try {
      extra.push(await connect())
    } catch (err) {
      refusal = err
    }
  }
  assert.equal(refusal?.statusCode, 429)
  assert.equal(node.wsStats().transport.open, MAX_CONNECTIONS_PER_IP)
  assert.equal(node.wsStats().transport.refusedPerIp, before + 1)
  await extra.pop().close()
  await statsUntil((s) => s.transport.open < MAX_CONNECTIONS_PER_IP, 'a slot frees up')
  extra.push(await connect())
  await Promise.all(extra.map((c) => c.close()))
})

test('a filter made on one WS connection is polled from another one and over HTTP', async () => {
  const a = await connect()
  const b = await connect()
  const filter = await a.call('eth_newBlockFilter')
  const head = BigInt(await a.call('eth_blockNumber'))
  await withTimeout(
    (async () => {
      while (BigInt(await b.call('eth_blockNumber')) < head + 1n) await sleep(100)
    })(),
    5_000,
    'next block',
  )
  const fromB = await b.call('eth_getFilterChanges', [filter])
  assert.ok(fromB.length >= 1)
  const overHttp = await rpc(node.url, 'eth_getFilterChanges', [filter])
  assert.ok(Array.isArray(overHttp.result))
  await a.close()
  assert.equal(await b.call('eth_uninstallFilter', [filter]), true, 'filters outlive the connection that made them')
  await b.close()
})

test('idle timeout: a client that answers no pings is closed, a live one stays', { timeout: 40_000 }, async () => {
  const live = await connect()
  const silent = await connect()
  await statsUntil((s) => s.transport.open === 2, 'earlier connections gone')
  silent.socket._socket.pause()
  const started = Date.now()
  await statsUntil((s) => s.transport.open === 1, 'silent client closed', (IDLE_SECONDS + 12) * 1000)
  const elapsed = (Date.now() - started) / 1000
  // uWS counts idle time in 4-second steps from the last frame.
  assert.ok(elapsed >= IDLE_SECONDS - 6, `closed after ${elapsed}s`)
  // The live client sends nothing either, but answers pings: it outlives the idle timeout.
  const liveSince = started
  while (Date.now() - liveSince < (IDLE_SECONDS + 6) * 1000) await sleep(250)
  assert.equal(live.socket.readyState, 1)
  assert.equal(await live.call('eth_chainId'), '0x600d', 'the live client is still served')
  silent.socket.terminate()
  await live.close()
})

test('nothing leaks: counts return to zero when connections end, gracefully or not', async () => {
  const many = []
  for (let i = 0; i < 20; i++) {
    const c = await connect()
    await c.call('eth_subscribe', ['newHeads'])
    await c.call('eth_subscribe', ['logs', { address: DEV_ADDRESSES[i % 3] }])
    await c.call('eth_subscribe', ['newPendingTransactions', i % 2 === 0])
    many.push(c)
  }
  const during = node.wsStats()
  assert.ok(during.subscriptions.subscriptions >= 60)
  assert.equal(during.subscriptions.logFilters >= 3, true)
  for (let i = 0; i < many.length; i++) {
    if (i % 2 === 0) many[i].socket.terminate()
    else await many[i].close()
  }
  for (const c of clients) if (c.socket.readyState <= 1) c.socket.terminate()
  const stats = await statsUntil(
    (s) => s.transport.open === 0 && s.subscriptions.subscriptions === 0,
    'every connection and subscription gone',
  )
  assert.deepEqual(stats.subscriptions, {
    connections: 0,
    subscriptions: 0,
    newHeads: 0,
    logs: 0,
    logFilters: 0,
    newPendingTransactions: 0,
    syncing: 0,
    awaitingAnswer: 0,
  })
})
