// Slow, idle and greedy clients: what uWebSockets.js cuts by itself (an HTTP request whose headers or body
// do not arrive within its 10 s timeout, headers past its size limit) and what Keel adds (the global caps
// on WebSocket connections and on HTTP requests in progress, answered 503; the send buffer limit of a
// WebSocket that never reads). Meanwhile a well-behaved client keeps being served. The limits are
// documented in README.md (Limits).

import assert from 'node:assert/strict'
import net from 'node:net'
import { after, before, describe, test } from 'node:test'
import WebSocket from 'ws'
import { startNode } from '../helpers/node.js'
import { scrape, value } from '../helpers/prom.js'
import { rpc, sleep } from '../helpers/rpc.js'
import { request } from './http-client.js'

const CALL = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}'
// uWS's HTTP timeout is 10 s (HTTP_IDLE_TIMEOUT_S); a cut is seen within a few seconds of it
const UWS_TIMEOUT_MS = 10_000
const CUT_BY_MS = 20_000

/** A raw TCP client running `script`; resolves with when the server closed it and what it answered. */
function rawClient(port, script, { localAddress = '127.0.0.1' } = {}) {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1', localAddress })
    const started = Date.now()
    let answer = ''
    let timer
    const guard = setTimeout(() => socket.destroy(), CUT_BY_MS + 5_000)
    socket.on('data', (d) => {
      answer += d
    })
    socket.on('error', () => {})
    socket.on('close', () => {
      clearTimeout(guard)
      clearInterval(timer)
      resolve({ closedAfterMs: Date.now() - started, answer })
    })
    socket.on('connect', () => {
      timer = script(socket)
    })
  })
}

/** Calls eth_chainId every 200 ms until `until` resolves; returns the latencies, failing on any error. */
async function wellBehaved(url, until) {
  let done = false
  until.then(() => (done = true))
  const ms = []
  for (let i = 0; i < 1_000 && !done; i++) {
    const started = performance.now()
    const answer = await rpc(url, 'eth_chainId')
    assert.equal(answer.result, '0x600d', `the well-behaved client got ${JSON.stringify(answer)}`)
    ms.push(performance.now() - started)
    await sleep(200)
  }
  return ms
}

describe('slow and oversized HTTP requests', () => {
  let node
  before(async () => {
    node = await startNode({ blockTime: 1, args: ['--rate-limit', '0'] })
  })
  after(() => node?.stop())

  test('slowloris headers and body, a body that never completes and an idle connection are cut by uWS; a client is served meanwhile', { timeout: 60_000 }, async (t) => {
    const header = `POST / HTTP/1.1\r\nHost: keel\r\nContent-Type: application/json\r\n`
    const attacks = Promise.all([
      // headers a byte every 500 ms
      rawClient(node.port, (s) => {
        s.write('POST / HTTP/1.1\r\nHost: keel\r\n')
        return setInterval(() => s.write('X'), 500)
      }),
      // a body a byte every 200 ms: far under uWS's 16 KB/s, so its timeout is not renewed
      rawClient(node.port, (s) => {
        s.write(`${header}Content-Length: 100000\r\n\r\n`)
        return setInterval(() => s.write(' '), 200)
      }),
      // a body that stops after 10 of its 1,000 bytes
      rawClient(node.port, (s) => {
        s.write(`${header}Content-Length: 1000\r\n\r\n{"jsonrpc"`)
      }),
      // a connection that sends nothing
      rawClient(node.port, () => {}),
    ])
    const served = await wellBehaved(node.url, attacks)
    const cut = await attacks
    for (const [i, c] of cut.entries()) {
      assert.equal(c.answer, '', `attack ${i} was answered: ${c.answer.slice(0, 80)}`)
      assert.ok(c.closedAfterMs >= UWS_TIMEOUT_MS - 1_000 && c.closedAfterMs < CUT_BY_MS, `attack ${i} was cut after ${c.closedAfterMs} ms`)
    }
    assert.ok(served.length >= 20, `the well-behaved client made only ${served.length} calls`)
    t.diagnostic(`cut after ${cut.map((c) => c.closedAfterMs).join(', ')} ms; ${served.length} calls served meanwhile`)
  })

  test('oversized headers: 3 KiB served even in pieces, over 4 KiB in pieces or 256 KiB cut at once; more than 50 headers go unanswered until the timeout', { timeout: 60_000 }, async () => {
    const req = (headers) => `POST / HTTP/1.1\r\nHost: keel\r\nContent-Type: application/json\r\n${headers}Content-Length: ${CALL.length}\r\n\r\n${CALL}`
    let many = ''
    for (let i = 0; i < 60; i++) many += `X-H${i}: v\r\n`
    // a request whose headers reach the server in two reads, as a slow network delivers them: uWS parses
    // headers split across reads in a 4 KiB buffer (larger ones are served only when they come in one read)
    const inTwo = (text) => (s) => {
      s.write(text.slice(0, 64))
      return setTimeout(() => s.write(text.slice(64)), 50)
    }
    const [fits, overInPieces, tooBig, tooMany] = await Promise.all([
      rawClient(node.port, inTwo(req(`X-Big: ${'a'.repeat(3 * 1024)}\r\n`))),
      rawClient(node.port, inTwo(req(`X-Big: ${'a'.repeat(5 * 1024)}\r\n`))),
      rawClient(node.port, (s) => s.write(req(`X-Big: ${'a'.repeat(256 * 1024)}\r\n`))),
      rawClient(node.port, (s) => s.write(req(many))),
    ])
    assert.match(fits.answer, /^HTTP\/1\.1 200 OK/)
    for (const [what, cut] of [['5 KiB of headers in two reads', overInPieces], ['256 KiB of headers', tooBig]]) {
      assert.equal(cut.answer, '', `${what} were answered`)
      assert.ok(cut.closedAfterMs < 2_000, `${what} were held ${cut.closedAfterMs} ms`)
    }
    assert.equal(tooMany.answer, '')
    assert.ok(tooMany.closedAfterMs >= UWS_TIMEOUT_MS - 1_000 && tooMany.closedAfterMs < CUT_BY_MS)
    assert.equal((await rpc(node.url, 'eth_chainId')).result, '0x600d')
  })
})

describe('global caps: --http-max-in-flight and --ws-max-connections', () => {
  let node
  const held = []
  before(async () => {
    node = await startNode({
      blockTime: 1,
      args: ['--rate-limit', '0', '--metrics-port', '0', '--http-max-in-flight', '8', '--ws-max-connections', '120', '--ws-max-connections-per-ip', '20', '--ws-send-buffer-limit', '65536'],
    })
  })
  after(async () => {
    for (const s of held) s.destroy()
    await node?.stop()
  })

  test('past --http-max-in-flight requests in progress, HTTP 503 with Retry-After; served again once they end', { timeout: 30_000 }, async () => {
    // eight requests whose bodies never complete hold the eight places
    for (let i = 0; i < 8; i++) {
      const s = net.connect({ port: node.port, host: '127.0.0.1' })
      s.on('error', () => {})
      s.write(`POST / HTTP/1.1\r\nHost: keel\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`)
      held.push(s)
    }
    await sleep(300)
    const refused = await request(node.url, { body: CALL })
    assert.equal(refused.status, 503)
    assert.equal(refused.headers['retry-after'], '1')
    assert.deepEqual(JSON.parse(refused.text).error, { code: -32005, message: 'server busy: too many requests in progress, retry later' })
    let metrics = await scrape(node.metricsUrl)
    assert.equal(value(metrics, 'keel_http_requests_refused_busy_total'), 1)
    assert.equal(value(metrics, 'keel_http_requests_in_flight'), 8)
    // health checks are not requests in progress: a balancer still sees the node
    assert.equal((await request(node.url, { method: 'GET', path: '/health' })).status, 200)
    for (const s of held.splice(0)) s.destroy()
    await sleep(300)
    assert.equal((await rpc(node.url, 'eth_chainId')).result, '0x600d')
    metrics = await scrape(node.metricsUrl)
    assert.equal(value(metrics, 'keel_http_requests_in_flight'), 0)
  })

  test('idle WebSockets from 8 loopback addresses: 20 per address (429 past it), 120 in all (503 past it); the rest is served', { timeout: 60_000 }, async () => {
    const addresses = Array.from({ length: 8 }, (_, i) => `127.0.0.${i + 2}`)
    const outcomes = { open: [], 429: 0, 503: 0 }
    const connect = (localAddress) =>
      new Promise((resolve) => {
        const ws = new WebSocket(node.wsUrl, { localAddress })
        ws.once('open', () => {
          outcomes.open.push(ws)
          resolve()
        })
        ws.once('unexpected-response', (_req, res) => {
          outcomes[res.statusCode] = (outcomes[res.statusCode] ?? 0) + 1
          res.resume()
          resolve()
        })
        ws.once('error', () => resolve())
      })
    try {
      // 25 from each address, address after address: 20 open from each of the first six and the rest get
      // 429, until the node is full (the global cap is checked first): the sixth's last 5 and the last two's get 503
      for (const address of addresses) await Promise.all(Array.from({ length: 25 }, () => connect(address)))
      assert.equal(outcomes.open.length, 120)
      assert.equal(outcomes[503], 5 + 2 * 25)
      assert.equal(outcomes[429], 5 * 5)
      const metrics = await scrape(node.metricsUrl)
      assert.equal(value(metrics, 'keel_ws_connections'), 120)
      assert.equal(value(metrics, 'keel_ws_connections_refused_full_total'), 55)
      assert.equal(value(metrics, 'keel_ws_connections_refused_total'), 25)
      // HTTP clients are not affected by the WebSocket cap
      assert.equal((await rpc(node.url, 'eth_chainId')).result, '0x600d')
      // one closes: a place is free again
      outcomes.open.pop().close()
      await sleep(300)
      await connect('127.0.0.10')
      assert.equal(outcomes.open.length, 120)
    } finally {
      for (const ws of outcomes.open) ws.terminate()
    }
    await sleep(500)
    assert.equal(value(await scrape(node.metricsUrl), 'keel_ws_connections'), 0)
  })

  test('a WebSocket that never reads is closed at --ws-send-buffer-limit; a reading one is served', { timeout: 60_000 }, async () => {
    const before = value(await scrape(node.metricsUrl), 'keel_ws_slow_consumers_closed_total')
    // a raw client: upgrades, then asks for large answers and never reads a byte
    const socket = net.connect({ port: node.port, host: '127.0.0.1' })
    socket.on('error', () => {})
    await new Promise((resolve) => socket.once('connect', resolve))
    socket.write(`GET / HTTP/1.1\r\nHost: keel\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`)
    socket.pause()
    const batch = JSON.stringify(Array.from({ length: 1000 }, (_, id) => ({ jsonrpc: '2.0', id, method: 'eth_getBlockByNumber', params: ['0x0', false] })))
    const frame = maskedTextFrame(batch)
    const reader = new WebSocket(node.wsUrl)
    await new Promise((resolve) => reader.once('open', resolve))
    try {
      let closed = false
      for (let i = 0; i < 400 && !closed; i++) {
        if (!socket.destroyed) socket.write(frame)
        await sleep(20)
        if (i % 20 === 19) closed = value(await scrape(node.metricsUrl), 'keel_ws_slow_consumers_closed_total') > before
      }
      assert.ok(closed, 'the non-reading WebSocket was never closed')
      const answer = await new Promise((resolve) => {
        reader.once('message', (m) => resolve(JSON.parse(m.toString())))
        reader.send(CALL)
      })
      assert.equal(answer.result, '0x600d')
    } finally {
      socket.destroy()
      reader.close()
    }
  })
})

/** A client-to-server text frame (masked, as RFC 6455 requires of clients). */
function maskedTextFrame(text) {
  const payload = Buffer.from(text)
  const mask = Buffer.from([1, 2, 3, 4])
  let head
  if (payload.length < 126) head = Buffer.from([0x81, 0x80 | payload.length])
  else if (payload.length < 65536) {
    head = Buffer.alloc(4)
    head[0] = 0x81
    head[1] = 0x80 | 126
    head.writeUInt16BE(payload.length, 2)
  } else {
    head = Buffer.alloc(10)
    head[0] = 0x81
    head[1] = 0x80 | 127
    head.writeBigUInt64BE(BigInt(payload.length), 2)
  }
  const masked = Buffer.alloc(payload.length)
  for (let i = 0; i < payload.length; i++) masked[i] = payload[i] ^ mask[i & 3]
  return Buffer.concat([head, mask, masked])
}
