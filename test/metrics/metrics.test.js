// Metrics end to end: a real node, scraped over its metrics listener and parsed with a strict
// Prometheus text parser; every kind of traffic must move the series that describe it.

import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { Wallet } from 'ethers'
import parsePrometheusTextFormat from 'parse-prometheus-text-format'
import YAML from 'yaml'
import { CHAIN_ID, DEV_ADDRESSES, DEV_KEYS, startNode } from '../helpers/node.js'
import { scrape, samples, total, value } from '../helpers/prom.js'
import { rawPost, rpc, rpcResult, sleep, waitForReceipt } from '../helpers/rpc.js'
import { RawWsClient } from '../helpers/ws.js'

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

let node
before(async () => {
  node = await startNode({ blockTime: 0 })
})
after(async () => {
  await node?.stop()
})

const post = (body) => rawPost(node.url, body)
const call = (method, params = [], id = 1) => ({ jsonrpc: '2.0', id, method, params })

test('the node prints its metrics URL and serves valid exposition text there', async () => {
  assert.match(node.metricsUrl ?? '', /^http:\/\/127\.0\.0\.1:\d+\/metrics$/)
  assert.notEqual(new URL(node.metricsUrl).port, String(node.port))
  const m = await scrape(node.metricsUrl)
  for (const name of m.keys()) assert.ok(name.startsWith('keel_'), `${name} lacks the keel_ prefix`)
  assert.equal(value(m, 'keel_build_info', { chain_id: String(CHAIN_ID) }), 1)
  assert.ok(value(m, 'keel_process_resident_memory_bytes') > 0)
  assert.ok(value(m, 'keel_nodejs_heap_size_used_bytes') > 0)
  assert.ok(value(m, 'keel_nodejs_eventloop_lag_seconds') >= 0)
  assert.equal(m.get('keel_nodejs_gc_duration_seconds')?.type, 'histogram')
  assert.ok(value(m, 'keel_storage_db_size_bytes') > 1000, 'the chain database has a size')
})

test('an independent Prometheus text parser reads the same families, types and series', async () => {
  await rpc(node.url, 'eth_blockNumber')
  const text = await (await fetch(node.metricsUrl)).text()
  const strict = await scrape(node.metricsUrl)
  const independent = parsePrometheusTextFormat(text)
  assert.ok(independent.length > 20)
  for (const family of independent) {
    const mine = strict.get(family.name)
    assert.ok(mine !== undefined, `${family.name} is seen by both parsers`)
    assert.equal(family.type.toLowerCase(), mine.type)
    assert.ok(family.name.startsWith('keel_'))
  }
  const requests = independent.find((f) => f.name === 'keel_rpc_requests_total')
  const blockNumber = requests.metrics.find((m) => m.labels.method === 'eth_blockNumber' && m.labels.transport === 'http' && m.labels.outcome === 'ok')
  assert.ok(Number(blockNumber.value) >= 1)
})

test('/metrics is not served on the public RPC port', async () => {
  const res = await fetch(`${node.url}/metrics`)
  const text = await res.text()
  assert.ok(!text.includes('keel_'), 'the public port must not expose metrics')
  const other = await fetch(new URL('/', node.metricsUrl))
  assert.equal(other.status, 404)
  await other.text()
  const wrongMethod = await fetch(node.metricsUrl, { method: 'POST', body: '{}' })
  assert.equal(wrongMethod.status, 405)
  await wrongMethod.text()
})

test('HTTP calls move request counts, durations, bytes and leave nothing in flight', async () => {
  const before = await scrape(node.metricsUrl)
  let sent = 0
  let received = 0
  for (let i = 0; i < 5; i++) {
    const body = JSON.stringify(call('eth_blockNumber', [], i))
    const res = await post(body)
    assert.match(res.json.result, /^0x/)
    sent += body.length
    received += res.text.length
  }
  const after = await scrape(node.metricsUrl)
  const delta = (name, labels) => total(after, name, labels) - total(before, name, labels)
  assert.equal(delta('keel_rpc_requests_total', { method: 'eth_blockNumber', transport: 'http', outcome: 'ok' }), 5)
  assert.equal(delta('keel_rpc_request_duration_seconds_count', { method: 'eth_blockNumber' }), 5)
  assert.ok(delta('keel_rpc_request_duration_seconds_sum', { method: 'eth_blockNumber' }) > 0)
  assert.equal(delta('keel_rpc_request_bytes_total', { transport: 'http' }), sent)
  assert.equal(delta('keel_rpc_response_bytes_total', { transport: 'http' }), received)
  assert.equal(value(after, 'keel_rpc_in_flight_requests', { transport: 'http' }), 0)
})

test('errors are counted by outcome class', async () => {
  const before = await scrape(node.metricsUrl)
  assert.equal((await post(call('eth_getBalance', ['0xnothex', 'latest']))).json.error.code, -32602)
  assert.equal((await post(call('keel_noSuchMethod'))).json.error.code, -32601)
  assert.equal((await post('{"jsonrpc":"2.0","id":1,')).json.error.code, -32700)
  assert.equal((await post('{"jsonrpc":"2.0","id":1}')).json.error.code, -32600)
  // creation code PUSH1 0 PUSH1 0 REVERT: the call reverts (code 3)
  assert.equal((await post(call('eth_call', [{ data: '0x60006000fd' }, 'latest']))).json.error.code, 3)
  const after = await scrape(node.metricsUrl)
  const delta = (labels) => total(after, 'keel_rpc_requests_total', labels) - total(before, 'keel_rpc_requests_total', labels)
  assert.equal(delta({ method: 'eth_getBalance', outcome: 'invalid_params' }), 1)
  assert.equal(delta({ method: 'other', outcome: 'method_not_found' }), 1)
  assert.equal(delta({ method: 'invalid', outcome: 'parse_error' }), 1)
  assert.equal(delta({ method: 'invalid', outcome: 'invalid_request' }), 1)
  assert.equal(delta({ method: 'eth_call', outcome: 'reverted' }), 1)
})

test('unknown methods never create a series of their own', async () => {
  await post(call('warmup_unknownMethod'))
  const seriesOf = (m) =>
    [...samples(m, 'keel_rpc_requests_total'), ...samples(m, 'keel_rpc_request_duration_seconds_count')]
      .map((s) => `${s.name}${JSON.stringify(s.labels)}`)
      .sort()
  const before = await scrape(node.metricsUrl)
  const names = Array.from({ length: 20 }, (_, i) => `probe_method${i}_${Math.random().toString(36).slice(2)}`)
  for (const name of names.slice(0, 10)) await post(call(name))
  await post(names.slice(10).map((name, i) => call(name, [], i)))
  const after = await scrape(node.metricsUrl)
  assert.deepEqual(seriesOf(after), seriesOf(before))
  for (const s of samples(after, 'keel_rpc_requests_total')) assert.ok(!s.labels.method.includes('probe_'), s.labels.method)
  const delta = total(after, 'keel_rpc_requests_total', { method: 'other', outcome: 'method_not_found' }) -
    total(before, 'keel_rpc_requests_total', { method: 'other', outcome: 'method_not_found' })
  assert.equal(delta, 20)
})

test('batches record their size', async () => {
  const before = await scrape(node.metricsUrl)
  const batch = (n) => Array.from({ length: n }, (_, i) => call('eth_chainId', [], i))
  assert.equal((await post(batch(3))).json.length, 3)
  assert.equal((await post(batch(7))).json.length, 7)
  const after = await scrape(node.metricsUrl)
  const delta = (name, labels) => total(after, name, labels) - total(before, name, labels)
  assert.equal(delta('keel_rpc_batch_size_count', { transport: 'http' }), 2)
  assert.equal(delta('keel_rpc_batch_size_sum', { transport: 'http' }), 10)
  assert.equal(delta('keel_rpc_batch_size_bucket', { transport: 'http', le: '5' }), 1)
  assert.equal(delta('keel_rpc_batch_size_bucket', { transport: 'http', le: '10' }), 2)
  assert.equal(delta('keel_rpc_requests_total', { method: 'eth_chainId', transport: 'http', outcome: 'ok' }), 10)
})

test('WebSocket traffic, connections and subscriptions', async () => {
  const before = await scrape(node.metricsUrl)
  const client = await RawWsClient.connect(node.wsUrl)
  try {
    for (let i = 0; i < 3; i++) assert.equal((await client.request('eth_chainId')).result, '0x600d')
    const sub = await client.request('eth_subscribe', ['newHeads'])
    assert.match(sub.result, /^0x/)
    const during = await scrape(node.metricsUrl)
    const delta = (name, labels) => total(during, name, labels) - total(before, name, labels)
    assert.equal(value(during, 'keel_ws_connections'), 1)
    assert.equal(value(during, 'keel_ws_subscriptions', { kind: 'newHeads' }), 1)
    assert.equal(delta('keel_rpc_requests_total', { method: 'eth_chainId', transport: 'ws', outcome: 'ok' }), 3)
    assert.equal(delta('keel_rpc_requests_total', { method: 'eth_subscribe', transport: 'ws', outcome: 'ok' }), 1)
    assert.ok(delta('keel_rpc_request_bytes_total', { transport: 'ws' }) > 0)
    assert.ok(delta('keel_rpc_response_bytes_total', { transport: 'ws' }) > 0)
  } finally {
    client.socket.close()
    await client.closed
  }
  let after
  for (let i = 0; i < 50; i++) {
    after = await scrape(node.metricsUrl)
    if (value(after, 'keel_ws_connections') === 0) break
    await sleep(50)
  }
  assert.equal(value(after, 'keel_ws_connections'), 0)
  assert.equal(value(after, 'keel_ws_subscriptions', { kind: 'newHeads' }), 0)
})

test('transactions and blocks: admission, sealing, head and txpool', async () => {
  const wallet = new Wallet(DEV_KEYS[3])
  const before = await scrape(node.metricsUrl)
  const nonce = Number(await rpcResult(node.url, 'eth_getTransactionCount', [DEV_ADDRESSES[3], 'pending']))
  const raw = await wallet.signTransaction({
    type: 2,
    chainId: CHAIN_ID,
    nonce,
    to: DEV_ADDRESSES[4],
    value: 1n,
    gasLimit: 21_000n,
    maxFeePerGas: 100_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
  })
  const hash = await rpcResult(node.url, 'eth_sendRawTransaction', [raw])
  await waitForReceipt(node.url, hash)
  const replay = await rpc(node.url, 'eth_sendRawTransaction', [raw])
  assert.match(replay.error?.message ?? '', /nonce too low|already known/)
  const garbage = await rpc(node.url, 'eth_sendRawTransaction', ['0x1234'])
  assert.ok(garbage.error !== undefined)
  // eth_sendRawTransactionSync counts as well: one accepted (and mined), one refused
  const next = await wallet.signTransaction({
    type: 2, chainId: CHAIN_ID, nonce: nonce + 1, to: DEV_ADDRESSES[4], value: 1n, gasLimit: 21_000n,
    maxFeePerGas: 100_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n,
  })
  assert.equal((await rpcResult(node.url, 'eth_sendRawTransactionSync', [next])).status, '0x1')
  assert.ok((await rpc(node.url, 'eth_sendRawTransactionSync', [next])).error !== undefined)

  const scrapeStart = Date.now() / 1000
  const after = await scrape(node.metricsUrl)
  const scrapeEnd = Date.now() / 1000
  const delta = (name, labels) => total(after, name, labels) - total(before, name, labels)
  assert.equal(delta('keel_txpool_accepted_total'), 2)
  assert.equal(delta('keel_txpool_rejected_total'), 3)
  const reasons = samples(after, 'keel_txpool_rejected_total').map((s) => s.labels.reason)
  assert.ok(reasons.includes('nonce_too_low') || reasons.includes('already_known'), reasons.join())
  assert.ok(delta('keel_chain_blocks_total') >= 1)
  assert.ok(delta('keel_chain_transactions_total') >= 1)
  assert.ok(delta('keel_chain_gas_used_total') >= 21_000)
  assert.ok(delta('keel_chain_block_build_seconds_count') >= 1)
  assert.ok(delta('keel_chain_block_commit_seconds_count') >= 1)
  assert.ok(delta('keel_storage_write_batch_seconds_count') >= 1)
  assert.ok(delta('keel_chain_block_transactions_sum') >= 1)
  const head = Number(await rpcResult(node.url, 'eth_blockNumber'))
  assert.equal(value(after, 'keel_chain_head_number'), head)
  // the head's age when scraped: its timestamp may lead the clock by a second or more when blocks
  // were sealed faster than one a second (each is a second after its parent), as here
  const headTime = Number((await rpcResult(node.url, 'eth_getBlockByNumber', [`0x${head.toString(16)}`, false])).timestamp)
  const age = value(after, 'keel_chain_head_age_seconds')
  assert.ok(age >= scrapeStart - headTime - 0.01 && age <= scrapeEnd - headTime + 0.01, `head age ${age}, head time ${headTime}, scraped ${scrapeStart}-${scrapeEnd}`)
  assert.ok(age < 60, `head age ${age}`)
  assert.equal(value(after, 'keel_txpool_pending'), 0)
  assert.equal(value(after, 'keel_txpool_queued'), 0)
})

test('concurrent submissions travel to the producer in batches, in order, every one answered', async () => {
  const senders = [DEV_KEYS[6], DEV_KEYS[7], DEV_KEYS[8], DEV_KEYS[9]].map((k) => new Wallet(k))
  const perSender = 10
  const signed = []
  for (const w of senders) {
    const nonce = Number(await rpcResult(node.url, 'eth_getTransactionCount', [w.address, 'pending']))
    for (let k = 0; k < perSender; k++) {
      signed.push(await w.signTransaction({
        type: 2, chainId: CHAIN_ID, nonce: nonce + k, to: DEV_ADDRESSES[1], value: BigInt(k + 1), gasLimit: 21_000n,
        maxFeePerGas: 100_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n,
      }))
    }
  }
  const before = await scrape(node.metricsUrl)
  // all at once: each sender's transactions in nonce order, as a wallet that does not wait would send them
  const hashes = await Promise.all(signed.map((raw) => rpcResult(node.url, 'eth_sendRawTransaction', [raw])))
  const after = await scrape(node.metricsUrl)
  const delta = (name) => total(after, name) - total(before, name)
  assert.equal(delta('keel_txpool_accepted_total'), signed.length)
  assert.equal(delta('keel_txpool_submit_batched_transactions_total'), signed.length)
  const batches = delta('keel_txpool_submit_batches_total')
  assert.ok(batches >= 1 && batches < signed.length, `${signed.length} transactions in ${batches} messages`)
  const receipts = await Promise.all(hashes.map((h) => waitForReceipt(node.url, h)))
  for (const r of receipts) assert.equal(r.status, '0x1')
  for (let s = 0; s < senders.length; s++) {
    const mined = await Promise.all(hashes.slice(s * perSender, (s + 1) * perSender).map((h) => rpcResult(node.url, 'eth_getTransactionByHash', [h])))
    const order = mined.map((tx) => [Number(tx.blockNumber), Number(tx.transactionIndex)])
    for (let k = 1; k < order.length; k++) {
      assert.ok(order[k][0] > order[k - 1][0] || (order[k][0] === order[k - 1][0] && order[k][1] > order[k - 1][1]), `sender ${s}: nonce ${k} mined before nonce ${k - 1}`)
      assert.equal(Number(mined[k].nonce), Number(mined[0].nonce) + k)
    }
  }
})

test('eth_call runs through the call pool and is measured there', async () => {
  const before = await scrape(node.metricsUrl)
  // distinct calls: identical ones may be answered from the call cache without reaching the pool
  for (let i = 0; i < 3; i++) {
    assert.equal(await rpcResult(node.url, 'eth_call', [{ to: DEV_ADDRESSES[5 + i], data: '0x' }, 'latest']), '0x')
  }
  const after = await scrape(node.metricsUrl)
  const delta = (name) => total(after, name) - total(before, name)
  assert.equal(delta('keel_call_pool_calls_total'), 3)
  assert.equal(delta('keel_call_pool_wait_seconds_count'), 3)
  assert.ok(delta('keel_call_pool_run_seconds_count') >= 1)
  assert.ok(value(after, 'keel_call_pool_workers') >= 1)
  assert.equal(value(after, 'keel_call_pool_queue_length'), 0)
  assert.equal(value(after, 'keel_call_pool_busy_workers'), 0)
  assert.equal(
    total(after, 'keel_rpc_requests_total', { method: 'eth_call', outcome: 'ok' }) -
      total(before, 'keel_rpc_requests_total', { method: 'eth_call', outcome: 'ok' }),
    3,
  )
})

test('each thread reports its heap: in use, reserved, outside the heap and live after a full collection', async () => {
  // the workers report every 5 s
  let m
  const deadline = Date.now() + 15_000
  const threadsOf = (families) => new Set(samples(families, 'keel_thread_heap_used_bytes').map((s) => s.labels.thread))
  do {
    m = await scrape(node.metricsUrl)
    const threads = threadsOf(m)
    if (threads.has('producer') && [...threads].some((t) => t.startsWith('call-'))) break
    await sleep(500)
  } while (Date.now() < deadline)
  const threads = [...threadsOf(m)]
  assert.ok(threads.includes('main') && threads.includes('producer') && threads.some((t) => t.startsWith('call-')), `threads reported: ${threads.join(', ')}`)
  for (const thread of threads) {
    const used = value(m, 'keel_thread_heap_used_bytes', { thread })
    const reserved = value(m, 'keel_thread_heap_total_bytes', { thread })
    assert.ok(used > 1_000_000 && used <= reserved, `${thread}: ${used} in use of ${reserved}`)
    assert.ok(value(m, 'keel_thread_external_bytes', { thread }) > 0, `${thread}: external bytes`)
    // a thread without a full collection yet has no live size
    for (const live of samples(m, 'keel_thread_heap_live_bytes', { thread })) {
      assert.ok(live.value > 1_000_000 && live.value <= reserved, `${thread}: live ${live.value} of ${reserved}`)
    }
  }
})

test('rate limiter decisions and tracked clients', async () => {
  const limited = await startNode({ args: ['--rate-limit', '1', '--rate-burst', '3'] })
  try {
    const answers = []
    for (let i = 0; i < 8; i++) answers.push(await rawPost(limited.url, call('eth_chainId')))
    const refused = answers.filter((a) => a.json?.error?.code === -32005).length
    assert.ok(refused >= 1, 'some calls were refused')
    const m = await scrape(limited.metricsUrl)
    assert.equal(value(m, 'keel_ratelimit_decisions_total', { decision: 'limited', transport: 'http' }), refused)
    assert.equal(value(m, 'keel_ratelimit_decisions_total', { decision: 'allowed', transport: 'http' }), 8 - refused)
    assert.ok(value(m, 'keel_ratelimit_tracked_clients') >= 1)
  } finally {
    await limited.stop()
  }
})

test('deploy files parse and only use metrics the node exports', async () => {
  const prometheus = YAML.parse(readFileSync(join(repoRoot, 'deploy/prometheus/prometheus.yml'), 'utf8'))
  assert.ok(prometheus.rule_files.includes('alerts.yml'))
  const job = prometheus.scrape_configs.find((c) => c.job_name === 'keel')
  assert.equal(job.metrics_path, '/metrics')
  assert.ok(job.static_configs[0].targets.includes('127.0.0.1:9545'))

  const alertsText = readFileSync(join(repoRoot, 'deploy/prometheus/alerts.yml'), 'utf8')
  const alerts = YAML.parse(alertsText)
  const rules = alerts.groups.flatMap((g) => g.rules)
  const names = rules.map((r) => r.alert)
  for (const wanted of ['KeelDown', 'KeelHeadStale', 'KeelHighErrorRate', 'KeelCallPoolSaturated', 'KeelRateLimitingSurge']) {
    assert.ok(names.includes(wanted), `alert ${wanted}`)
  }
  for (const rule of rules) {
    assert.equal(typeof rule.expr, 'string', rule.alert)
    assert.ok(['critical', 'warning', 'info'].includes(rule.labels?.severity), rule.alert)
    assert.ok(rule.annotations?.summary, rule.alert)
    if (rule.for !== undefined) assert.match(rule.for, /^\d+[smh]$/)
  }

  const dashboardText = readFileSync(join(repoRoot, 'deploy/grafana/keel-dashboard.json'), 'utf8')
  const dashboard = JSON.parse(dashboardText)
  const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr))
  assert.ok(exprs.length >= 20)

  const m = await scrape(node.metricsUrl)
  const exported = (name) =>
    m.has(name) || ['_bucket', '_sum', '_count'].some((suffix) => name.endsWith(suffix) && m.has(name.slice(0, -suffix.length)))
  const used = new Set([...(alertsText + exprs.join('\n')).matchAll(/\bkeel_[a-z0-9_]+/g)].map((x) => x[0]))
  assert.ok(used.size >= 25)
  for (const name of used) assert.ok(exported(name), `${name} is used in deploy/ but not exported`)
})
