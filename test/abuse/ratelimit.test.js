// Per-client rate limits: buckets and their bounds (unit), client address resolution (unit), and a live
// node where abusers flood while a well-behaved client keeps its throughput and latency.

import assert from 'node:assert/strict'
import http from 'node:http'
import { after, before, describe, it } from 'node:test'
import WebSocket from 'ws'
import { CidrSet } from '../../dist/rpc/cidr.js'
import { createClientIpResolver } from '../../dist/rpc/client-ip.js'
import { AllowList, RateLimiter, apiKeyOf, parseMethodCosts, resolveRatePolicy } from '../../dist/rpc/ratelimit.js'
import { startNode } from '../helpers/node.js'
import { call, request } from './http-client.js'

describe('RateLimiter', () => {
  const clock = () => {
    const c = { t: 1_000_000, now: () => c.t }
    return c
  }

  it('admits the burst, refuses with whole seconds to wait, refills at the rate', () => {
    const c = clock()
    const limiter = new RateLimiter({ policy: { rate: 10, burst: 20 }, now: c.now })
    const ip = { clientIp: '10.1.2.3' }
    for (let i = 0; i < 20; i++) assert.equal(limiter.take(ip, 1), 0)
    assert.equal(limiter.take(ip, 1), 1)
    assert.equal(limiter.take(ip, 5), 1)
    c.t += 500 // +5 tokens
    assert.equal(limiter.take(ip, 5), 0)
    assert.equal(limiter.take(ip, 1), 1)
    assert.equal(limiter.take({ clientIp: '10.1.2.4' }, 1), 0, 'another client has its own bucket')
  })

  it('charges per method and lets a call dearer than the burst through from a full bucket, as debt', () => {
    const c = clock()
    const limiter = new RateLimiter({ policy: { rate: 10, burst: 20 }, now: c.now, methodCosts: { eth_blockNumber: 0.5 } })
    assert.equal(limiter.costOf('eth_call'), 5)
    assert.equal(limiter.costOf('eth_getLogs'), 10)
    assert.equal(limiter.costOf('eth_chainId'), 1)
    assert.equal(limiter.costOf('eth_blockNumber'), 0.5)
    const ip = { clientIp: '10.0.0.1' }
    assert.equal(limiter.take(ip, 100), 0)
    // 20 - 100 = -80: the next call waits until 1 token is back, 81 tokens at 10/s.
    assert.equal(limiter.take(ip, 1), 9)
  })

  it('keys IPv6 clients by their /64 and IPv4-mapped addresses as IPv4', () => {
    const limiter = new RateLimiter({ policy: { rate: 1, burst: 1 } })
    assert.equal(limiter.take({ clientIp: '2001:db8:1:2::1' }, 1), 0)
    assert.ok(limiter.take({ clientIp: '2001:db8:1:2:ffff::9' }, 1) > 0, 'same /64')
    assert.equal(limiter.take({ clientIp: '2001:db8:1:3::1' }, 1), 0, 'other /64')
    assert.equal(limiter.take({ clientIp: '10.9.9.9' }, 1), 0)
    assert.ok(limiter.take({ clientIp: '::ffff:10.9.9.9' }, 1) > 0)
  })

  it('gives allow-listed ranges and keys their own policy; unknown keys count as their address', () => {
    const allowList = AllowList.parse('10.0.0.0/8=1000, fd00::/8=0 ,key:gold=0,key:silver=2/2')
    const limiter = new RateLimiter({ policy: { rate: 1, burst: 1 }, allowList })
    for (let i = 0; i < 500; i++) assert.equal(limiter.take({ clientIp: '10.2.3.4' }, 1), 0)
    for (let i = 0; i < 500; i++) assert.equal(limiter.take({ clientIp: 'fd00::1' }, 1), 0)
    for (let i = 0; i < 500; i++) assert.equal(limiter.take({ clientIp: '192.0.2.1', apiKey: 'gold' }, 1), 0)
    assert.equal(limiter.take({ clientIp: '192.0.2.1', apiKey: 'silver' }, 2), 0)
    assert.ok(limiter.take({ clientIp: '192.0.2.1', apiKey: 'silver' }, 1) > 0)
    assert.equal(limiter.take({ clientIp: '192.0.2.1', apiKey: 'nope' }, 1), 0)
    assert.ok(limiter.take({ clientIp: '192.0.2.1', apiKey: 'nope' }, 1) > 0, 'unknown key = its address, 1/s')
    // the call pool gives allow-listed addresses no lane (src/exec/heavy-clients.ts)
    assert.deepEqual(['10.2.3.4', 'fd00::1', '192.0.2.1', 'garbage'].map((ip) => limiter.allowListed(ip)), [true, true, false, false])
    // nor requests that present an allow-listed API key
    assert.deepEqual(['gold', 'silver', 'nope', undefined].map((key) => limiter.allowListedKey(key)), [true, true, false, false])
    assert.throws(() => AllowList.parse('10.0.0.0/33=5'), /invalid prefix length/)
    assert.throws(() => AllowList.parse('10.0.0.0/8'), /TARGET=RATE/)
    assert.throws(() => AllowList.parse('key:a b=5'), /API key/)
  })

  it('stays bounded while an attacker rotates source addresses, and forgets idle buckets', () => {
    const c = clock()
    const limiter = new RateLimiter({ policy: { rate: 1, burst: 5 }, maxBuckets: 1000, now: c.now })
    for (let i = 0; i < 200_000; i++) {
      limiter.take({ clientIp: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` }, 3)
      assert.ok(limiter.trackedClients <= 1000)
      if (i % 1000 === 0) c.t += 1
    }
    c.t += 5_000 // everything has refilled: a full bucket is worth nothing
    limiter.sweep()
    assert.equal(limiter.trackedClients, 0)
  })

  it('resolves --rate-limit / --rate-burst defaults', () => {
    assert.deepEqual(resolveRatePolicy({ rateLimit: undefined, rateBurst: undefined, dev: false }), { rate: 100, burst: 200 })
    assert.deepEqual(resolveRatePolicy({ rateLimit: undefined, rateBurst: undefined, dev: true }), { rate: 0, burst: 1 })
    assert.deepEqual(resolveRatePolicy({ rateLimit: 7, rateBurst: undefined, dev: true }), { rate: 7, burst: 14 })
    assert.equal(apiKeyOf('/key/abc', ''), 'abc')
    assert.equal(apiKeyOf('/', 'xyz'), 'xyz')
    assert.equal(apiKeyOf('/', ''), undefined)
  })
})

describe('client address', () => {
  const headers = (map) => (name) => map[name] ?? ''
  const resolve = createClientIpResolver(CidrSet.parse('127.0.0.1/32, 10.0.0.0/8, fd00::/8'))

  it('ignores forwarding headers from an untrusted peer', () => {
    assert.equal(resolve('203.0.113.9', headers({ 'x-forwarded-for': '1.2.3.4' })), '203.0.113.9')
    assert.equal(createClientIpResolver(CidrSet.parse(undefined))('127.0.0.1', headers({ 'x-forwarded-for': '1.2.3.4' })), '127.0.0.1')
  })

  it('walks X-Forwarded-For from the right, skipping trusted hops', () => {
    // The client wrote "6.6.6.6" itself; the trusted proxies appended the real client and each other.
    assert.equal(resolve('127.0.0.1', headers({ 'x-forwarded-for': '6.6.6.6, 198.51.100.7, 10.1.1.1' })), '198.51.100.7')
    assert.equal(resolve('127.0.0.1', headers({ 'x-forwarded-for': '198.51.100.7:5555' })), '198.51.100.7')
    assert.equal(resolve('127.0.0.1', headers({ 'x-forwarded-for': '10.1.1.1, 10.2.2.2' })), '10.1.1.1')
    assert.equal(resolve('127.0.0.1', headers({ 'x-forwarded-for': 'garbage, 10.2.2.2' })), '10.2.2.2')
    assert.equal(resolve('127.0.0.1', headers({ 'x-forwarded-for': '[2001:db8::5]:80' })), '2001:db8:0:0:0:0:0:5')
  })

  it('reads RFC 7239 Forwarded when there is no X-Forwarded-For', () => {
    const forwarded = 'for=6.6.6.6, for="[2001:db8:cafe::17]:4711";proto=https, for=10.0.0.2;by=10.0.0.3'
    assert.equal(resolve('127.0.0.1', headers({ forwarded })), '2001:db8:cafe:0:0:0:0:17')
    assert.equal(resolve('127.0.0.1', headers({ forwarded: 'for=unknown, for=10.0.0.2' })), '10.0.0.2')
  })

  it('parses CIDRs of both families and rejects nonsense', () => {
    const set = CidrSet.parse('192.168.0.0/16,2001:db8::/32,::ffff:172.16.0.0/108')
    assert.ok(set.has('192.168.4.5'))
    assert.ok(set.has('::ffff:192.168.4.5'))
    assert.ok(set.has('2001:db8:ffff::1'))
    assert.ok(set.has('172.16.9.9'))
    assert.ok(!set.has('2001:db9::1'))
    assert.ok(!set.has('not an ip'))
    assert.throws(() => CidrSet.parse('1.2.3/8'), /not an IP address/)
    assert.throws(() => CidrSet.parse('::1/129'), /prefix length/)
  })
})

describe('a flooded node', () => {
  let node
  before(async () => {
    node = await startNode({
      args: ['--metrics-port', '0', '--rate-limit', '20', '--rate-burst', '20', '--trusted-proxies', '127.0.0.1/32', '--rate-limit-allow-list', 'key:gold=0'],
    })
  })
  after(async () => node?.stop())

  it('limits abusers with 429, Retry-After and -32005 while a well-behaved client keeps full speed', async () => {
    const abuserAgent = new http.Agent({ keepAlive: true, maxSockets: 16 })
    const goodAgent = new http.Agent({ keepAlive: true, maxSockets: 1 })
    const abuserResults = { ok: 0, limited: 0, retryAfter: new Set(), codes: new Set() }
    let flooding = true
    const abuser = async (ip) => {
      while (flooding) {
        const res = await request(node.url, { body: call('eth_blockNumber'), headers: { 'x-forwarded-for': ip }, agent: abuserAgent })
        if (res.status === 200) abuserResults.ok++
        else {
          assert.equal(res.status, 429)
          abuserResults.limited++
          abuserResults.retryAfter.add(res.headers['retry-after'])
          const body = JSON.parse(res.text)
          abuserResults.codes.add(`${body.error.code} ${body.error.message}`)
          assert.equal(body.id, 1)
        }
      }
    }
    const floods = ['10.0.0.1', '10.0.0.2', '10.0.0.3'].flatMap((ip) => [abuser(ip), abuser(ip), abuser(ip), abuser(ip)])

    // The good client: 10 calls per second (half its limit) for 3 seconds.
    const latencies = []
    for (let i = 0; i < 30; i++) {
      const started = performance.now()
      const res = await request(node.url, { body: call('eth_blockNumber', [], i), headers: { 'x-forwarded-for': '10.0.0.9' }, agent: goodAgent })
      assert.equal(res.status, 200, res.text)
      assert.ok('result' in JSON.parse(res.text))
      latencies.push(res.ms)
      await new Promise((r) => setTimeout(r, Math.max(0, 100 - (performance.now() - started))))
    }
    flooding = false
    await Promise.all(floods)
    abuserAgent.destroy()
    goodAgent.destroy()

    latencies.sort((a, b) => a - b)
    const p95 = latencies[Math.floor(latencies.length * 0.95)]
    assert.ok(p95 < 100, `good client p95 latency ${p95.toFixed(1)} ms`)
    // 3 abusers x (20 burst + 20/s x ~3 s): anything near that is admitted, the rest refused.
    assert.ok(abuserResults.limited > 1000, `abusers refused ${abuserResults.limited} times`)
    assert.ok(abuserResults.ok <= 3 * (20 + 20 * 5), `abusers admitted ${abuserResults.ok} times`)
    assert.deepEqual([...abuserResults.codes], ['-32005 limit exceeded'])
    for (const value of abuserResults.retryAfter) assert.match(value, /^[1-9]\d*$/)
  })

  it('answers a refused batch with one -32005 per call', async () => {
    const batch = JSON.stringify([
      { jsonrpc: '2.0', id: 'a', method: 'eth_call', params: [] },
      { jsonrpc: '2.0', method: 'eth_chainId' },
      { jsonrpc: '2.0', id: 7, method: 'eth_getLogs', params: [] },
    ])
    const headers = { 'x-forwarded-for': '10.0.0.20' }
    let res
    for (let i = 0; i < 10; i++) {
      res = await request(node.url, { body: batch, headers })
      if (res.status === 429) break
    }
    assert.equal(res.status, 429)
    const answers = JSON.parse(res.text)
    assert.deepEqual(answers.map((a) => [a.id, a.error.code, a.error.message]), [['a', -32005, 'limit exceeded'], [7, -32005, 'limit exceeded']])
  })

  it('ignores X-Forwarded-For sent by an untrusted peer (127.0.0.2)', async () => {
    let limited = 0
    for (let i = 0; i < 60; i++) {
      const res = await request(node.url, { body: call('eth_chainId'), headers: { 'x-forwarded-for': `192.0.2.${i}` }, localAddress: '127.0.0.2' })
      if (res.status === 429) limited++
    }
    // With the header believed every call would come from a fresh address and none would be limited.
    assert.ok(limited >= 30, `only ${limited} of 60 spoofed calls were limited`)
    // ...and another loopback peer is a different client with its own full bucket.
    const other = await request(node.url, { body: call('eth_chainId'), localAddress: '127.0.0.3' })
    assert.equal(other.status, 200)
  })

  it('lets an allow-listed API key (URL path or header) through without limit', async () => {
    for (let i = 0; i < 60; i++) {
      const res = await request(node.url, { body: call('eth_chainId'), path: '/key/gold', localAddress: '127.0.0.4' })
      assert.equal(res.status, 200)
    }
    for (let i = 0; i < 60; i++) {
      const res = await request(node.url, { body: call('eth_chainId'), headers: { 'x-api-key': 'gold' }, localAddress: '127.0.0.4' })
      assert.equal(res.status, 200)
    }
  })

  it('answers over-limit WS requests with -32005 and keeps the socket open', async () => {
    const ws = new WebSocket(node.wsUrl, { headers: { 'x-forwarded-for': '10.0.0.30' } })
    await new Promise((resolve, reject) => {
      ws.once('open', resolve)
      ws.once('error', reject)
    })
    const answers = new Map()
    ws.on('message', (data) => {
      const msg = JSON.parse(String(data))
      answers.set(msg.id, msg)
    })
    for (let i = 1; i <= 60; i++) ws.send(call('eth_chainId', [], i))
    const deadline = Date.now() + 10_000
    while (answers.size < 60 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
    assert.equal(answers.size, 60)
    const limited = [...answers.values()].filter((a) => a.error?.code === -32005)
    assert.ok(limited.length >= 30, `${limited.length} limited`)
    assert.equal(limited[0].error.message, 'limit exceeded')
    assert.equal(ws.readyState, WebSocket.OPEN)
    await new Promise((r) => setTimeout(r, 1100))
    ws.send(call('eth_chainId', [], 99))
    while (!answers.has(99) && Date.now() < deadline + 5000) await new Promise((r) => setTimeout(r, 20))
    assert.equal(answers.get(99).result, '0x600d')
    ws.close()
  })
})

it('per-method costs are configurable (--rate-limit-costs) and bad entries are refused', () => {
  const costs = parseMethodCosts('eth_call=8, eth_getLogs=20')
  assert.deepEqual(costs, { eth_call: 8, eth_getLogs: 20 })
  const limiter = new RateLimiter({ policy: { rate: 10, burst: 20 }, methodCosts: costs })
  assert.equal(limiter.costOf('eth_call'), 8)
  assert.equal(limiter.costOf('eth_blockNumber'), 1)
  assert.throws(() => parseMethodCosts('eth_call'), /must be METHOD=COST/)
  assert.throws(() => parseMethodCosts('eth_call=-1'), /must be METHOD=COST/)
})
