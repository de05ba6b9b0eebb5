// Writes docs/metrics.md from the metrics registry (src/metrics/, built to dist/): every metric a node
// registers, with its type, labels and help, so the reference cannot drift from what /metrics serves.
// Run `npm run docs:metrics`; test/docs/reference-docs.test.js fails when the committed file differs.

import { writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { createMetrics } from '../dist/metrics/metrics.js'
import { bindNodeSources } from '../dist/metrics/sources.js'

export const METRICS_DOC = new URL('../docs/metrics.md', import.meta.url)

/** Areas by name prefix, in the order the page lists them. */
const AREAS = [
  ['keel_rpc_', 'JSON-RPC'],
  ['keel_ws_', 'WebSocket'],
  ['keel_ratelimit_', 'Rate limiting'],
  ['keel_chain_', 'Chain'],
  ['keel_txpool_', 'Txpool'],
  ['keel_call_', 'Call pool'],
  ['keel_storage_', 'Storage'],
  ['keel_', 'Build'],
]

/** Every metric of a running node: the registry as createMetrics builds it, bound to idle stand-in sources. */
async function registeredMetrics() {
  const metrics = createMetrics({ isKnownMethod: () => true, version: '0.0.0', chainId: 1, processMetrics: false })
  bindNodeSources(metrics, {
    head: () => ({ number: 0n, timestamp: 0n }),
    txpoolStatus: async () => ({ pending: 0, queued: 0 }),
    producerSubmits: { batches: 0, items: 0 },
    callPool: { stats: {}, observer: undefined },
    ws: { transport: () => ({ open: 0, closedTooSlow: 0, refusedPerIp: 0 }), subscriptions: () => ({}) },
    databaseFolder: fileURLToPath(new URL('../does-not-exist', import.meta.url)),
  })
  const out = []
  for (const metric of metrics.register.registry.getMetricsAsArray()) {
    const { type } = await metric.get()
    out.push({ name: metric.name, type, labels: [...(metric.labelNames ?? [])], help: metric.help })
  }
  return out
}

const cell = (text) => String(text).replaceAll('|', '\\|')

export async function renderMetricsDoc() {
  const metrics = await registeredMetrics()
  const lines = [
    '# Metrics reference',
    '',
    '<!-- Generated from src/metrics/ by `npm run docs:metrics`; do not edit by hand. -->',
    '',
    'Keel serves Prometheus metrics on its own listener (`--metrics-host`, default `127.0.0.1`, and',
    '`--metrics-port`, default `9545`), path `/metrics`; the public RPC port never serves them.',
    '`--metrics=false` turns them off. Gauges read from another component (the head, the txpool, the call',
    'pool, the database size) are computed when Prometheus scrapes.',
    '',
    'Labels are bounded, so no request can create a new series: `method` is a registered method, `other`',
    '(an unknown method) or `invalid` (a message refused before a method ran: parse error, invalid request,',
    'bad batch). `outcome` is `ok` or the error class of the code: `invalid_params`, `method_not_found`,',
    '`invalid_request`, `parse_error`, `internal_error`, `server_error` (-32000), `resource_not_found`,',
    '`timeout`, `response_too_large`, `not_supported`, `limit_exceeded`, `reverted` (code 3) or `error`.',
    '`transport` is `http` or `ws`; `kind` is a subscription kind; `reason` is a txpool refusal such as',
    '`nonce_too_low`, `already_known`, `underpriced`, `insufficient_funds`, `invalid_sender`, `pool_full` or',
    '`other`. Request and response sizes are string lengths, which equal bytes for ASCII JSON.',
    '',
    'Besides the metrics below, the node exports prom-client\'s process and Node.js metrics with the same',
    'prefix (`keel_process_*`, `keel_nodejs_*`: CPU, memory, heap, garbage collection, event loop lag,',
    'handles); which of them exist depends on the platform.',
    '',
  ]
  for (const [prefix, area] of AREAS) {
    const inArea = metrics.filter((m) => m.name.startsWith(prefix) && !m.done)
    if (inArea.length === 0) continue
    lines.push(`## ${area}`, '', '| Metric | Type | Labels | Help |', '|---|---|---|---|')
    for (const m of inArea) {
      m.done = true
      lines.push(`| \`${m.name}\` | ${m.type} | ${m.labels.map((l) => `\`${l}\``).join(', ')} | ${cell(m.help)} |`)
    }
    lines.push('')
  }
  const left = metrics.filter((m) => !m.done)
  if (left.length > 0) throw new Error(`metrics outside every area: ${left.map((m) => m.name).join(', ')}`)
  return lines.join('\n')
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(METRICS_DOC, await renderMetricsDoc())
  console.log(`wrote ${fileURLToPath(METRICS_DOC)}`)
}
