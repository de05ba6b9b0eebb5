import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import WebSocket from 'ws'
import { Envelope } from '../../dist/rpc/envelope.js'
import { RpcServer, isWsContext } from '../../dist/rpc/server.js'
import { Dispatcher } from '../../dist/rpc/dispatch.js'
import { defaultTransportLimits } from '../../dist/rpc/limits.js'
import { RpcError } from '../../dist/errors.js'

const JSON_HEADERS = { 'content-type': 'application/json' }

const makeServer = (extra = {}) => {
  const dispatcher = new Dispatcher()
  dispatcher.register('echo', (params) => params)
  dispatcher.register('whoami', (_params, ctx) => ({
    transport: ctx.transport,
    clientIp: ctx.clientIp,
    session: isWsContext(ctx) ? ctx.session.id : null,
  }))
  dispatcher.register('sleep', async (params) => {
    await new Promise((resolve) => setTimeout(resolve, params[0]))
    return params[1]
  })
  dispatcher.register('fail', () => {
    throw new RpcError(3, 'execution reverted', '0x')
  })
  // Pushes a message to the caller's socket before answering: what eth_subscribe will do.
  dispatcher.register('push', (params, ctx) => {
    if (!isWsContext(ctx)) throw new RpcError(-32601, 'notifications not supported')
    setTimeout(() => ctx.session.send(JSON.stringify({ jsonrpc: '2.0', method: 'pushed', params })), 5)
    return true
  })
  const opened = []
  const closed = []
  const server = new RpcServer(new Envelope(dispatcher, defaultTransportLimits, { onInternalError: () => {} }), {
    host: '127.0.0.1',
    port: 0,
    limits: defaultTransportLimits,
    onWsOpen: (session) => opened.push(session),
    onWsClose: (session) => closed.push(session),
    ...extra,
  })
  return { server, opened, closed }
}

const openSocket = (url) =>
  new Promise((resolve, reject) => {
    const ws = new WebSocket(url)
    ws.once('open', () => resolve(ws))
    ws.once('error', reject)
  })

/** Collects text frames; next() resolves with the next one. */
const inbox = (ws) => {
  const queue = []
  const waiting = []
  ws.on('message', (data) => {
    const text = String(data)
    if (waiting.length > 0) waiting.shift()(text)
    else queue.push(text)
  })
  return {
    next: () => (queue.length > 0 ? Promise.resolve(queue.shift()) : new Promise((resolve) => waiting.push(resolve))),
  }
}

describe('RpcServer: the client address over HTTP', () => {
  const post = (port, body) => fetch(`http://127.0.0.1:${port}/`, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify(body) })

  it('is left unread when nothing uses it (httpClientIp false)', async () => {
    const { server } = makeServer({ httpClientIp: false })
    const port = await server.listen()
    try {
      const answer = await (await post(port, { jsonrpc: '2.0', id: 1, method: 'whoami' })).json()
      assert.deepEqual(answer.result, { transport: 'http', clientIp: '', session: null })
    } finally {
      await server.close()
    }
  })

  it('a per-client request quota reads it anyway: the second request in progress gets 429 / -32005', async () => {
    const { server } = makeServer({ httpClientIp: false, maxConcurrentRequestsPerIp: 1 })
    const port = await server.listen()
    try {
      const slow = post(port, { jsonrpc: '2.0', id: 1, method: 'sleep', params: [300, 'done'] })
      await new Promise((resolve) => setTimeout(resolve, 100))
      const refused = await post(port, { jsonrpc: '2.0', id: 2, method: 'whoami' })
      assert.equal(refused.status, 429)
      assert.equal(refused.headers.get('retry-after'), '1')
      assert.deepEqual((await refused.json()).error, { code: -32005, message: 'too many concurrent requests from this address' })
      assert.equal((await (await slow).json()).result, 'done')
      // the first one finished: its slot is free again, and the address was read for the quota
      const answer = await (await post(port, { jsonrpc: '2.0', id: 3, method: 'whoami' })).json()
      assert.equal(answer.result.clientIp, '127.0.0.1')
    } finally {
      await server.close()
    }
  })
})

describe('RpcServer', () => {
  let server
  let opened
  let closed
  let port
  let url

  before(async () => {
    ;({ server, opened, closed } = makeServer())
    port = await server.listen()
    url = `http://127.0.0.1:${port}/`
  })

  after(async () => {
    await server.close()
  })

  it('listens on an ephemeral port', () => {
    assert.ok(Number.isInteger(port) && port > 0)
  })

  describe('HTTP', () => {
    it('answers a POST with application/json and CORS', async () => {
      const res = await fetch(url, { method: 'POST', headers: JSON_HEADERS, body: '{"jsonrpc":"2.0","id":1,"method":"whoami"}' })
      assert.equal(res.status, 200)
      assert.equal(res.headers.get('content-type'), 'application/json')
      assert.equal(res.headers.get('access-control-allow-origin'), '*')
      assert.deepEqual(await res.json(), {
        jsonrpc: '2.0',
        id: 1,
        result: { transport: 'http', clientIp: '127.0.0.1', session: null },
      })
    })

    it('serves any path, like geth', async () => {
      const res = await fetch(`${url}some/path`, { method: 'POST', headers: JSON_HEADERS, body: '{"jsonrpc":"2.0","id":"p","method":"echo","params":[1]}' })
      assert.deepEqual(await res.json(), { jsonrpc: '2.0', id: 'p', result: [1] })
    })

    it('accepts content-type parameters and geth\'s alternative JSON types', async () => {
      for (const type of ['application/json; charset=utf-8', 'Application/JSON', 'application/json-rpc']) {
        const res = await fetch(url, { method: 'POST', headers: { 'content-type': type }, body: '{"jsonrpc":"2.0","id":1,"method":"echo"}' })
        assert.equal(res.status, 200, type)
        assert.deepEqual((await res.json()).result, [])
      }
    })

    it('answers a batch in order', async () => {
      const body = JSON.stringify([
        { jsonrpc: '2.0', id: 1, method: 'sleep', params: [30, 'slow'] },
        { jsonrpc: '2.0', id: 2, method: 'echo', params: ['fast'] },
        { jsonrpc: '2.0', id: 3, method: 'fail' },
      ])
      const res = await fetch(url, { method: 'POST', headers: JSON_HEADERS, body })
      assert.deepEqual(await res.json(), [
        { jsonrpc: '2.0', id: 1, result: 'slow' },
        { jsonrpc: '2.0', id: 2, result: ['fast'] },
        { jsonrpc: '2.0', id: 3, error: { code: 3, message: 'execution reverted', data: '0x' } },
      ])
    })

    it('answers a parse error with -32700', async () => {
      const res = await fetch(url, { method: 'POST', headers: JSON_HEADERS, body: '{"jsonrpc"' })
      assert.equal(res.status, 200)
      assert.deepEqual(await res.json(), { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error' } })
    })

    it('answers notifications with an empty 200', async () => {
      const res = await fetch(url, { method: 'POST', headers: JSON_HEADERS, body: '{"jsonrpc":"2.0","method":"echo"}' })
      assert.equal(res.status, 200)
      assert.equal(await res.text(), '')
    })

    it('reads a body sent in many chunks', async () => {
      const params = ['y'.repeat(300_000), 'z'.repeat(300_000)]
      const bytes = new TextEncoder().encode(JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'echo', params }))
      const body = new ReadableStream({
        start(controller) {
          for (let i = 0; i < bytes.length; i += 16_384) controller.enqueue(bytes.slice(i, i + 16_384))
          controller.close()
        },
      })
      const res = await fetch(url, { method: 'POST', headers: JSON_HEADERS, body, duplex: 'half' })
      assert.deepEqual((await res.json()).result, params)
    })

    it('rejects a 6 MiB body with 413 (declared length)', async () => {
      const res = await fetch(url, { method: 'POST', headers: JSON_HEADERS, body: 'x'.repeat(6 * 1024 * 1024) })
      assert.equal(res.status, 413)
      await res.arrayBuffer()
    })

    it('rejects a 6 MiB chunked body with 413 once it passes the limit', async () => {
      const chunk = new Uint8Array(256 * 1024).fill(0x20)
      let sent = 0
      const body = new ReadableStream({
        pull(controller) {
          if (sent >= 24) controller.close()
          else {
            sent++
            controller.enqueue(chunk)
          }
        },
      })
      let status
      try {
        const res = await fetch(url, { method: 'POST', headers: JSON_HEADERS, body, duplex: 'half' })
        status = res.status
        await res.arrayBuffer().catch(() => {})
      } catch (err) {
        // undici may see the connection closed while it still uploads; then it must not have sent everything
        status = `error: ${err.cause?.code ?? err.message}`
      }
      assert.equal(status, 413)
    })

    it('still serves after a rejected body', async () => {
      const res = await fetch(url, { method: 'POST', headers: JSON_HEADERS, body: '{"jsonrpc":"2.0","id":1,"method":"echo","params":[2]}' })
      assert.deepEqual((await res.json()).result, [2])
    })

    it('rejects other content types with 415 and geth\'s message', async () => {
      for (const headers of [{ 'content-type': 'text/plain' }, {}]) {
        const res = await fetch(url, { method: 'POST', headers, body: '{"jsonrpc":"2.0","id":1,"method":"echo"}' })
        assert.equal(res.status, 415)
        assert.equal(await res.text(), 'invalid content type, only application/json is supported\n')
      }
    })

    it('answers an empty GET with 200 (liveness)', async () => {
      const res = await fetch(url)
      assert.equal(res.status, 200)
      assert.equal(await res.text(), '')
    })

    it('answers a CORS preflight with 204 and the requested headers', async () => {
      const res = await fetch(url, {
        method: 'OPTIONS',
        headers: {
          origin: 'https://dapp.example',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type,x-api-key',
        },
      })
      assert.equal(res.status, 204)
      assert.equal(res.headers.get('access-control-allow-origin'), '*')
      assert.equal(res.headers.get('access-control-allow-methods'), 'POST, GET, OPTIONS')
      assert.equal(res.headers.get('access-control-allow-headers'), 'content-type,x-api-key')
      const plain = await fetch(url, { method: 'OPTIONS' })
      assert.equal(plain.headers.get('access-control-allow-headers'), 'Content-Type')
    })

    it('answers other methods with 405', async () => {
      for (const method of ['PUT', 'DELETE', 'PATCH']) {
        const res = await fetch(url, { method, headers: JSON_HEADERS, body: '{}' })
        assert.equal(res.status, 405, method)
        await res.arrayBuffer()
      }
      const query = await fetch(`${url}?x=1`)
      assert.equal(query.status, 405)
    })
  })

  describe('WebSocket', () => {
    it('answers a single request with transport ws and a session', async () => {
      const ws = await openSocket(`ws://127.0.0.1:${port}/`)
      try {
        const box = inbox(ws)
        ws.send('{"jsonrpc":"2.0","id":"w1","method":"whoami"}')
        const answer = JSON.parse(await box.next())
        assert.equal(answer.id, 'w1')
        assert.equal(answer.result.transport, 'ws')
        assert.equal(answer.result.clientIp, '127.0.0.1')
        assert.equal(typeof answer.result.session, 'number')
        assert.ok(opened.some((s) => s.id === answer.result.session && s.clientIp === '127.0.0.1'))
      } finally {
        ws.close()
      }
    })

    it('answers a batch and binary frames', async () => {
      const ws = await openSocket(`ws://127.0.0.1:${port}/`)
      try {
        const box = inbox(ws)
        ws.send('[{"jsonrpc":"2.0","id":1,"method":"echo","params":["a"]},{"jsonrpc":"2.0","id":2,"method":"nope"}]')
        const batch = JSON.parse(await box.next())
        assert.deepEqual(batch[0], { jsonrpc: '2.0', id: 1, result: ['a'] })
        assert.equal(batch[1].error.code, -32601)
        ws.send(Buffer.from('{"jsonrpc":"2.0","id":3,"method":"echo","params":["bin"]}'), { binary: true })
        assert.deepEqual(JSON.parse(await box.next()), { jsonrpc: '2.0', id: 3, result: ['bin'] })
        ws.send('not json')
        assert.equal(JSON.parse(await box.next()).error.code, -32700)
      } finally {
        ws.close()
      }
    })

    it('answers many concurrent requests on one socket with matching ids', async () => {
      const ws = await openSocket(`ws://127.0.0.1:${port}/`)
      try {
        const box = inbox(ws)
        const count = 500
        for (let i = 0; i < count; i++) {
          // later ids finish sooner, so answers come back out of order
          ws.send(JSON.stringify({ jsonrpc: '2.0', id: i, method: 'sleep', params: [(count - i) % 20, `r${i}`] }))
        }
        const seen = new Map()
        for (let i = 0; i < count; i++) {
          const answer = JSON.parse(await box.next())
          seen.set(answer.id, answer.result)
        }
        assert.equal(seen.size, count)
        for (let i = 0; i < count; i++) assert.equal(seen.get(i), `r${i}`)
      } finally {
        ws.close()
      }
    })

    it('lets a handler push to its own session', async () => {
      const ws = await openSocket(`ws://127.0.0.1:${port}/`)
      try {
        const box = inbox(ws)
        ws.send('{"jsonrpc":"2.0","id":1,"method":"push","params":["hello"]}')
        assert.deepEqual(JSON.parse(await box.next()), { jsonrpc: '2.0', id: 1, result: true })
        assert.deepEqual(JSON.parse(await box.next()), { jsonrpc: '2.0', method: 'pushed', params: ['hello'] })
      } finally {
        ws.close()
      }
    })

    it('marks the session closed and drops answers that arrive after the close', async () => {
      const ws = await openSocket(`ws://127.0.0.1:${port}/`)
      const box = inbox(ws)
      ws.send('{"jsonrpc":"2.0","id":1,"method":"whoami"}')
      const id = JSON.parse(await box.next()).result.session
      ws.send('{"jsonrpc":"2.0","id":2,"method":"sleep","params":[80,"late"]}')
      await new Promise((resolve) => {
        ws.once('close', resolve)
        ws.close()
      })
      const deadline = Date.now() + 2000
      while (!closed.some((s) => s.id === id) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10))
      const session = closed.find((s) => s.id === id)
      assert.ok(session, 'onWsClose was called')
      assert.equal(session.closed, true)
      assert.equal(session.send('x'), false)
      await new Promise((resolve) => setTimeout(resolve, 120)) // the late answer is dropped without a crash
      const res = await fetch(url, { method: 'POST', headers: JSON_HEADERS, body: '{"jsonrpc":"2.0","id":1,"method":"echo"}' })
      assert.equal(res.status, 200)
    })

    it('closes a socket that sends a message over the 32 MiB limit', async () => {
      const ws = await openSocket(`ws://127.0.0.1:${port}/`)
      const code = await new Promise((resolve) => {
        ws.once('close', (c) => resolve(c))
        ws.once('error', () => {})
        ws.send('x'.repeat(32 * 1024 * 1024 + 1))
      })
      assert.notEqual(code, 1000)
    })
  })

  it('close() ends open WebSockets with 1001 and stops listening', async () => {
    const { server: other } = makeServer()
    const otherPort = await other.listen()
    const ws = await openSocket(`ws://127.0.0.1:${otherPort}/`)
    const closedWith = new Promise((resolve) => ws.once('close', (code) => resolve(code)))
    await other.close()
    assert.equal(await closedWith, 1001)
    await assert.rejects(fetch(`http://127.0.0.1:${otherPort}/`))
  })
})
