// Where a mined transfer's microseconds go, and how fast transfers are mined: the macro bench's transfer
// runs (64 senders, one transaction in flight each, each checking its receipts) against a Keel node started
// with V8's CPU profiler in every thread (`--cpu-prof`), each profile cut to the measured run by its sample
// times (V8 and process.hrtime share the monotonic clock). A sample counts for the first frame, from the
// innermost out, whose file belongs to a stage in STAGES; utilities (hex, keccak, RLP, @ethereumjs's
// helpers) count for the stage that called them. Threads without a JS profile (LevelDB's, libuv's pool,
// V8's own) are read from /proc/PID/task.
//
//   npm run build && node bench/macro/tx-costs.js [--per-sender 40] [--with-anvil] [--no-profile]
//                      [--unmined-per-sender N] [--gas-limit GAS] [--interval-us 250] [--profiles DIR]
//
// For native, then ERC20 transfers: a warm-up run (V8 compiles the paths), then the measured run. Prints the
// rates (to the last receipt checked as the bench counts, to the last submission answered, to the block
// holding the last transfer), eth_sendRawTransaction's round trip (p50 / p99 / slowest, as a sender sees
// it), the node's and the load generator's CPU a transfer, Keel's blocks and
// hand-off batches, its µs a transfer by thread and stage with the larger stages' leaf functions, and
// every thread's CPU.
//   --unmined-per-sender N  a long run: a sender's next submission waits until the one N before it is
//                   mined (64 x N stays under the pool's 5,120); `--per-sender 400 --unmined-per-sender 64`
//   --gas-limit GAS the blocks' gas limit on both nodes (a genesis file for Keel, --gas-limit for anvil):
//                   with 1-s blocks anvil's default 30M caps the mined rate of a long run (Keel's 150M: the cores do)
//   --with-anvil    the same runs against anvil (--block-time 1, as the macro bench), after Keel's
//   --no-profile    Keel without the profiler (its sampling threads cost ~10% of the node's CPU)
//   --profiles DIR  keeps the .cpuprofile files (the whole process lifetime; Chrome DevTools opens them)

import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import WebSocket from 'ws'
import { devGenesis } from '../../dist/chain/genesis.js'
import { parsePrometheusText, total } from '../../test/helpers/prom.js'
import { flagValue as opt } from '../lib/args.js'
import { freePort } from '../lib/free-port.js'
import { threadTimes } from '../lib/thread-times.js'
import { startAnvil, startKeel } from './nodes.js'
import { prepare, signTransfers, submitTransfers } from './scenarios.js'

const PER_SENDER = Number(opt('--per-sender', 40))
// a long run: each sender waits for its transfer this many before to be mined before the next (the pool
// holds 5,120 transactions by default)
const UNMINED = Number(opt('--unmined-per-sender', Infinity))
const INTERVAL_US = Number(opt('--interval-us', 250))
const KEEP = opt('--profiles', undefined)
// without the profiler: the rates and the threads' CPU as the node runs unobserved
const PROFILE = !process.argv.includes('--no-profile')
// the same runs against anvil (--block-time 1, as in the macro bench), without a profile
const WITH_ANVIL = process.argv.includes('--with-anvil')
// the blocks' gas limit (Keel's --dev genesis: 150M, anvil's default: 30M): with 1-s blocks it caps the
// rate at gas limit / gas a transfer (150M: ~7,100 native or ~2,900 ERC20 a second; 30M: 1,428 or ~583)
const GAS_LIMIT = opt('--gas-limit', undefined)

// Stages by the file a frame runs in (dist paths and dependencies), the first match wins. Files not named
// here are utilities and count for their caller's stage.
const STAGES = [
  // main thread
  ['intake: RPC transport and dispatch', /\/dist\/rpc\/(server|uws|dispatch|envelope|context|params|params-shape|limits|ratelimit|access|client-ip|drain)\.js/],
  ['intake: decode, checks, hand-off', /\/dist\/(rpc\/methods\/eth-send|chain\/tx-intake|chain\/producer-client|chain\/intake-warm-up)\.js/],
  ['receipt reads (client polling)', /\/dist\/(rpc\/methods\/(eth-blocks|receipt-waiters|chain-json)|json\/receipt|json\/transaction)\.js/],
  ['notification and new head (main)', /\/dist\/(rpc\/subscriptions|rpc\/methods\/eth-subscribe|rpc\/filters|chain\/view|chain\/recent-txs|chain\/block-record)\.js/],
  ['metrics', /\/dist\/metrics\//],
  // producer thread
  ['pool: insert, journal, order', /\/dist\/chain\/(txpool|pooled-tx|pooled-senders|not-mined-txs|store\/group-commit)\.js/],
  ['LevelDB batch', /\/dist\/chain\/store\/(write-batch|level|write-guard)\.js|\/classic-level\/|\/abstract-level\//],
  ['explorer indexes', /\/dist\/indexes\//],
  ['state trie', /\/dist\/chain\/store\/(trie-bulk-update|yielding-trie|state-db|bulk-flush-sm|trie-reader|schema)\.js|\/@ethereumjs\/mpt\//],
  ['tx and receipt tries, receipts', /\/dist\/chain\/(receipts|ordered-trie|logs|body|block-rlp)\.js/],
  ['execution', /\/dist\/(exec\/exec-block|chain\/block-vm|chain\/plain-transfer|chain\/builder|chain\/tx-object|chain\/system-calls|evm\/state-manager|exec\/coinbase-touches)\.js|\/@ethereumjs\/(vm|evm)\//],
  ['hand-off to main thread', /\/dist\/chain\/(hand-off-batch|messages|producer-thread|write-set|state-diff)\.js/],
  ['producer: seal and commit', /\/dist\/chain\/producer\.js/],
  // call workers (nothing of a transfer run should land there)
  ['call workers', /\/dist\/exec\/(worker|engine|pool|balancer)\.js/],
]

function stageOf(url) {
  for (const [stage, re] of STAGES) if (re.test(url)) return stage
  return undefined
}

function threadOf(profile) {
  for (const n of profile.nodes) {
    const u = n.callFrame.url
    if (u.includes('/dist/chain/producer-thread.js')) return 'producer'
    if (u.includes('/dist/exec/worker.js')) return 'call worker'
  }
  return undefined
}

/** µs of samples per stage inside [from, to] (µs on the monotonic clock), and the unclaimed leaves. */
function attribute(profile, from, to) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const parent = new Map()
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const stageCache = new Map()
  const stageOfNode = (id) => {
    if (stageCache.has(id)) return stageCache.get(id)
    let stage
    for (let cur = id; cur !== undefined && stage === undefined; cur = parent.get(cur)) stage = stageOf(byId.get(cur).callFrame.url)
    if (stage === undefined) {
      const leaf = byId.get(id).callFrame
      if (leaf.functionName === '(garbage collector)') stage = 'garbage collection'
      else if (leaf.functionName === '(idle)') stage = 'idle'
      else if (leaf.functionName === '(program)') stage = 'V8 and native, no JS frame'
      else stage = 'other'
    }
    stageCache.set(id, stage)
    return stage
  }
  const stages = new Map()
  const leaves = new Map()
  let t = profile.startTime
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i]
    // a sample's time is the delta to the next one
    const dt = profile.timeDeltas[i + 1] ?? 0
    if (t < from || t >= to) continue
    const id = profile.samples[i]
    const stage = stageOfNode(id)
    stages.set(stage, (stages.get(stage) ?? 0) + dt)
    const f = byId.get(id).callFrame
    const key = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*node_modules\//, '').replace(/^.*\/dist\//, 'dist/')}`
    if (!leaves.has(stage)) leaves.set(stage, new Map())
    leaves.get(stage).set(key, (leaves.get(stage).get(key) ?? 0) + dt)
  }
  return { stages, leaves }
}

// what Keel counted: blocks, their transactions, the submissions' hand-off batches, the producer's times
const COUNTERS = {
  blocks: 'keel_chain_blocks_total',
  txs: 'keel_chain_transactions_total',
  batches: 'keel_txpool_submit_batches_total',
  batched: 'keel_txpool_submit_batched_transactions_total',
  buildS: 'keel_chain_block_build_seconds_sum',
  commitS: 'keel_chain_block_commit_seconds_sum',
  writeS: 'keel_storage_write_batch_seconds_sum',
}
async function counters(metricsPort) {
  if (metricsPort === undefined) return undefined
  const families = parsePrometheusText(await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text())
  return Object.fromEntries(Object.entries(COUNTERS).map(([k, name]) => [k, total(families, name)]))
}

/** For native and ERC20: a warm-up run, then a measured one; what it took on each side. */
async function measure(node, metricsPort) {
  const runs = []
  // when each block was announced (µs, monotonic): the run's transfers are all mined when its last block is
  const heads = new Map()
  const ws = new WebSocket(node.wsUrl)
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject))
  ws.on('message', (data) => {
    const msg = JSON.parse(String(data))
    if (msg.method === 'eth_subscription') heads.set(Number(msg.params.result.number), Number(process.hrtime.bigint() / 1000n))
  })
  ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] }))
  try {
    const ctx = await prepare(node, true)
    for (const kind of ['native', 'erc20']) {
      const warm = await submitTransfers(node, ctx, kind, await signTransfers(node, ctx, kind, Math.min(PER_SENDER, 40)), UNMINED)
      const signed = await signTransfers(node, ctx, kind, PER_SENDER)
      const countedBefore = await counters(metricsPort)
      const before = threadTimes(node.pid)
      const genBefore = threadTimes(process.pid)
      const run = await submitTransfers(node, ctx, kind, signed, UNMINED)
      const genAfter = threadTimes(process.pid)
      const after = threadTimes(node.pid)
      const countedAfter = await counters(metricsPort)
      if (warm.errors + run.errors > 0) throw new Error(`${node.name} ${kind}: ${warm.errors + run.errors} transfers failed`)
      let genMs = 0
      for (const [tid, t] of genAfter) genMs += t.ms - (genBefore.get(tid)?.ms ?? 0)
      const counted = countedAfter && Object.fromEntries(Object.keys(COUNTERS).map((k) => [k, countedAfter[k] - countedBefore[k]]))
      const threads = []
      for (const [tid, t] of after) {
        const ms = t.ms - (before.get(tid)?.ms ?? 0)
        if (ms > 0) threads.push({ tid: Number(tid), name: t.name, ms })
      }
      const lastBlock = Math.max(...[...ctx.mined.blocks].map(Number))
      runs.push({ kind, run, warmRate: warm.value, threads, counted, genMs, minedAt: heads.get(lastBlock) })
    }
  } finally {
    ws.close()
  }
  const peakRss = Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${node.pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024
  return { runs, peakRss }
}

function rates(name, { kind, run, warmRate, genMs, minedAt, threads }) {
  const n = run.calls
  const { from, submitted, to } = run.window
  const rate = (us) => Math.round(n / (us / 1e6))
  const cpu = threads.reduce((a, t) => a + t.ms, 0)
  return {
    node: name,
    run: `${kind} × ${n}`,
    'tx/s (bench)': run.value,
    'warm-up run': warmRate,
    'submitted tx/s': rate(submitted - from),
    'mined tx/s': rate(minedAt - from),
    'last block, ms': Math.round((minedAt - from) / 1000),
    'node CPU µs a tx': Math.round((cpu * 1000) / n),
    'load generator µs a tx': Math.round((genMs * 1000) / n),
    'receipt reads a tx': (run.receiptPolls / n).toFixed(2),
    'send ms p50 / p99 / max': [run.sendMs.p50, run.sendMs.p99, run.sendMs.max].map((ms) => ms.toFixed(1)).join(' / '),
  }
}

const profDir = KEEP ?? mkdtempSync(join(tmpdir(), 'keel-tx-costs-'))
if (PROFILE) process.env.KEEL_BENCH_NODE_ARGS = `--cpu-prof --cpu-prof-dir ${profDir} --cpu-prof-interval ${INTERVAL_US}`
const metricsPort = await freePort()
const keelArgs = ['--metrics-port', String(metricsPort)]
if (GAS_LIMIT !== undefined) {
  const genesis = join(mkdtempSync(join(tmpdir(), 'keel-genesis-')), 'genesis.json')
  writeFileSync(genesis, JSON.stringify({ ...devGenesis(24589), gasLimit: `0x${BigInt(GAS_LIMIT).toString(16)}` }))
  keelArgs.push('--genesis', genesis)
}
const node = await startKeel({ args: keelArgs })
let keel
try {
  keel = await measure(node, metricsPort)
} finally {
  await node.stop()
}
delete process.env.KEEL_BENCH_NODE_ARGS
let anvil
if (WITH_ANVIL) {
  const a = await startAnvil({ args: GAS_LIMIT === undefined ? [] : ['--gas-limit', String(GAS_LIMIT)] })
  try {
    anvil = await measure(a)
  } finally {
    await a.stop()
  }
}
console.log('rates: tx/s (bench) to the last receipt checked, as the macro bench counts; submitted: to the last')
console.log('submission answered; mined: to the announcement of the block holding the last transfer')
console.table([
  ...keel.runs.map((r) => rates('keel', r)),
  ...(anvil?.runs ?? []).map((r) => rates('anvil', r)),
])
console.log(`peak RSS over the runs: Keel ${Math.round(keel.peakRss)} MiB${anvil ? `, anvil ${Math.round(anvil.peakRss)} MiB` : ''}`)

// CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile: thread 0 is the main thread
const profiles = readdirSync(profDir).filter((f) => Number(f.split('.')[3]) === node.pid).map((f) => {
  const profile = JSON.parse(readFileSync(join(profDir, f), 'utf8'))
  const threadId = Number(f.split('.')[4])
  return { profile, thread: threadId === 0 ? 'main' : (threadOf(profile) ?? `thread ${threadId}`) }
})
if (KEEP === undefined) rmSync(profDir, { recursive: true, force: true })

for (const { kind, run, threads, counted } of keel.runs) {
  const n = run.calls
  const { from, to } = run.window
  console.log(`\nKeel, ${kind}:`)
  const ms = (sec) => ((sec * 1e6) / counted.txs).toFixed(0)
  console.log(`${counted.blocks} blocks, ${(counted.txs / counted.blocks).toFixed(0)} transactions a block; submissions handed to the producer in ${counted.batches} messages (${(counted.batched / counted.batches).toFixed(1)} a message); producer µs a tx: build ${ms(counted.buildS)}, commit ${ms(counted.commitS)} (LevelDB write ${ms(counted.writeS)})`)
  const rows = []
  const detail = []
  for (const { profile, thread } of profiles) {
    const { stages, leaves } = attribute(profile, from, to)
    const busy = [...stages].filter(([s]) => s !== 'idle').reduce((a, [, us]) => a + us, 0)
    if (busy / n < 1) continue
    for (const [stage, us] of [...stages].sort((a, b) => b[1] - a[1])) {
      if (stage === 'idle' || us / n < 0.5) continue
      rows.push({ thread, stage, 'µs a tx': Math.round(us / n), share: `${Math.round((us / busy) * 100)}%` })
    }
    rows.push({ thread, stage: '(all on this thread)', 'µs a tx': Math.round(busy / n), share: '100%' })
    for (const [stage, us] of stages) {
      if (stage === 'idle' || us / n < 15) continue
      const top = [...leaves.get(stage)].sort((a, b) => b[1] - a[1]).slice(0, 5)
      detail.push(`  ${thread}, ${stage}: ${top.map(([k, v]) => `${k} ${(v / n).toFixed(1)}`).join('; ')}`)
    }
  }
  if (rows.length > 0) console.table(rows)
  const proc = threads
    .sort((a, b) => b.ms - a.ms)
    .filter((t) => (t.ms * 1000) / n >= 2)
    .map((t) => ({ thread: t.tid === node.pid ? 'main' : `${t.name} ${t.tid}`, 'µs a tx (/proc)': Math.round((t.ms * 1000) / n) }))
  const allMs = threads.reduce((a, t) => a + t.ms, 0)
  console.log(`every thread of the process, from /proc (10 ms resolution; Node names none but the main thread, the producer is the busiest other): ${Math.round((allMs * 1000) / n)} µs a tx in all`)
  console.table(proc)
  if (detail.length > 0) console.log('the leaf functions (self time, µs a tx) of the larger stages:')
  for (const line of detail) console.log(line)
}
