// GET /health and GET /ready: cheap, never rate limited, readiness follows head freshness and fails first
// on shutdown.

import assert from 'node:assert/strict'
import http from 'node:http'
import { describe, it } from 'node:test'
import WebSocket from 'ws'
import { Health } from '../../dist/rpc/health.js'
import { startNode } from '../helpers/node.js'
import { call, request } from './http-client.js'

describe('Health', () => {
  it('is ready with a fresh head, unready with a stale one, while draining, or with no chain', () => {
    let now = 1000
    let head = { number: 5n, timestamp: 990n }
    const health = new Health({ head: () => head }, 60, () => now)
    assert.equal(health.readiness(undefined).status, '200 OK')
    assert.equal(health.readiness('maxSecondsBehind=5').status, '503 Service Unavailable')
    assert.equal(health.readiness('maxSecondsBehind=x').status, '400 Bad Request')
    now = 1100
    assert.match(health.readiness('').body, /head is stale/)
    head = undefined
    assert.match(health.readiness('').body, /chain not open/)
    head = { number: 6n, timestamp: 1100n }
    assert.equal(health.readiness('').status, '200 OK')
    health.startDraining()
    assert.match(health.readiness('').body, /shutting down/)
    assert.equal(health.liveness().status, '200 OK')
  })
})

describe('GET /health and /ready on a node', () => {
  it('answer 200, are never rate limited, and /ready follows the head', async () => {
    const node = await startNode({ args: ['--metrics-port', '0', '--rate-limit', '1', '--rate-burst', '1'], blockTime: 1 })
    try {
      for (let i = 0; i < 50; i++) {
        const live = await request(node.url, { method: 'GET', path: '/health' })
        assert.equal(live.status, 200)
        assert.deepEqual(JSON.parse(live.text), { status: 'ok' })
        const ready = await request(node.url, { method: 'GET', path: '/ready' })
        assert.equal(ready.status, 200, ready.text)
        assert.equal(JSON.parse(ready.text).status, 'ready')
      }
      // JSON-RPC is limited meanwhile (1/s), health is not.
      const statuses = []
      for (let i = 0; i < 5; i++) statuses.push((await request(node.url, { body: call('eth_chainId') })).status)
      assert.ok(statuses.includes(429))
      assert.equal((await request(node.url, { method: 'GET', path: '/ready?maxSecondsBehind=abc' })).status, 400)
      // geth's liveness probe (GET / without a body) still answers.
      assert.equal((await request(node.url, { method: 'GET', path: '/' })).status, 200)
    } finally {
      await node.stop()
    }
  })

  it('/ready goes 503 when the head is older than maxSecondsBehind', async () => {
    // Automine without empty blocks: the head stays at genesis until a transaction arrives.
    const node = await startNode({ args: ['--metrics-port', '0', '--empty-block-period', '0'], blockTime: 0 })
    try {
      await new Promise((r) => setTimeout(r, 2100))
      const stale = await request(node.url, { method: 'GET', path: '/ready?maxSecondsBehind=1' })
      assert.equal(stale.status, 503, stale.text)
      assert.equal(JSON.parse(stale.text).reason, 'head is stale')
      const lenient = await request(node.url, { method: 'GET', path: '/ready?maxSecondsBehind=100000000000' })
      assert.equal(lenient.status, 200, lenient.text)
    } finally {
      await node.stop()
    }
  })

  it('fails readiness first on SIGTERM, answers on open connections, closes WS with 1001 after the grace', async () => {
    const node = await startNode({ args: ['--metrics-port', '0', '--shutdown-grace-seconds', '2'] })
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
    try {
      assert.equal((await request(node.url, { method: 'GET', path: '/ready', agent })).status, 200)
      const ws = new WebSocket(node.wsUrl)
      await new Promise((resolve, reject) => {
        ws.once('open', resolve)
        ws.once('error', reject)
      })
      const closed = new Promise((resolve) => ws.once('close', (code) => resolve({ code, at: Date.now() })))
      const exited = new Promise((resolve) => node.proc.once('exit', (code) => resolve(code)))
      const signalledAt = Date.now()
      node.proc.kill('SIGTERM')
      await new Promise((r) => setTimeout(r, 300))
      // The kept-alive connection still reaches the node: not ready any more, yet alive, and calls still work.
      const ready = await request(node.url, { method: 'GET', path: '/ready', agent })
      assert.equal(ready.status, 503)
      assert.equal(JSON.parse(ready.text).reason, 'shutting down')
      // New connections are refused: the listener is closed.
      await assert.rejects(request(node.url, { method: 'GET', path: '/health', localAddress: '127.0.0.5' }), /ECONNREFUSED/)
      // The WebSocket still works during the grace period.
      const answer = new Promise((resolve) => ws.once('message', (data) => resolve(JSON.parse(String(data)))))
      ws.send(call('eth_chainId', [], 5))
      assert.equal((await answer).result, '0x600d')
      const { code, at } = await closed
      assert.equal(code, 1001)
      assert.ok(at - signalledAt >= 1500, `closed after ${at - signalledAt} ms`)
      assert.equal(await exited, 0, node.stderr())
    } finally {
      agent.destroy()
      await node.stop()
    }
  })
})
