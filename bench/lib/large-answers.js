// The load generator for large answers: `connections` callers, each on its own kept-alive node:http
// connection, send the same request in turn and read each answer as bytes. autocannon, which the other
// HTTP scenarios use, builds every answer into a string to check it; at ~2 MB an answer that string, not
// the node under test, set the rate (bench/README "Changes to the method").

import http from 'node:http'

/**
 * POSTs `body` over `connections` connections for `duration` seconds. The first answer is parsed in full
 * and handed to `check` (which throws if it is wrong); every later answer must equal it byte for byte.
 * @returns {Promise<{ value, unit, calls, errors, p99 }>}
 */
export async function largeAnswers(url, { body, duration, connections = 8, check }) {
  const u = new URL(url)
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections })
  const post = () => new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      const chunks = []
      res.on('data', (c) => chunks.push(c))
      res.on('error', reject)
      res.on('end', () => resolve({ status: res.statusCode, bytes: Buffer.concat(chunks) }))
    })
    // a connection silent for 10 s (autocannon's timeout) is an error, not a hung run
    req.setTimeout(10_000, () => req.destroy(new Error('timeout')))
    req.on('error', reject)
    req.end(body)
  })
  const first = await post()
  check(JSON.parse(first.bytes.toString()))
  let calls = 0
  let errors = 0
  const latencies = []
  const until = Date.now() + duration * 1000
  await Promise.all(Array.from({ length: connections }, async () => {
    // bounded by time, and by count should the node answer implausibly fast
    for (let n = 0; Date.now() < until && n < 1_000_000; n++) {
      const sent = performance.now()
      try {
        const { status, bytes } = await post()
        if (status !== 200 || !bytes.equals(first.bytes)) errors++
      } catch {
        errors++
      }
      latencies.push(performance.now() - sent)
      calls++
    }
  }))
  agent.destroy()
  latencies.sort((a, b) => a - b)
  return { value: Math.round(calls / duration), unit: 'req/s', calls, errors, p99: latencies[Math.floor(latencies.length * 0.99)] }
}
