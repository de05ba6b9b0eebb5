// A long run against one node: a mixed load for --minutes N (default 30) while every 10 s the node's RSS,
// each thread's V8 heap (in use, keel_thread_heap_used_bytes, and live just after its last full
// collection, keel_thread_heap_live_bytes, which the slope test judges), the bytes its objects hold outside the heap
// (keel_thread_external_bytes, summed over threads), the heaps' committed size, LevelDB's memory
// (keel_storage_db_memory_bytes), the event loop's delay and the answers' latency are sampled. Fails
// (exit 1) if any answer errs or if memory keeps growing after the warm-up (a slope test over the later
// half of the samples after --warmup-minutes, default 5; see GROWTH_MIB). Writes the samples as CSV and
// the memory curves as a PNG (bench/lib/png-plot.js, no plotting dependency) into --out (default a temp
// folder).
//
//   npm run build && node bench/soak.js [--minutes 30] [--warmup-minutes 5] [--out DIR]
//
// The load, each part on its own timer until the deadline:
//   reads        every 10 ms: eth_blockNumber, eth_getBlockByNumber 'latest', eth_getBalance, a receipt
//   calls        every 25 ms: eth_call balanceOf of a random holder at 'latest'
//   logs         every 250 ms: eth_getLogs of the token's Transfer events over the last 50 blocks
//   transfers    8 senders each a plain transfer every 250 ms, and a token transfer every 500 ms
//   subscribers  every second a WebSocket connects, subscribes to newHeads, the token's logs and pending
//                transactions, stays 5-15 s and leaves
//   filters      every 500 ms a log or block filter is created, polled once and abandoned (the node runs
//                with --filter-timeout-seconds 60, so abandoned filters expire within the run)

import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ContractFactory, Interface, JsonRpcProvider, NonceManager, Wallet, id as topicOf } from 'ethers'
import WebSocket from 'ws'
import { compile } from '../test/helpers/contracts.js'
import { CHAIN_ID, DEV_KEYS, startNode } from '../test/helpers/node.js'
import { parsePrometheusText, samples as promSamples } from '../test/helpers/prom.js'
import { flagValue as opt } from './lib/args.js'
import { plotLines } from './lib/png-plot.js'

const MINUTES = Number(opt('--minutes', 30))
const WARMUP_MINUTES = Number(opt('--warmup-minutes', 5))
const OUT = opt('--out', undefined) ?? mkdtempSync(join(tmpdir(), 'keel-soak-'))
const SAMPLE_MS = 10_000
// The slope test: memory "keeps growing" when the line fitted to the later half of the samples after the
// warm-up, carried over the whole window, rises by more than this (and by more than GROWTH_SHARE of its
// mean): a leak of a few MiB an hour on a node of ~200 MiB stays under it, a leak that would exhaust
// memory in days does not. A leak grows to the end at a steady rate; bounded caches filling under the load
// grow early and level off, so the later half tells the two apart where the whole window does not (its
// fit is printed beside the verdict).
const GROWTH_MIB = 16
const GROWTH_SHARE = 0.1
const GWEI = 10n ** 9n
const MiB = 2 ** 20

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
mkdirSync(OUT, { recursive: true })

const errors = []
const fail = (what) => {
  if (errors.length < 50) errors.push(what)
}
let window = { latencies: [], calls: 0 }

async function call(url, method, params) {
  const started = performance.now()
  let json
  try {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) })
    json = await res.json()
    if (res.status !== 200) fail(`${method}: HTTP ${res.status}`)
  } catch (err) {
    fail(`${method}: ${err.message}`)
    return undefined
  }
  window.latencies.push(performance.now() - started)
  window.calls++
  if (json.error !== undefined) {
    fail(`${method}: ${JSON.stringify(json.error)}`)
    return undefined
  }
  return json.result
}

/** Runs `step` every `ms` until `end`, never two at once. */
async function every(ms, end, step) {
  for (let i = 0; Date.now() < end && i < 10_000_000; i++) {
    const started = Date.now()
    await step(i)
    await sleep(Math.max(0, ms - (Date.now() - started)))
  }
}

function slope(xs, ys) {
  const n = xs.length
  const mx = xs.reduce((a, b) => a + b, 0) / n
  const my = ys.reduce((a, b) => a + b, 0) / n
  let num = 0
  let den = 0
  for (let i = 0; i < n; i++) {
    num += (xs[i] - mx) * (ys[i] - my)
    den += (xs[i] - mx) ** 2
  }
  return { perMinute: den === 0 ? 0 : num / den, mean: my }
}

const pct = (sorted, p) => (sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))])

async function main() {
  const node = await startNode({ blockTime: 1, args: ['--rate-limit', '0', '--filter-timeout-seconds', '60'] })
  console.log(`soak: ${MINUTES} min against ${node.url} (pid ${node.proc.pid}); samples every ${SAMPLE_MS / 1000} s; output in ${OUT}`)
  try {
    const provider = new JsonRpcProvider(node.url, undefined, { staticNetwork: true, batchMaxCount: 1 })
    const owner = new NonceManager(new Wallet(DEV_KEYS[0], provider))
    const { Token } = compile()
    const token = await new ContractFactory(Token.abi, Token.bytecode, owner).deploy()
    await token.waitForDeployment()
    const tokenAddress = (await token.getAddress()).toLowerCase()
    const abi = new Interface(Token.abi)
    const transferTopic = topicOf('Transfer(address,address,uint256)')
    provider.destroy()

    const start = Date.now()
    const end = start + MINUTES * 60_000
    const holders = Array.from({ length: 64 }, () => Wallet.createRandom().address)
    const recentHashes = []
    const fees = { maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: GWEI }
    const senders = DEV_KEYS.slice(1, 9).map((key) => ({ wallet: new Wallet(key), nonce: 0 }))
    const tokenSender = { wallet: new Wallet(DEV_KEYS[0]), nonce: Number(BigInt(await call(node.url, 'eth_getTransactionCount', [new Wallet(DEV_KEYS[0]).address, 'pending']))) }
    const ws = { connected: 0, notifications: 0 }

    const send = async (sender, fields) => {
      const raw = await sender.wallet.signTransaction({ type: 2, chainId: CHAIN_ID, nonce: sender.nonce, gasLimit: 100_000n, ...fees, ...fields })
      const hash = await call(node.url, 'eth_sendRawTransaction', [raw])
      if (hash !== undefined) {
        sender.nonce++
        recentHashes.push(hash)
        if (recentHashes.length > 256) recentHashes.shift()
      }
    }

    const loads = [
      every(10, end, async (i) => {
        const which = i % 4
        if (which === 0) await call(node.url, 'eth_blockNumber', [])
        else if (which === 1) await call(node.url, 'eth_getBlockByNumber', ['latest', false])
        else if (which === 2) await call(node.url, 'eth_getBalance', [holders[i % holders.length], 'latest'])
        else if (recentHashes.length > 0) await call(node.url, 'eth_getTransactionReceipt', [recentHashes[i % recentHashes.length]])
      }),
      every(25, end, (i) => call(node.url, 'eth_call', [{ to: tokenAddress, data: abi.encodeFunctionData('balanceOf', [holders[i % holders.length]]) }, 'latest'])),
      every(250, end, async () => {
        const head = BigInt(await call(node.url, 'eth_blockNumber', []) ?? '0x0')
        const from = head > 50n ? head - 50n : 0n
        await call(node.url, 'eth_getLogs', [{ address: tokenAddress, topics: [transferTopic], fromBlock: `0x${from.toString(16)}`, toBlock: 'latest' }])
      }),
      ...senders.map((sender, s) => every(250, end, (i) => send(sender, { to: holders[(s * 8 + i) % holders.length], value: 1n, gasLimit: 21_000n }))),
      every(500, end, (i) => send(tokenSender, { to: tokenAddress, data: abi.encodeFunctionData('transfer', [holders[i % holders.length], 1n]) })),
      every(1_000, end, async () => {
        const socket = new WebSocket(node.wsUrl, { perMessageDeflate: false })
        socket.on('error', (err) => fail(`ws: ${err.message}`))
        socket.on('message', (data) => {
          const msg = JSON.parse(data.toString())
          if (msg.error !== undefined) fail(`ws: ${JSON.stringify(msg.error)}`)
          if (msg.method === 'eth_subscription') ws.notifications++
        })
        socket.once('open', () => {
          ws.connected++
          socket.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] }))
          socket.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'eth_subscribe', params: ['logs', { address: tokenAddress }] }))
          socket.send(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'eth_subscribe', params: ['newPendingTransactions'] }))
        })
        setTimeout(() => socket.close(), 5_000 + Math.random() * 10_000)
      }),
      every(500, end, async (i) => {
        const filter = i % 2 === 0 ? await call(node.url, 'eth_newFilter', [{ address: tokenAddress, topics: [transferTopic] }]) : await call(node.url, 'eth_newBlockFilter', [])
        if (filter === undefined) return
        await sleep(1_000)
        await call(node.url, 'eth_getFilterChanges', [filter])
      }),
    ]

    const rows = []
    const sampler = every(SAMPLE_MS, end + 1, async () => {
      await sleep(SAMPLE_MS - 50)
      const taken = window
      window = { latencies: [], calls: 0 }
      const families = parsePrometheusText(await (await fetch(node.metricsUrl)).text())
      const rss = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${node.proc.pid}/status`, 'utf8'))[1]) * 1024
      const heaps = Object.fromEntries(promSamples(families, 'keel_thread_heap_used_bytes').map((s) => [s.labels.thread, s.value]))
      const live = Object.fromEntries(promSamples(families, 'keel_thread_heap_live_bytes').map((s) => [s.labels.thread, s.value]))
      const callsLive = Object.entries(live).filter(([t]) => t.startsWith('call-'))
      const external = promSamples(families, 'keel_thread_external_bytes').reduce((a, s) => a + s.value, 0)
      const committed = promSamples(families, 'keel_thread_heap_total_bytes').reduce((a, s) => a + s.value, 0)
      const leveldb = promSamples(families, 'keel_storage_db_memory_bytes')[0]?.value ?? NaN
      const lag = promSamples(families, 'keel_nodejs_eventloop_lag_p99_seconds')[0]?.value ?? NaN
      const sorted = taken.latencies.sort((a, b) => a - b)
      const row = {
        minute: (Date.now() - start) / 60_000,
        rssMiB: rss / MiB,
        heapMainMiB: (heaps.main ?? NaN) / MiB,
        heapProducerMiB: (heaps.producer ?? NaN) / MiB,
        heapCallsMiB: Object.entries(heaps).filter(([t]) => t.startsWith('call-')).reduce((a, [, v]) => a + v, 0) / MiB,
        liveMainMiB: (live.main ?? NaN) / MiB,
        liveProducerMiB: (live.producer ?? NaN) / MiB,
        liveCallsMiB: callsLive.length === 0 ? NaN : callsLive.reduce((a, [, v]) => a + v, 0) / MiB,
        externalMiB: external / MiB,
        heapsCommittedMiB: committed / MiB,
        leveldbMiB: leveldb / MiB,
        loopLagP99Ms: lag * 1000,
        calls: taken.calls,
        p50Ms: pct(sorted, 0.5),
        p95Ms: pct(sorted, 0.95),
        maxMs: sorted.length === 0 ? 0 : sorted[sorted.length - 1],
        wsOpen: promSamples(families, 'keel_ws_connections')[0]?.value ?? NaN,
      }
      rows.push(row)
      console.log(`${row.minute.toFixed(1)} min  RSS ${row.rssMiB.toFixed(0)} MiB  heaps main ${row.heapMainMiB.toFixed(0)} producer ${row.heapProducerMiB.toFixed(0)} calls ${row.heapCallsMiB.toFixed(0)} MiB (live ${row.liveMainMiB.toFixed(0)} / ${row.liveProducerMiB.toFixed(0)} / ${row.liveCallsMiB.toFixed(0)})  external ${row.externalMiB.toFixed(0)} MiB  committed ${row.heapsCommittedMiB.toFixed(0)} MiB  LevelDB ${row.leveldbMiB.toFixed(0)} MiB  loop p99 ${row.loopLagP99Ms.toFixed(1)} ms  ${row.calls} calls p50 ${row.p50Ms.toFixed(1)} p95 ${row.p95Ms.toFixed(1)} max ${row.maxMs.toFixed(0)} ms  ws ${row.wsOpen}  errors ${errors.length}`)
    })
    await Promise.all([...loads, sampler])

    const columns = Object.keys(rows[0])
    writeFileSync(join(OUT, 'soak.csv'), [columns.join(','), ...rows.map((r) => columns.map((c) => (typeof r[c] === 'number' ? r[c].toFixed(3) : r[c])).join(','))].join('\n') + '\n')
    // the heaps are judged by their live size (in use just after a full collection): the heap in use is a
    // sawtooth of garbage between collections, up to --heap-growth-percent above the live size
    const memory = ['rssMiB', 'liveMainMiB', 'liveProducerMiB', 'liveCallsMiB']
    writeFileSync(join(OUT, 'soak.png'), plotLines({ x: rows.map((r) => r.minute), series: memory.map((k) => ({ values: rows.map((r) => (Number.isFinite(r[k]) ? r[k] : 0)) })) }))

    const after = rows.filter((r) => r.minute >= WARMUP_MINUTES)
    const verdicts = []
    for (const key of memory) {
      const known = after.filter((r) => Number.isFinite(r[key]))
      if (known.length < 3) {
        verdicts.push({ series: key, verdict: `not tested: ${known.length} samples after the ${WARMUP_MINUTES}-minute warm-up (a live heap has none before its thread's first full collection)` })
        continue
      }
      const whole = slope(known.map((r) => r.minute), known.map((r) => r[key]))
      const later = known.slice(Math.floor(known.length / 2))
      const late = slope(later.map((r) => r.minute), later.map((r) => r[key]))
      const span = known[known.length - 1].minute - known[0].minute
      const growth = late.perMinute * span
      const grows = growth > GROWTH_MIB && growth > GROWTH_SHARE * late.mean
      verdicts.push({
        series: key,
        'mean MiB': Number(whole.mean.toFixed(1)),
        'MiB/min, whole window': Number(whole.perMinute.toFixed(3)),
        'MiB/min, later half': Number(late.perMinute.toFixed(3)),
        'later half carried over the window, MiB': Number(growth.toFixed(1)),
        verdict: grows ? 'GROWS' : 'flat',
      })
    }
    const all = rows.flatMap((r) => [r.p95Ms])
    console.log(`\nseries 1-4 of ${join(OUT, 'soak.png')}: ${memory.join(', ')}`)
    console.table(verdicts)
    console.log(`calls ${rows.reduce((a, r) => a + r.calls, 0)}, worst 10-s p95 ${Math.max(...all).toFixed(1)} ms, WebSockets opened ${ws.connected}, notifications ${ws.notifications}, errors ${errors.length}`)
    for (const e of errors) console.log(`error: ${e}`)
    const failed = errors.length > 0 || verdicts.some((v) => v.verdict === 'GROWS')
    console.log(failed ? 'soak: FAILED' : 'soak: passed')
    return failed ? 1 : 0
  } finally {
    await node.stop()
  }
}

process.exitCode = await main()
