// The load generator's JSON-RPC client for one request at a time per caller: node:http over kept-alive
// connections. fetch() (undici in Node 20) costs the load generator ~450-650 µs of CPU a request against
// ~90-160 µs for this (64 concurrent callers, bench/README "Method"), and on a 2-core host the load
// generator's CPU is taken from the node under test.

import http from 'node:http'

const agent = new http.Agent({ keepAlive: true, maxSockets: 256 })

/** POSTs one JSON-RPC request to `url`; resolves to its result, rejects with the error's message. */
export function rpc(url, method, params = []) {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params })
  const u = new URL(url)
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: u.hostname, port: u.port, path: u.pathname, method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        const chunks = []
        res.on('data', (c) => chunks.push(c))
        res.on('error', reject)
        res.on('end', () => {
          let answer
          try {
            answer = JSON.parse(Buffer.concat(chunks).toString())
          } catch {
            return reject(new Error(`${method}: HTTP ${res.statusCode}, not JSON`))
          }
          if (answer.error) reject(new Error(`${method}: ${answer.error.message}`))
          else resolve(answer.result)
        })
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}
