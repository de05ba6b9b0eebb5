// The load generator's JSON-RPC client for one request at a time per caller: node:http over kept-alive
// connections. fetch() (undici in Node 20) costs the load generator ~450-650 µs of CPU a request against
// ~90-160 µs for this (64 concurrent callers, bench/README "Method"), and on a 2-core host the load
// generator's CPU is taken from the node under test.

import http from 'node:http'

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

/** POSTs one JSON-RPC request to `url`; resolves to its result, rejects with the error's message. */
export async function rpc(url, method, params = []) {
  const { status, bytes } = await post(url, JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }))
  let answer
  try {
    answer = JSON.parse(bytes.toString())
  } catch {
    throw new Error(`${method}: HTTP ${status}, not JSON`)
  }
  if (answer.error) throw new Error(`${method}: ${answer.error.message}`)
  return answer.result
}
