// The load generator's JSON-RPC clients. `rpc`: one request at a time per caller over lean-http.js's
// kept-alive connections (the transfer runs; on a 2-core host the load generator's CPU is taken from the
// node under test). `post`: node:http with an agent and a timeout of the caller's (large answers).

import http from 'node:http'
import { LeanHttpClient } from './lean-http.js'

const sharedAgent = new http.Agent({ keepAlive: true, maxSockets: 256 })

/**
 * POSTs a JSON body to `url` and resolves to the answer's status and bytes. `timeoutMs`: a connection
 * silent that long fails the request (none by default).
 */
export function post(url, body, { agent = sharedAgent, timeoutMs } = {}) {
  const u = new URL(url)
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: u.hostname, port: u.port, path: u.pathname, method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        const chunks = []
        res.on('data', (c) => chunks.push(c))
        res.on('error', reject)
        res.on('end', () => resolve({ status: res.statusCode, bytes: Buffer.concat(chunks) }))
      },
    )
    if (timeoutMs !== undefined) req.setTimeout(timeoutMs, () => req.destroy(new Error('timeout')))
    req.on('error', reject)
    req.end(body)
  })
}

// one lean client per node's URL
const clients = new Map()

/** POSTs one JSON-RPC request to `url`; resolves to its result, rejects with the error's message. */
export async function rpc(url, method, params = []) {
  let client = clients.get(url)
  if (client === undefined) clients.set(url, (client = new LeanHttpClient(url)))
  const { status, bytes } = await client.post(JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }))
  return resultOf(method, status, bytes)
}

/** The result of a JSON-RPC answer's bytes; throws with the error's message, or when it is not JSON. */
export function resultOf(method, status, bytes) {
  let answer
  try {
    answer = JSON.parse(bytes.toString())
  } catch {
    throw new Error(`${method}: HTTP ${status}, not JSON`)
  }
  if (answer.error) throw new Error(`${method}: ${answer.error.message}`)
  return answer.result
}
