// Idle WebSocket connections: N sockets from 40 loopback addresses (127.0.1.1 ...) held open without a
// message, while a well-behaved HTTP client calls eth_getBlockByNumber('latest') every 20 ms. Reports the
// node's RSS before, with the sockets open and after they close (bytes per idle connection), and the
// client's latency before, while the sockets connect and while they are held (the client runs in a
// worker thread, so that this process's own sockets do not delay its timing).
//
//   node bench/macro/idle-ws.js [--connections N] [--quick]     (default 10,000; --quick 2,000)
//
// This process holds N client sockets too: the open-files limit (ulimit -n) must exceed N + a few hundred.

import { readFileSync } from 'node:fs'
import { Worker } from 'node:worker_threads'
import WebSocket from 'ws'
import { startNode } from '../../test/helpers/node.js'

const ADDRESSES = 40
const CONNECT_BATCH = 200
const SETTLE_MS = 5_000

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const rssOf = (pid) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * 1024

function percentiles(values) {
  const sorted = [...values].sort((a, b) => a - b)
  const at = (p) => (sorted.length === 0 ? null : Number(sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))].toFixed(1)))
  return { calls: sorted.length, 'p50 ms': at(0.5), 'p95 ms': at(0.95), 'max ms': sorted.length === 0 ? null : Number(sorted[sorted.length - 1].toFixed(1)) }
}

/**
 * The well-behaved client, in a worker thread of its own: its calls are timed on an event loop that the
 * 10,000 sockets of this process do not hold up. Calls every 20 ms; latencies go to the current phase.
 */
const CLIENT = `
const { parentPort, workerData } = require('node:worker_threads')
const phases = {}
let phase = 'before'
let stopped = false
let errors = 0
const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getBlockByNumber', params: ['latest', false] })
parentPort.on('message', (m) => {
  if (m.phase !== undefined) phase = m.phase
  if (m.stop) stopped = true
})
;(async () => {
  for (let i = 0; !stopped && i < 1000000; i++) {
    const started = performance.now()
    try {
      const res = await fetch(workerData.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
      const json = await res.json()
      if (json.result === undefined || json.result.hash === undefined) errors++
    } catch {
      errors++
    }
    ;(phases[phase] ??= []).push(performance.now() - started)
    await new Promise((r) => setTimeout(r, 20))
  }
  parentPort.postMessage({ phases, errors })
})()
`

function wellBehaved(url) {
  const worker = new Worker(CLIENT, { eval: true, workerData: { url } })
  const done = new Promise((resolve) => worker.once('message', resolve))
  return {
    set phase(name) {
      worker.postMessage({ phase: name })
    },
    async stop() {
      worker.postMessage({ stop: true })
      const { phases, errors } = await done
      await worker.terminate()
      return { phases: new Map(Object.entries(phases)), errors }
    },
  }
}

function connect(url, localAddress) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { localAddress, perMessageDeflate: false })
    ws.once('open', () => resolve(ws))
    ws.once('error', reject)
    ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: HTTP ${res.statusCode}`)))
  })
}

export async function run({ connections }) {
  const perAddress = Math.ceil(connections / ADDRESSES)
  const node = await startNode({
    blockTime: 1,
    args: ['--rate-limit', '0', '--ws-max-connections', String(connections + 100), '--ws-max-connections-per-ip', String(perAddress + 10)],
  })
  const sockets = []
  try {
    await sleep(SETTLE_MS * 5) // the warm-ups after start, and the memory they leave behind
    const client = wellBehaved(node.url)
    await sleep(SETTLE_MS)
    const rssBefore = rssOf(node.proc.pid)
    client.phase = 'connecting'
    const connectStarted = performance.now()
    for (let i = 0; i < connections; i += CONNECT_BATCH) {
      const batch = Array.from({ length: Math.min(CONNECT_BATCH, connections - i) }, (_, j) => connect(node.wsUrl, `127.0.1.${((i + j) % ADDRESSES) + 1}`))
      for (const ws of await Promise.all(batch)) {
        ws.on('error', () => {})
        sockets.push(ws)
      }
    }
    const connectMs = performance.now() - connectStarted
    client.phase = 'held'
    await sleep(SETTLE_MS * 2)
    const rssHeld = rssOf(node.proc.pid)
    client.phase = 'after close'
    for (const ws of sockets.splice(0)) ws.terminate()
    await sleep(SETTLE_MS)
    const rssAfter = rssOf(node.proc.pid)
    const { phases, errors } = await client.stop()
    return {
      memory: [{
        connections,
        addresses: ADDRESSES,
        'connect s': Number((connectMs / 1000).toFixed(1)),
        'RSS before MiB': Math.round(rssBefore / 2 ** 20),
        'RSS held MiB': Math.round(rssHeld / 2 ** 20),
        'RSS after close MiB': Math.round(rssAfter / 2 ** 20),
        'bytes per idle connection (held - before)': Math.round((rssHeld - rssBefore) / connections),
        'bytes per idle connection (held - after close)': Math.round((rssHeld - rssAfter) / connections),
        'client errors': errors,
      }],
      latency: [...phases].map(([phase, ms]) => ({ phase, ...percentiles(ms) })),
    }
  } finally {
    for (const ws of sockets) ws.terminate()
    await node.stop()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const argv = process.argv.slice(2)
  const at = argv.indexOf('--connections')
  const connections = at >= 0 ? Number(argv[at + 1]) : argv.includes('--quick') ? 2_000 : 10_000
  const { memory, latency } = await run({ connections })
  console.table(memory)
  console.table(latency)
}
