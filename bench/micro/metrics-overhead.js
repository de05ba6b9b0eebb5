// The cost of metrics on the hot path: eth_blockNumber through Envelope.handle with and without the
// observability wiring the node uses (observedEnvelope: per-call onCall hook with method/outcome counters
// and the duration histogram, plus in-flight and byte counters per message). Rounds alternate between
// the variants so that CPU frequency drift hits both alike; the median round decides. Prints JSON.
//
// A second measurement does the same over HTTP (the node's uWS RpcServer in this process, autocannon in
// a child process): requests per second of the whole server with and without metrics.
//
//   node bench/micro/metrics-overhead.js [--quick] [--no-http]

import { spawn } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Registry } from 'prom-client'
import { silentLogger } from '../../dist/logging/logger.js'
import { createMetrics } from '../../dist/metrics/metrics.js'
import { observedEnvelope } from '../../dist/metrics/metered-envelope.js'
import { Dispatcher } from '../../dist/rpc/dispatch.js'
import { Envelope } from '../../dist/rpc/envelope.js'
import { defaultTransportLimits } from '../../dist/rpc/limits.js'
import { RpcServer } from '../../dist/rpc/server.js'

const autocannonBin = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'node_modules', '.bin', 'autocannon')

const TARGET_PERCENT = 3

function variants() {
  const dispatcher = new Dispatcher()
  let head = 0x1234n
  // as the real handler: the head number, hex-encoded, from memory
  dispatcher.register('eth_blockNumber', () => '0x' + head.toString(16))
  dispatcher.register('eth_chainId', () => '0x600d')
  const metrics = createMetrics(
    { isKnownMethod: (m) => dispatcher.has(m), version: 'bench', chainId: 24589, processMetrics: false },
    new Registry(),
  )
  return {
    plain: new Envelope(dispatcher, defaultTransportLimits),
    metrics: observedEnvelope(dispatcher, defaultTransportLimits, {}, metrics, silentLogger),
    registry: metrics.register,
    tick: () => head++,
  }
}

async function round(envelope, body, ctx, calls) {
  const started = process.hrtime.bigint()
  for (let i = 0; i < calls; i++) await envelope.handle(body, ctx)
  return Number(process.hrtime.bigint() - started) / 1e9
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

/** Requests per second of `envelope` behind a real RpcServer, loaded by autocannon in a child process. */
async function httpRequestsPerSecond(envelope, body, seconds) {
  const server = new RpcServer(envelope, { host: '127.0.0.1', port: 0, limits: defaultTransportLimits })
  const port = await server.listen()
  try {
    const args = ['-c', '32', '-d', String(seconds), '-m', 'POST', '-H', 'content-type=application/json', '-b', body, '-j', `http://127.0.0.1:${port}/`]
    const output = await new Promise((resolve, reject) => {
      const child = spawn(autocannonBin, args, { stdio: ['ignore', 'pipe', 'ignore'] })
      let out = ''
      child.stdout.on('data', (chunk) => (out += chunk))
      child.once('error', reject)
      child.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`autocannon exited ${code}`))))
    })
    const result = JSON.parse(output)
    if (result.non2xx > 0 || result.errors > 0) throw new Error(`autocannon saw ${result.non2xx} non-2xx and ${result.errors} errors`)
    return result.requests.average
  } finally {
    await server.close()
  }
}

async function httpOverhead(body, quick) {
  const seconds = quick ? 2 : 4
  const rounds = quick ? 3 : 5
  const plainRps = []
  const meteredRps = []
  for (let r = 0; r < rounds; r++) {
    // fresh envelopes per round keep both variants equally warm
    const { plain, metrics } = variants()
    if (r % 2 === 0) {
      plainRps.push(await httpRequestsPerSecond(plain, body, seconds))
      meteredRps.push(await httpRequestsPerSecond(metrics, body, seconds))
    } else {
      meteredRps.push(await httpRequestsPerSecond(metrics, body, seconds))
      plainRps.push(await httpRequestsPerSecond(plain, body, seconds))
    }
  }
  const without = median(plainRps)
  const withMetrics = median(meteredRps)
  const overheadPercent = ((without - withMetrics) / without) * 100
  return {
    path: 'HTTP POST through RpcServer (uWS), autocannon -c 32 in a child process',
    seconds,
    rounds,
    withoutMetricsRequestsPerSec: Math.round(without),
    withMetricsRequestsPerSec: Math.round(withMetrics),
    overheadPercent: Math.round(overheadPercent * 100) / 100,
    withinTarget: overheadPercent < TARGET_PERCENT,
    // the spread between rounds of one variant shows how much of the difference is noise
    roundsWithout: plainRps.map(Math.round),
    roundsWith: meteredRps.map(Math.round),
  }
}

export async function run({ quick = false, http = true } = {}) {
  const { plain, metrics, registry } = variants()
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] })
  const ctx = { transport: 'http', clientIp: '127.0.0.1' }
  const calls = quick ? 50_000 : 200_000
  const rounds = quick ? 5 : 11
  // warm both paths up to optimised code
  await round(plain, body, ctx, calls)
  await round(metrics, body, ctx, calls)
  const plainSeconds = []
  const meteredSeconds = []
  for (let r = 0; r < rounds; r++) {
    if (r % 2 === 0) {
      plainSeconds.push(await round(plain, body, ctx, calls))
      meteredSeconds.push(await round(metrics, body, ctx, calls))
    } else {
      meteredSeconds.push(await round(metrics, body, ctx, calls))
      plainSeconds.push(await round(plain, body, ctx, calls))
    }
  }
  const plainOps = calls / median(plainSeconds)
  const meteredOps = calls / median(meteredSeconds)
  const overheadPercent = ((plainOps - meteredOps) / plainOps) * 100
  // sanity: the metered runs were actually recorded
  const exposition = await registry.text()
  const recorded = /keel_rpc_requests_total\{method="eth_blockNumber",transport="http",outcome="ok"\} (\d+)/.exec(exposition)
  return {
    bench: 'metrics-overhead',
    method: 'eth_blockNumber',
    targetPercent: TARGET_PERCENT,
    envelope: {
    path: 'Envelope.handle (in-process, no network)',
    callsPerRound: calls,
    rounds,
    withoutMetricsOpsPerSec: Math.round(plainOps),
    withMetricsOpsPerSec: Math.round(meteredOps),
    nsPerCallWithout: Math.round(1e9 / plainOps),
    nsPerCallWith: Math.round(1e9 / meteredOps),
    overheadPercent: Math.round(overheadPercent * 100) / 100,
    withinTarget: overheadPercent < TARGET_PERCENT,
    recordedCalls: recorded === null ? 0 : Number(recorded[1]),
    },
    http: http ? await httpOverhead(body, quick) : undefined,
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await run({ quick: process.argv.includes('--quick'), http: !process.argv.includes('--no-http') })
  console.log(JSON.stringify(result, null, 2))
}
