// The command-line side of the admin socket: one JSON-RPC call to the node serving <dataDir>/admin.sock,
// or `undefined` when no node answers there (then the caller opens the database itself).

import { existsSync } from 'node:fs'
import { request } from 'node:http'
import { Refusal } from '../operator/refusal.js'
import { ADMIN_REFUSED, adminSocketPath } from './admin-socket.js'

const NOT_SERVING = new Set(['ECONNREFUSED', 'ENOENT', 'ENOTSOCK'])

export async function callAdmin<T>(dataDir: string, method: string, params: unknown[] = [], timeoutMs = 3_600_000): Promise<{ result: T } | undefined> {
  const socketPath = adminSocketPath(dataDir)
  if (!existsSync(socketPath)) return undefined
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params })
  let text: string
  try {
    text = await new Promise<string>((resolve, reject) => {
      const req = request(
        { socketPath, path: '/', method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }, timeout: timeoutMs },
        (res) => {
          let data = ''
          res.setEncoding('utf8')
          res.on('data', (chunk: string) => (data += chunk))
          res.on('end', () => resolve(data))
          res.on('error', reject)
        },
      )
      req.on('timeout', () => req.destroy(new Error(`no answer from ${socketPath} within ${timeoutMs / 1000} s`)))
      req.on('error', reject)
      req.end(body)
    })
  } catch (err) {
    if (NOT_SERVING.has((err as NodeJS.ErrnoException).code ?? '')) return undefined
    throw err
  }
  const reply = JSON.parse(text) as { result?: T; error?: { code: number; message: string } }
  if (reply.error !== undefined) {
    if (reply.error.code === ADMIN_REFUSED) throw new Refusal(reply.error.message)
    throw new Error(`${method} on the running node: ${reply.error.message}`)
  }
  return { result: reply.result as T }
}
