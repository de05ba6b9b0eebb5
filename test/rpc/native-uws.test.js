// Proves Keel serves through uWebSockets.js's native addon and not through the package's silent
// pure-JS fallback (uWebSockets.js/dist/index.js).

import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, realpathSync } from 'node:fs'
import { createRequire } from 'node:module'
import { uws, uwsBinaryPath } from '../../dist/rpc/uws.js'
import { Envelope } from '../../dist/rpc/envelope.js'
import { RpcServer } from '../../dist/rpc/server.js'
import { Dispatcher } from '../../dist/rpc/dispatch.js'
import { defaultTransportLimits } from '../../dist/rpc/limits.js'

const require = createRequire(import.meta.url)

/** Serves "ok" on any route with the given uWS implementation; resolves to [port, stop]. */
const tinyApp = (impl) =>
  new Promise((resolve, reject) => {
    const app = impl.App().any('/*', (res) => {
      res.onAborted(() => {})
      res.end('ok')
    })
    app.listen('127.0.0.1', 0, (listenSocket) => {
      if (!listenSocket) return reject(new Error('listen failed'))
      resolve([impl.us_socket_local_port(listenSocket), () => impl.us_listen_socket_close(listenSocket)])
    })
  })

const uwsHeaderOf = async (port) => {
  // a fresh connection each time so no keep-alive socket holds a closed app open
  const res = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', headers: { 'content-type': 'application/json', connection: 'close' }, body: '{}' })
  await res.arrayBuffer()
  return res.headers.get('uwebsockets')
}

describe('uWebSockets.js native binary', () => {
  it('is loaded from a .node addon file for this platform and ABI', () => {
    const expected = `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`
    assert.ok(uwsBinaryPath.endsWith(expected), uwsBinaryPath)
    assert.ok(existsSync(uwsBinaryPath))
    assert.match(Function.prototype.toString.call(uws.App), /\[native code\]/)
  })

  it('is mapped into the process as a shared object', () => {
    const report = process.report.getReport()
    const real = realpathSync(uwsBinaryPath)
    assert.ok(
      report.sharedObjects.some((file) => file === uwsBinaryPath || file === real),
      `${real} not among ${report.sharedObjects.length} shared objects`,
    )
  })

  it('native uWS marks its responses with a "uWebSockets" header, the JS fallback does not', async () => {
    const [nativePort, stopNative] = await tinyApp(uws)
    try {
      assert.equal(await uwsHeaderOf(nativePort), '20')
    } finally {
      stopNative()
    }
    const fallback = require('uWebSockets.js/dist/index.js')
    assert.doesNotMatch(Function.prototype.toString.call(fallback.App), /\[native code\]/)
    const [fallbackPort, stopFallback] = await tinyApp(fallback)
    try {
      assert.equal(await uwsHeaderOf(fallbackPort), null)
    } finally {
      stopFallback()
    }
  })

  it('RpcServer answers JSON-RPC through the native server', async () => {
    const dispatcher = new Dispatcher()
    dispatcher.register('web3_clientVersion', () => 'keel')
    const server = new RpcServer(new Envelope(dispatcher, defaultTransportLimits), {
      host: '127.0.0.1',
      port: 0,
      limits: defaultTransportLimits,
    })
    const port = await server.listen()
    try {
      const res = await fetch(`http://127.0.0.1:${port}/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"jsonrpc":"2.0","id":1,"method":"web3_clientVersion"}',
      })
      assert.equal(res.headers.get('uwebsockets'), '20')
      assert.deepEqual(await res.json(), { jsonrpc: '2.0', id: 1, result: 'keel' })
    } finally {
      await server.close()
    }
  })
})
