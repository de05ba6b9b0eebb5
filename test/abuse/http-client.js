// Raw HTTP for the abuse tests: a chosen local address (127.0.0.2 ... are distinct peers on Linux),
// chosen headers, and the exact status, headers and body of the answer.

import http from 'node:http'

/**
 * @param {string} url
 * @param {{method?: string, body?: string | Buffer, headers?: Record<string,string>, localAddress?: string, agent?: http.Agent, path?: string, timeoutMs?: number}} [options]
 * @returns {Promise<{status: number, headers: http.IncomingHttpHeaders, text: string, ms: number}>}
 */
export function request(url, options = {}) {
  const { method = 'POST', body, headers = {}, localAddress, agent, path, timeoutMs = 20_000 } = options
  const target = new URL(url)
  const started = performance.now()
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: path ?? target.pathname + target.search,
        method,
        localAddress,
        agent,
        headers: { ...(method === 'POST' ? { 'content-type': 'application/json' } : {}), ...headers },
        timeout: timeoutMs,
      },
      (res) => {
        const chunks = []
        res.on('data', (c) => chunks.push(c))
        res.on('end', () =>
          resolve({ status: res.statusCode, headers: res.headers, text: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - started }),
        )
        // The answer had started: anything cutting it short now is a truncated response.
        const truncated = (err) => reject(Object.assign(err ?? new Error('response aborted'), { truncated: true }))
        res.on('aborted', () => truncated())
        res.on('error', truncated)
      },
    )
    req.on('timeout', () => req.destroy(new Error('request timed out')))
    req.on('error', reject)
    req.end(body)
  })
}

export const call = (method, params = [], id = 1) => JSON.stringify({ jsonrpc: '2.0', id, method, params })

/** A seeded PRNG (mulberry32): the same seed gives the same hostile inputs on every run. */
export function prng(seed) {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return {
    next,
    int: (n) => Math.floor(next() * n),
    pick: (list) => list[Math.floor(next() * list.length)],
    bytes: (n) => {
      const out = Buffer.alloc(n)
      for (let i = 0; i < n; i++) out[i] = Math.floor(next() * 256)
      return out
    },
  }
}

/** Resident set size of a process in bytes, from /proc/PID/status (VmRSS). */
export function rssOf(pid) {
  return import('node:fs').then(({ readFileSync }) => {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return match === null ? 0 : Number(match[1]) * 1024
  })
}
