// Rate limits shared through Redis (--redis-url): batches charged call by call (unit), two limiters on
// one Redis (unit), then two nodes behind one "load balancer" (the test, naming the client with
// X-Forwarded-For): one flooding client gets the one rate through both, another keeps being served, and
// with Redis killed the nodes limit alone at rate / N, then rejoin a Redis restarted empty.

import assert from 'node:assert/strict'
import http from 'node:http'
import { after, before, describe, it } from 'node:test'
import { RateLimiter } from '../../dist/rpc/ratelimit.js'
import { SharedRateLimiter } from '../../dist/rpc/shared-ratelimit.js'
import { RedisBucketStore } from '../../dist/shared/redis-buckets.js'
import { startNode } from '../helpers/node.js'
import { scrape, total, value } from '../helpers/prom.js'
import { startRedis } from '../helpers/redis.js'
import { call, request } from './http-client.js'

const RATE = 40
const BURST = 40
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

describe('batches are charged call by call', () => {
  it('serves the calls the bucket covers, in order, and never buys more than the burst', () => {
    const c = { t: 1_000_000 }
    const limiter = new RateLimiter({ policy: { rate: 10, burst: 20 }, now: () => c.t })
    const ip = { clientIp: '10.3.0.1' }
    assert.deepEqual(limiter.takeEach(ip, [5, 5, 5, 5, 5, 1]), { served: 4, retryAfter: 1 })
    // the bucket is empty, not in debt: one token is back after 0.1 s
    c.t += 100
    assert.equal(limiter.take(ip, 1), 0)
    // a call dearer than the burst is still served from a full bucket, alone
    const other = { clientIp: '10.3.0.2' }
    // 20 - 50 = -30: the next call waits for 31 tokens at 10/s
    assert.deepEqual(limiter.takeEach(other, [50, 1]), { served: 1, retryAfter: 4 })
  })
})

describe('limiters on one Redis', () => {
  let redis
  before(async () => {
    redis = await startRedis()
  })
  after(async () => redis?.close())

  it('two spend one bucket, lease in chunks and block a client Redis says is empty', async () => {
    const make = () => new SharedRateLimiter({ policy: { rate: 10, burst: 20 }, store: new RedisBucketStore(redis.url), nodes: 2 })
    const a = make()
    const b = make()
    await Promise.all([a.start(), b.start()])
    try {
      const ip = { clientIp: '10.4.0.1' }
      // the first call leases 2 tokens (a tenth of the burst), the second is local
      assert.equal(await a.take(ip, 1), 0)
      assert.equal(a.take(ip, 1), 0, 'served from the lease without a round trip')
      assert.deepEqual(await b.takeEach(ip, Array(30).fill(1)), { served: 18, retryAfter: 1 })
      assert.ok((await a.take(ip, 1)) >= 1, 'the other limiter sees the bucket empty')
      assert.ok(a.take(ip, 1) >= 1, 'and refuses locally until it could have refilled')
      assert.equal(await a.take({ clientIp: '10.4.0.2' }, 1), 0, 'another client has its own bucket')
      assert.equal(a.inFallback, false)
    } finally {
      await Promise.all([a.close(), b.close()])
    }
  })

  it('a Redis that stops answering is left after the command timeout for the local fallback at rate / N, and rejoined once it answers', async () => {
    const limiter = new SharedRateLimiter({ policy: { rate: 10, burst: 20 }, store: new RedisBucketStore(redis.url), nodes: 4, probeIntervalMs: 50 })
    const events = []
    limiter.on({ fallback: (active) => events.push(active) })
    await limiter.start()
    try {
      assert.equal(await limiter.take({ clientIp: '10.6.0.1' }, 1), 0)
      redis.pause()
      const started = performance.now()
      // a new client needs a round trip: it times out and the fallback (burst 20 / 4 = 5) decides
      assert.deepEqual(await limiter.takeEach({ clientIp: '10.6.0.2' }, Array(8).fill(1)), { served: 5, retryAfter: 1 })
      assert.ok(performance.now() - started < 1000, 'decided after the command timeout, not the TCP one')
      assert.equal(limiter.inFallback, true)
      assert.equal(limiter.take({ clientIp: '10.6.0.2' }, 1), 1, 'decided locally, at once')
      redis.resume()
      const deadline = Date.now() + 5000
      while (limiter.inFallback && Date.now() < deadline) await sleep(20)
      assert.equal(limiter.inFallback, false)
      assert.deepEqual(events, [true, false], 'one event each way')
      assert.equal(await limiter.take({ clientIp: '10.6.0.3' }, 1), 0)
    } finally {
      redis.resume()
      await limiter.close()
    }
  })
})

describe('two nodes sharing one Redis', () => {
  let redis
  let nodes
  before(async () => {
    redis = await startRedis()
    // a generous timeout: a loaded test machine must not look like a slow Redis (the unit test above covers that)
    const args = ['--redis-url', redis.url, '--redis-timeout-ms', '1000', '--rate-limit', String(RATE), '--rate-burst', String(BURST), '--rate-limit-nodes', '2', '--trusted-proxies', '127.0.0.1/32']
    nodes = await Promise.all([startNode({ args }), startNode({ args })])
  })
  after(async () => {
    await Promise.all((nodes ?? []).map((n) => n.stop()))
    await redis?.close()
  })

  /** Floods from `ip` through both nodes until `until()`; counts answers, any other than 200 / 429 -32005 fails. */
  const flood = (ip, until, counts, agent) => {
    const one = async (node) => {
      while (!until()) {
        const res = await request(node.url, { body: call('eth_blockNumber'), headers: { 'x-forwarded-for': ip }, agent })
        if (res.status === 200) counts.ok++
        else {
          assert.equal(res.status, 429, res.text)
          assert.equal(JSON.parse(res.text).error.code, -32005)
          counts.limited++
        }
      }
    }
    return Promise.all(nodes.flatMap((node) => [one(node), one(node), one(node)]))
  }

  /** A well-behaved client: a call every 100 ms, alternating nodes; every one must be served. */
  const wellBehaved = async (ip, until) => {
    let i = 0
    while (!until()) {
      const started = performance.now()
      const res = await request(nodes[i++ % 2].url, { body: call('eth_chainId', [], i), headers: { 'x-forwarded-for': ip } })
      assert.equal(res.status, 200, `well-behaved client refused: ${res.text}`)
      await sleep(Math.max(0, 100 - (performance.now() - started)))
    }
    return i
  }

  it('limits a client flooding through both to the one rate, while another keeps being served', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 6 })
    const counts = { ok: 0, limited: 0 }
    const started = performance.now()
    const until = () => performance.now() - started >= 5000
    let seconds = 0
    const flooded = flood('10.5.0.1', until, counts, agent).then(() => (seconds = (performance.now() - started) / 1000))
    const [, served] = await Promise.all([flooded, wellBehaved('10.5.0.2', until)])
    agent.destroy()
    const budget = BURST + RATE * seconds
    assert.ok(counts.limited > 100, `flood refused ${counts.limited} times`)
    // Never more than the one rate (+10%). Less by a lease per node at most (a tenth of the burst), or
    // when the flooding client itself is starved of CPU on a loaded machine and leaves the bucket full.
    assert.ok(counts.ok <= 1.1 * budget, `flood admitted ${counts.ok}, budget ${budget.toFixed(0)} (2 nodes)`)
    assert.ok(counts.ok >= 0.75 * budget, `flood admitted ${counts.ok}, budget ${budget.toFixed(0)} (2 nodes)`)
    assert.ok(served >= 25, `well-behaved client served ${served} times`)
    for (const node of nodes) {
      const m = await scrape(node.metricsUrl)
      assert.equal(value(m, 'keel_ratelimit_fallback_active'), 0)
      assert.ok(total(m, 'keel_ratelimit_redis_round_trip_seconds_count', { outcome: 'ok' }) >= 1)
    }
  })

  it('charges a batch over the bucket per call: the covered calls are served, the rest get -32005', async () => {
    const batch = JSON.stringify(Array.from({ length: 60 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'eth_chainId', params: [] })))
    const headers = { 'x-forwarded-for': '10.5.0.3' }
    const res = await request(nodes[0].url, { body: batch, headers })
    assert.equal(res.status, 200)
    const answers = JSON.parse(res.text)
    assert.deepEqual(answers.map((a) => a.id), Array.from({ length: 60 }, (_, i) => i))
    const served = answers.filter((a) => 'result' in a).length
    assert.ok(served >= BURST && served <= BURST + 1, `${served} calls served of 60 (burst ${BURST})`)
    assert.ok(answers.slice(0, BURST).every((a) => a.result === '0x600d'), 'the first calls are the served ones')
    for (const a of answers.slice(served)) {
      assert.equal(a.error.code, -32005)
      assert.equal(a.error.message, 'limit exceeded')
      assert.ok(a.error.data.retryAfter >= 1)
    }
    // the same client at the other node finds the shared bucket spent: only what refilled meanwhile is served
    const sent = performance.now()
    const other = JSON.parse((await request(nodes[1].url, { body: batch, headers })).text)
    const refilled = (RATE * (performance.now() - sent + res.ms)) / 1000
    const servedThere = other.filter((a) => 'result' in a).length
    assert.ok(servedThere <= refilled + 1, `${servedThere} calls served at the other node, ${refilled.toFixed(1)} tokens refilled`)
  })

  it('keeps serving on the local fallback (rate / N) while Redis is down, then rejoins a Redis restarted empty', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 6 })
    const counts = { ok: 0, limited: 0 }
    let started = performance.now()
    // Redis dies under load
    const loaded = flood('10.5.0.4', () => performance.now() - started >= 1000, { ok: 0, limited: 0 }, agent)
    await sleep(500)
    await redis.stop()
    await loaded
    // Without Redis: the flood gets about rate / 2 on each node, another client is served.
    started = performance.now()
    const until = () => performance.now() - started >= 3000
    const [, served] = await Promise.all([flood('10.5.0.5', until, counts, agent), wellBehaved('10.5.0.6', until)])
    const seconds = (performance.now() - started) / 1000
    const fallbackBudget = 2 * (BURST / 2 + (RATE / 2) * seconds)
    assert.ok(counts.ok <= 1.1 * fallbackBudget, `flood admitted ${counts.ok} without Redis, budget ${fallbackBudget.toFixed(0)}`)
    assert.ok(counts.ok >= 0.75 * fallbackBudget, `flood admitted ${counts.ok} without Redis, budget ${fallbackBudget.toFixed(0)}`)
    assert.ok(served >= 15, `well-behaved client served ${served} times`)
    for (const node of nodes) {
      const m = await scrape(node.metricsUrl)
      assert.equal(value(m, 'keel_ratelimit_fallback_active'), 1)
      assert.equal(value(m, 'keel_ratelimit_fallbacks_total'), 1, 'one outage')
      assert.equal(node.stderr().match(/Redis unavailable/g)?.length, 1, 'logged once')
    }

    // Redis back, empty: the nodes rejoin it and the limits start afresh.
    await redis.start()
    const deadline = Date.now() + 10_000
    for (const node of nodes) {
      for (;;) {
        // a call makes the limiter notice; the probe brings it back
        await request(node.url, { body: call('eth_chainId'), headers: { 'x-forwarded-for': '10.5.0.7' } })
        if (value(await scrape(node.metricsUrl), 'keel_ratelimit_fallback_active') === 0) break
        assert.ok(Date.now() < deadline, 'rejoined Redis in 10 s')
        await sleep(100)
      }
      assert.match(node.stderr(), /Redis answers again/)
    }
    const fresh = { ok: 0, limited: 0 }
    started = performance.now()
    await flood('10.5.0.5', () => performance.now() - started >= 2000, fresh, agent)
    agent.destroy()
    const budget = BURST + RATE * ((performance.now() - started) / 1000)
    assert.ok(fresh.ok <= 1.1 * budget && fresh.ok >= 0.75 * budget, `after the restart the flood admitted ${fresh.ok}, budget ${budget.toFixed(0)}`)
    for (const node of nodes) assert.equal(value(await scrape(node.metricsUrl), 'keel_ratelimit_fallback_active'), 0)
  })
})
