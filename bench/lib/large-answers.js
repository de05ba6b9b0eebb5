// The load generator for large answers: `connections` callers, each on its own kept-alive node:http
// connection, send the same request in turn and read each answer as bytes. autocannon, which the other
// HTTP scenarios use, builds every answer into a string to check it; at ~2 MB an answer that string, not
// the node under test, set the rate (docs/measurements.md, "Changes to the bench's method").

import http from 'node:http'
import { post } from './json-rpc.js'

/** A connection silent this long fails its request (autocannon's timeout), rather than hang the run. */
const TIMEOUT_MS = 10_000

/**
 * POSTs `body` over `connections` connections for `duration` seconds. The first answer is parsed in full
 * and handed to `check` (which throws if it is wrong); every later answer must equal it byte for byte.
 * @returns {Promise<{ value, unit, calls, errors, p99 }>}
 */
export async function largeAnswers(url, { body, duration, connections = 8, check }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections })
  const send = () => post(url, body, { agent, timeoutMs: TIMEOUT_MS })
  const latencies = []
  const firstSent = performance.now()
  const first = await send()
  latencies.push(performance.now() - firstSent)
  check(JSON.parse(first.bytes.toString()))
  // the first answer is a call of the scenario too: its CPU is in what run.js measures around it
  let calls = 1
  let errors = 0
  const until = Date.now() + duration * 1000
  await Promise.all(Array.from({ length: connections }, async () => {
    // bounded by time, and by count should the node answer implausibly fast
    for (let n = 0; Date.now() < until && n < 1_000_000; n++) {
      const sent = performance.now()
      try {
        const { status, bytes } = await send()
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
