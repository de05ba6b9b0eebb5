// Through a running node: a runaway eth_call answers geth's timeout error, methods that need no EVM
// answer at once while the call pool is saturated, and a long call does not hold up the calls behind it.

import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { startNode, DEV_ADDRESSES } from '../helpers/node.js'
import { rpc } from '../helpers/rpc.js'
import { scrape, value } from '../helpers/prom.js'

const LOOPER = '0x00000000000000000000000000000000000100f1'
const loopCall = (id) => [{ to: LOOPER, data: `0x${id.toString(16).padStart(8, '0')}` }, 'latest', { [LOOPER]: { code: '0x5b6020600020505b600056' } }]

let node
before(async () => {
  node = await startNode({ args: ['--call-workers', '1', '--rpc-evm-timeout-ms', '400'] })
})
after(async () => {
  await node?.stop()
})

test('reads answer quickly while the pool is saturated; runaway calls get the timeout error', async () => {
  await rpc(node.url, 'eth_blockNumber')
  // One worker, four calls that each run until the 400 ms timeout: the pool stays busy for ~1.6 s.
  let settled = 0
  const slow = Array.from({ length: 4 }, (_, i) => rpc(node.url, 'eth_call', loopCall(i)).finally(() => settled++))
  await new Promise((resolve) => setTimeout(resolve, 50))
  for (let i = 0; i < 5; i++) {
    const [bn, bal] = await Promise.all([rpc(node.url, 'eth_blockNumber'), rpc(node.url, 'eth_getBalance', [DEV_ADDRESSES[0], 'latest'])])
    assert.match(bn.result, /^0x[0-9a-f]+$/)
    assert.match(bal.result, /^0x[0-9a-f]+$/)
  }
  // the reads did not queue behind the pool: they were all answered while runaway calls still ran
  assert.ok(settled < 4, `reads were answered only after ${settled} of 4 pool calls had finished`)
  const answers = await Promise.all(slow)
  for (const a of answers) assert.deepEqual(a.error, { code: -32000, message: 'execution aborted (timeout = 400ms)' })
  const fine = await rpc(node.url, 'eth_estimateGas', [{ from: DEV_ADDRESSES[0], to: LOOPER, value: '0x1' }])
  assert.equal(fine.result, '0x5208')
})

test('a long eth_call does not hold up other eth_calls: they move to a burst worker', async () => {
  // one worker, and a call that runs until its 4 s limit (the gas cap is out of its reach)
  const slowNode = await startNode({ args: ['--call-workers', '1', '--rpc-evm-timeout-ms', '4000', '--rpc-gas-cap', '10000000000'] })
  try {
    await rpc(slowNode.url, 'eth_call', loopCall(100).slice(0, 1).concat(['latest'])).catch(() => {}) // the worker is up
    const startedAt = Date.now()
    let runawayAnsweredAt = 0
    const runaway = rpc(slowNode.url, 'eth_call', loopCall(101)).then((a) => {
      runawayAnsweredAt = Date.now()
      return a
    })
    await new Promise((resolve) => setTimeout(resolve, 50))
    const answers = await Promise.all(Array.from({ length: 3 }, () => rpc(slowNode.url, 'eth_getBalance', [DEV_ADDRESSES[0], 'latest']).then(() =>
      rpc(slowNode.url, 'eth_estimateGas', [{ from: DEV_ADDRESSES[0], to: DEV_ADDRESSES[1], value: '0x1' }]))))
    const answeredAt = Date.now()
    for (const a of answers) assert.equal(a.result, '0x5208')
    assert.equal(runawayAnsweredAt, 0, `the other calls were answered only after the long one (${answeredAt - startedAt} ms)`)
    const metrics = await scrape(slowNode.metricsUrl)
    assert.equal(value(metrics, 'keel_call_pool_bursts_total'), 1)
    assert.equal(value(metrics, 'keel_call_pool_workers'), 2, 'the burst worker runs beside the long call')
    assert.deepEqual((await runaway).error, { code: -32000, message: 'execution aborted (timeout = 4s)' })
  } finally {
    await slowNode.stop()
  }
})

test('a client whose eth_calls run long gets a lane of its own: they run on one worker at a time, and other clients keep being answered', async () => {
  // one worker; loops that run out of a 25M gas cap (~1.3 s here); clients told apart by X-Forwarded-For
  // from a trusted proxy (the rate limiter on, so the node reads client addresses)
  const laneNode = await startNode({
    args: ['--call-workers', '1', '--rpc-gas-cap', '25000000', '--rate-limit', '1000000', '--trusted-proxies', '127.0.0.1/32', '--rate-limit-allow-list', '198.51.100.9/32=0,key:ops=0'],
  })
  const post = (clientIp, method, params, headers = {}) =>
    fetch(laneNode.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': clientIp, ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    }).then((r) => r.json())
  // each estimate its own (none answered from the result cache)
  let amount = 0
  const estimate = () => post('198.51.100.8', 'eth_estimateGas', [{ from: DEV_ADDRESSES[0], to: DEV_ADDRESSES[1], value: `0x${(++amount).toString(16)}` }])
  try {
    assert.equal((await estimate()).result, '0x5208') // the worker is up
    const startedAt = Date.now()
    const endedAt = []
    const heavy = Array.from({ length: 3 }, (_, i) => post('198.51.100.7', 'eth_call', loopCall(200 + i)).then((a) => {
      endedAt.push(Date.now())
      return a
    }))
    await new Promise((resolve) => setTimeout(resolve, 400))
    const answers = await Promise.all(Array.from({ length: 3 }, estimate))
    for (const a of answers) assert.equal(a.result, '0x5208')
    assert.equal(endedAt.length, 0, `another client's calls were answered only after the first long call (${Date.now() - startedAt} ms)`)
    assert.equal(value(await scrape(laneNode.metricsUrl), 'keel_call_pool_heavy_clients'), 1)
    // the client's next call waits in its lane, behind its long ones; the same call from another client
    // shares it (the result cache), which takes it out of the lane; both name one block, so that a new
    // head between the two requests cannot make them two different calls
    const { result: head } = await post('198.51.100.8', 'eth_blockNumber', [])
    const shared = [{ from: DEV_ADDRESSES[0], to: DEV_ADDRESSES[2], value: '0x123456' }, head]
    const inLane = post('198.51.100.7', 'eth_estimateGas', shared)
    await new Promise((resolve) => setTimeout(resolve, 50))
    assert.equal((await post('198.51.100.8', 'eth_estimateGas', shared)).result, '0x5208')
    assert.equal(endedAt.length, 0, 'a call shared with another client was answered only after the long calls of the first one')
    assert.equal((await inLane).result, '0x5208')
    // while the client's calls run one after the other, the other client's are answered on the other thread
    // between the waves only the client's calls run: on one worker at a time
    const waves = []
    let busiest = 0
    for (let wave = 0; wave < 100 && endedAt.length < 3; wave++) {
      const sentAt = Date.now()
      for (const a of await Promise.all(Array.from({ length: 3 }, estimate))) assert.equal(a.result, '0x5208')
      waves.push(Date.now() - sentAt)
      await new Promise((resolve) => setTimeout(resolve, 100))
      busiest = Math.max(busiest, value(await scrape(laneNode.metricsUrl), 'keel_call_pool_busy_workers'))
    }
    for (const a of await Promise.all(heavy)) assert.deepEqual(a.error, { code: -32000, message: 'out of gas' })
    const first = endedAt[0] - startedAt
    assert.ok(waves.length >= 5, `only ${waves.length} waves ran`)
    assert.ok(Math.max(...waves) < first / 2, `a wave of calls waited ${Math.max(...waves)} ms (a long call took ${first} ms)`)
    assert.equal(busiest, 1, 'the client\'s calls ran on two workers at once')
    // an allow-listed address (the operator's own service) gets no lane for its long call, nor does a
    // request with an allow-listed API key from any address
    const trusted = post('198.51.100.9', 'eth_call', loopCall(300))
    const keyed = post('198.51.100.5', 'eth_call', loopCall(301), { 'x-api-key': 'ops' })
    await new Promise((resolve) => setTimeout(resolve, 500))
    assert.equal(value(await scrape(laneNode.metricsUrl), 'keel_call_pool_heavy_clients'), 1, 'an allow-listed client got a lane')
    assert.deepEqual((await trusted).error, { code: -32000, message: 'out of gas' })
    assert.deepEqual((await keyed).error, { code: -32000, message: 'out of gas' })
  } finally {
    await laneNode.stop()
  }
})
