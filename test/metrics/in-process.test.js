// In-process checks of the metric families, the RPC recorder, the rejection reasons and the strictness
// of the test parser itself (a parser that accepts anything would prove nothing).

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Registry } from 'prom-client'
import { createMetrics } from '../../dist/metrics/metrics.js'
import { txRejectReason } from '../../dist/metrics/txpool.js'
import { parsePrometheusText, total, value } from '../helpers/prom.js'

const known = new Set(['eth_blockNumber', 'eth_call'])
const fresh = () => createMetrics({ isKnownMethod: (m) => known.has(m), version: '9.9.9', chainId: 24589, processMetrics: false }, new Registry())

test('calls are recorded by method, transport and outcome; unknown methods share "other"', async () => {
  const metrics = fresh()
  metrics.rpc.recordCall('eth_blockNumber', 'http', 0, 0.2)
  metrics.rpc.recordCall('eth_blockNumber', 'ws', 0, 3)
  metrics.rpc.recordCall('eth_call', 'http', 3, 12)
  metrics.rpc.recordCall('eth_call', 'http', -31999, 1)
  for (let i = 0; i < 100; i++) metrics.rpc.recordCall(`junk_${i}`, 'http', -32601, 0.1)
  metrics.rpc.recordRejected('http', -32700)
  metrics.rpc.recordBatch('ws', 7)
  const m = parsePrometheusText(await metrics.register.text())
  assert.equal(value(m, 'keel_rpc_requests_total', { method: 'eth_blockNumber', transport: 'http', outcome: 'ok' }), 1)
  assert.equal(value(m, 'keel_rpc_requests_total', { method: 'eth_blockNumber', transport: 'ws', outcome: 'ok' }), 1)
  assert.equal(value(m, 'keel_rpc_requests_total', { method: 'eth_call', outcome: 'reverted' }), 1)
  assert.equal(value(m, 'keel_rpc_requests_total', { method: 'eth_call', outcome: 'error' }), 1)
  assert.equal(value(m, 'keel_rpc_requests_total', { method: 'other', outcome: 'method_not_found' }), 100)
  assert.equal(value(m, 'keel_rpc_requests_total', { method: 'invalid', outcome: 'parse_error' }), 1)
  assert.equal(m.get('keel_rpc_requests_total').samples.length, 6)
  assert.equal(value(m, 'keel_rpc_request_duration_seconds_count', { method: 'eth_blockNumber' }), 2)
  assert.equal(value(m, 'keel_rpc_request_duration_seconds_bucket', { method: 'eth_blockNumber', le: '0.00025' }), 1)
  assert.equal(value(m, 'keel_rpc_request_duration_seconds_bucket', { method: 'eth_blockNumber', le: '0.005' }), 2)
  assert.equal(total(m, 'keel_rpc_request_duration_seconds_count', { method: 'invalid' }), 0, 'no empty histogram for "invalid"')
  assert.equal(value(m, 'keel_rpc_batch_size_bucket', { transport: 'ws', le: '10' }), 1)
  assert.equal(value(m, 'keel_rpc_batch_size_bucket', { transport: 'ws', le: '5' }), 0)
  assert.equal(value(m, 'keel_build_info', { version: '9.9.9' }), 1)
})

test('subscription kinds and rate limit decisions are bounded too', async () => {
  const metrics = fresh()
  metrics.ws.notified('newHeads', 3)
  metrics.ws.notified('bogus', 1)
  metrics.ws.notified('bogus2', 1)
  const limiter = { trackedClients: 4, take: (subject, cost) => (cost > 1 ? 2 : 0) }
  metrics.rateLimit.observe(limiter)
  limiter.take({ clientIp: '1.2.3.4', transport: 'ws' }, 1)
  limiter.take({ clientIp: '1.2.3.4', transport: 'http' }, 5)
  const m = parsePrometheusText(await metrics.register.text())
  assert.equal(value(m, 'keel_ws_notifications_sent_total', { kind: 'newHeads' }), 3)
  assert.equal(value(m, 'keel_ws_notifications_sent_total', { kind: 'other' }), 2)
  assert.equal(value(m, 'keel_ratelimit_decisions_total', { decision: 'allowed', transport: 'ws' }), 1)
  assert.equal(value(m, 'keel_ratelimit_decisions_total', { decision: 'limited', transport: 'http' }), 1)
  assert.equal(value(m, 'keel_ratelimit_tracked_clients'), 4)
})

test('block stats from the producer thread reach the chain histograms', async () => {
  const metrics = fresh()
  metrics.chain.onBlock({
    kind: 'block',
    head: { number: 5n, gasUsed: 42_000n },
    txHashes: ['0x1', '0x2'],
    stats: { buildMs: 3, commitMs: 7, writeMs: 2, droppedTxs: 1 },
  })
  const m = parsePrometheusText(await metrics.register.text())
  assert.equal(value(m, 'keel_chain_blocks_total'), 1)
  assert.equal(value(m, 'keel_chain_transactions_total'), 2)
  assert.equal(value(m, 'keel_chain_gas_used_total'), 42_000)
  assert.equal(value(m, 'keel_chain_block_build_seconds_sum'), 0.003)
  assert.equal(value(m, 'keel_chain_block_commit_seconds_sum'), 0.007)
  assert.equal(value(m, 'keel_storage_write_batch_seconds_sum'), 0.002)
  assert.equal(value(m, 'keel_txpool_dropped_total'), 1)
})

test('rejected transactions get a bounded reason from the geth wording', () => {
  const err = (message, code = -32000) => Object.assign(new Error(message), { code })
  assert.equal(txRejectReason(err('nonce too low: next nonce 5, tx nonce 1')), 'nonce_too_low')
  assert.equal(txRejectReason(err('already known')), 'already_known')
  assert.equal(txRejectReason(err('replacement transaction underpriced')), 'replacement_underpriced')
  assert.equal(txRejectReason(err('transaction underpriced')), 'underpriced')
  assert.equal(txRejectReason(err('insufficient funds for gas * price + value: balance 0, tx cost 1, overshot 1')), 'insufficient_funds')
  assert.equal(txRejectReason(err('invalid sender: recovery failed')), 'invalid_sender')
  assert.equal(txRejectReason(err('bad', -32602)), 'invalid_params')
  assert.equal(txRejectReason(err('something new and unexpected')), 'other')
  assert.equal(txRejectReason('not an error'), 'other')
})

test('the test parser rejects malformed exposition text', () => {
  const ok = '# HELP a_total A.\n# TYPE a_total counter\na_total{x="1"} 3\n'
  assert.equal(value(parsePrometheusText(ok), 'a_total', { x: '1' }), 3)
  const bad = [
    'a_total 3', // no trailing newline
    '# TYPE a counter\na -1\n', // negative counter
    '# TYPE a gauge\na{x="1} 1\n', // unterminated label value
    '# TYPE a gauge\na{x="1",x="2"} 1\n', // duplicate label
    '# TYPE a gauge\na 1\na 2\n', // duplicate series
    '# TYPE a gauge\na one\n', // not a float
    '# TYPE a gauge\n# TYPE a gauge\na 1\n', // second TYPE
    '# TYPE a gauge\na 1\n# TYPE b gauge\nb 1\na{y="1"} 2\n', // not contiguous
    '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n', // not cumulative
    '# TYPE h histogram\nh_bucket{le="1"} 1\nh_sum 1\nh_count 1\n', // no +Inf
    '# TYPE h histogram\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 1\n', // +Inf != count
    '# TYPE h histogram\nh 1\n', // bare sample in a histogram
    '# TYPE a gauge\na{x="\\q"} 1\n', // bad escape
  ]
  for (const text of bad) assert.throws(() => parsePrometheusText(text), undefined, JSON.stringify(text))
})
