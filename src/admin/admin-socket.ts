// The operator's channel into a running node: JSON-RPC over HTTP on a unix socket in the data folder
// (<dataDir>/admin.sock, mode 0600). It is never on a TCP port, so only accounts that may read the data
// folder (and thus operator.key anyway) can use it. Methods: admin_dbStats, admin_backup [dir], admin_export [file, from, to].
// A second process cannot open the LevelDB while the node holds it, so `keel db stats` and `keel backup`
// come through here and run inside the node on its own database handle.

import { chmodSync, existsSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import { isAbsolute, join } from 'node:path'
import type { ChainLevel } from '../chain/store/level.js'
import { Refusal } from '../operator/refusal.js'
import { backupChain } from './backup.js'
import { exportChain } from '../import/exporter.js'
import { chainStats } from './db-stats.js'

export const ADMIN_SOCKET_FILE = 'admin.sock'
/** sun_path holds 108 bytes on Linux (104 on macOS), including the terminating NUL. */
export const MAX_SOCKET_PATH = 103
/** The code of an admin error the operator should fix (CLI exit 2), as opposed to a failure (exit 1). */
export const ADMIN_REFUSED = -32010
const MAX_BODY = 64 * 1024

export function adminSocketPath(dataDir: string): string {
  return join(dataDir, ADMIN_SOCKET_FILE)
}

export interface AdminSocket {
  path: string
  close(): Promise<void>
}

type AdminMethod = (params: unknown[]) => Promise<unknown>

function methods(level: ChainLevel, dataDir: string): Record<string, AdminMethod> {
  return {
    admin_dbStats: () => chainStats(level, dataDir),
    admin_backup: (params) => {
      const dir = params[0]
      if (typeof dir !== 'string' || !isAbsolute(dir)) throw new Refusal('admin_backup expects one absolute folder path')
      return backupChain(level, dataDir, dir)
    },
    admin_export: (params) => {
      const [file, from, to] = params
      const num = (v: unknown): bigint | undefined => (typeof v === 'string' && /^[0-9]+$/.test(v) ? BigInt(v) : undefined)
      if (typeof file !== 'string' || !isAbsolute(file)) throw new Refusal('admin_export expects an absolute file path')
      return exportChain(level, file, { from: num(from), to: num(to) })
    },
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (chunk: string) => {
      body += chunk
      if (body.length > MAX_BODY) req.destroy(new Error('request too large'))
    })
    req.on('end', () => resolve(body))
    req.on('error', reject)
  })
}

async function answer(table: Record<string, AdminMethod>, req: IncomingMessage, res: ServerResponse): Promise<void> {
  let id: unknown = null
  let reply: unknown
  try {
    if (req.method !== 'POST') throw Object.assign(new Error('POST a JSON-RPC request'), { code: -32600 })
    const request = JSON.parse(await readBody(req)) as { id?: unknown; method?: unknown; params?: unknown }
    id = request.id ?? null
    const method = typeof request.method === 'string' ? table[request.method] : undefined
    if (method === undefined) throw Object.assign(new Error(`the method ${String(request.method)} does not exist/is not available`), { code: -32601 })
    reply = { jsonrpc: '2.0', id, result: await method(Array.isArray(request.params) ? request.params : []) }
  } catch (err) {
    const code = err instanceof Refusal ? ADMIN_REFUSED : ((err as { code?: unknown }).code as number | undefined)
    reply = { jsonrpc: '2.0', id, error: { code: typeof code === 'number' ? code : -32603, message: (err as Error).message } }
  }
  res.writeHead(200, { 'content-type': 'application/json' })
  res.end(JSON.stringify(reply))
}

/**
 * Serves the admin methods on <dataDir>/admin.sock. A socket file left by a killed node is replaced
 * (this process holds the LevelDB lock, so no other node can be serving it). Returns undefined, with
 * a warning, when the path is too long for a unix socket.
 */
export async function startAdminSocket(level: ChainLevel, dataDir: string, warn: (message: string) => void): Promise<AdminSocket | undefined> {
  const path = adminSocketPath(dataDir)
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH) {
    warn(`admin socket disabled: ${path} is longer than ${MAX_SOCKET_PATH} bytes; keel db stats and keel backup need the node stopped`)
    return undefined
  }
  if (existsSync(path)) rmSync(path, { force: true })
  const table = methods(level, dataDir)
  const server: Server = createServer((req, res) => void answer(table, req, res))
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(path, () => {
      server.off('error', reject)
      resolve()
    })
  })
  chmodSync(path, 0o600)
  return {
    path,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}
