// Read replicas on one host: a producer publishing its blocks to NATS JetStream (--stream-url), replicas
// following it, HAProxy in front of them. Measures
//   1. replication lag under the bench's native and ERC20 transfer loads: the producer's newHeads
//      notification of block N to the replica's (WebSocket subscriptions on both, one clock), and the
//      replica's own keel_replica_lag_seconds (the producer's commit to the replica's commit);
//   2. CPU per block: the replica applying against the producer building (processes and chain threads);
//   3. read throughput through HAProxy (roundrobin, health check on /ready) to 1 and 2 replicas, and
//      the same load against one replica directly;
//   4. the cost on the hot path: mined transfers on a producer with --stream-url (and a replica
//      following) against one without, alternating.
//
//   npm run build && node bench/macro/replication.js [--quick] [--verify execute]
//
// Needs nats-server and haproxy on the PATH (Debian's). Everything on 127.0.0.1; exits 1 only on errors
// (a failed or missing receipt, a JSON-RPC error, a missed notification, a crash), never for speed.

import { execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import WebSocket from 'ws'
import { parsePrometheusText } from '../../test/helpers/prom.js'
import { startNats } from '../../test/helpers/nats.js'
import { writeGenesis } from '../../test/helpers/replication.js'
import { freePort } from '../lib/free-port.js'
import { cpuMicros, startKeel } from './nodes.js'
import { cannon, prepare, req, rpc, transfers, uniqueBalanceOfCalls } from './scenarios.js'
import { devWallet } from '../lib/dev-wallets.js'

const quick = process.argv.includes('--quick')
// --verify execute: the replicas run every block again (--replica-verify execute), to measure what it costs
const verifyAt = process.argv.indexOf('--verify')
const VERIFY = verifyAt >= 0 ? process.argv[verifyAt + 1] : 'checks'
const PER_SENDER = quick ? 10 : 40
const READ_SECONDS = quick ? 3 : 10
const AB_ROUNDS = quick ? 2 : 4
const READ_ROUNDS = quick ? 1 : 2
// the lag loads: transfer runs until this many blocks with transactions, within a bound of runs and time
const LAG_LOADED_BLOCKS = quick ? 3 : 30
const LAG_MAX_RUNS = quick ? 2 : 20
const LAG_MAX_MS = quick ? 30_000 : 150_000
const IDLE_SECONDS = quick ? 4 : 10
// a replica that runs every block again catches up from genesis at about the producer's own pace
const HEAD_TIMEOUT_MS = VERIFY === 'execute' ? 300_000 : 60_000

/** Processes this script started and has not stopped yet, and its temp folders: killed and removed if it exits early (Ctrl-C, a crash). */
const live = new Set()
const dirs = new Set()
function killQuietly(pid) {
  try {
    process.kill(pid, 'SIGKILL')
  } catch {
    // gone already
  }
}
process.on('exit', () => {
  live.forEach(killQuietly)
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const log = (line) => console.log(line)
const ms = (x) => (x === undefined || Number.isNaN(x) ? '-' : x.toFixed(1))
let errors = 0

// ---------------------------------------------------------------------------------------------------
// processes

/** A fresh data folder for startKeel (which removes it on stop). */
function dataDir() {
  const dir = mkdtempSync(join(tmpdir(), 'keel-bench-'))
  dirs.add(dir)
  return dir
}

async function startProducer(nats, genesis) {
  const node = await startKeel({ dataDir: dataDir(), args: ['--genesis', genesis, '--block-time', '1', ...(nats ? ['--stream-url', nats.url] : [])] })
  live.add(node.pid)
  return node
}

async function startReplica(nats, producer, genesis) {
  const metricsPort = await freePort()
  const node = await startKeel({ dataDir: dataDir(), args: ['--replica', '--replica-verify', VERIFY, '--genesis', genesis, '--stream-url', nats.url, '--producer-url', producer.url, '--metrics-port', String(metricsPort)] })
  live.add(node.pid)
  return { ...node, metricsUrl: `http://127.0.0.1:${metricsPort}/metrics` }
}

async function stopNode(node) {
  await node.stop()
  live.delete(node.pid)
}

/** The pid of this script's nats-server child (startNats keeps its process to itself). */
function childPid(comm) {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      if (ppid === process.pid && name === comm) return Number(entry)
    } catch {
      // the process ended meanwhile
    }
  }
  return undefined
}

/** HAProxy in front of `servers` (roundrobin, health check GET /ready), with a CSV stats page. */
async function startHaproxy(servers) {
  const [port, statsPort] = [await freePort(), await freePort()]
  const dir = mkdtempSync(join(tmpdir(), 'keel-bench-haproxy-'))
  const cfg = join(dir, 'haproxy.cfg')
  writeFileSync(
    cfg,
    [
      'global',
      '    maxconn 4096',
      'defaults',
      '    mode http',
      '    timeout connect 5s',
      '    timeout client 30s',
      '    timeout server 30s',
      'frontend rpc',
      `    bind 127.0.0.1:${port}`,
      '    default_backend replicas',
      'backend replicas',
      '    balance roundrobin',
      '    option httpchk',
      // HTTP/1.1 with a Host header: Keel leaves HAProxy's default check request (HTTP/1.0) unanswered
      '    http-check send meth GET uri /ready ver HTTP/1.1 hdr Host 127.0.0.1',
      '    http-check expect status 200',
      ...servers.map((s, i) => `    server r${i + 1} ${new URL(s.url).host} check inter 1s fall 2 rise 1`),
      'frontend stats',
      `    bind 127.0.0.1:${statsPort}`,
      '    stats enable',
      '    stats uri /stats',
      '',
    ].join('\n'),
  )
  execFileSync('haproxy', ['-c', '-q', '-f', cfg])
  const proc = spawn('haproxy', ['-db', '-f', cfg], { stdio: ['ignore', 'ignore', 'pipe'] })
  live.add(proc.pid)
  let stderr = ''
  proc.stderr.on('data', (d) => (stderr = (stderr + d).slice(-4000)))
  const statsUrl = `http://127.0.0.1:${statsPort}/stats;csv`
  const lb = {
    url: `http://127.0.0.1:${port}`,
    pid: proc.pid,
    /** requests each server answered with a 2xx so far */
    async served() {
      const rows = (await (await fetch(statsUrl)).text()).split('\n').map((l) => l.split(','))
      const col = rows[0].indexOf('hrsp_2xx')
      return rows.filter((r) => r[0] === 'replicas' && /^r\d+$/.test(r[1])).map((r) => Number(r[col]))
    },
    stop: () =>
      new Promise((resolve) => {
        const done = () => {
          live.delete(proc.pid)
          rmSync(dir, { recursive: true, force: true })
          resolve()
        }
        if (proc.exitCode !== null || proc.signalCode !== null) return done()
        proc.once('exit', done)
        proc.kill('SIGTERM')
      }),
  }
  // every server's /ready check passed (a server counts as UP before its first check) before any load
  const until = Date.now() + 30_000
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`haproxy exited (${proc.exitCode}): ${stderr}`)
    try {
      const rows = (await (await fetch(statsUrl)).text()).split('\n').map((l) => l.split(','))
      const col = rows[0].indexOf('check_status')
      const up = rows.filter((r) => r[0] === 'replicas' && /^r\d+$/.test(r[1]) && r[col] === 'L7OK')
      if (up.length === servers.length) return lb
    } catch {
      // not listening yet
    }
    if (Date.now() > until) {
      await lb.stop()
      throw new Error(`haproxy: not every server UP within 30 s: ${stderr}`)
    }
    await sleep(100)
  }
}

// ---------------------------------------------------------------------------------------------------
// measurements

/** CPU µs of each thread of `pid` (cpuMicros of /proc/PID/task/TID). */
function threadCpu(pid) {
  const out = new Map()
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      out.set(Number(tid), cpuMicros(`${pid}/task/${tid}`))
    } catch {
      // the thread ended meanwhile
    }
  }
  return out
}

/** Each thread's CPU µs between two threadCpu snapshots. */
const threadDeltas = (before, after) => new Map([...after].map(([tid, us]) => [tid, us - (before.get(tid) ?? 0)]))

/**
 * The chain thread of a process: its busiest thread besides the main one over `deltas` (Node leaves its
 * threads unnamed), and the runner-up, whose figure shows how clear the attribution is.
 */
function chainThreads(pid, deltas) {
  const others = [...deltas].filter(([tid]) => tid !== pid).sort((a, b) => b[1] - a[1])
  return { chain: others[0]?.[0], second: others[1]?.[0] }
}

/** Waits (at most 3 s) until the processes together use less than 30 ms of CPU in 200 ms. */
async function settle(pids) {
  const sum = () => pids.reduce((s, pid) => s + cpuMicros(pid), 0)
  for (let i = 0; i < 15; i++) {
    const before = sum()
    await sleep(200)
    if (sum() - before < 30_000) return
  }
}

async function headOf(node) {
  return Number(await rpc(node.url, 'eth_blockNumber'))
}

/** Waits until `node` has block `number`; resolves to the milliseconds it took. */
async function waitForHead(node, number, timeoutMs = HEAD_TIMEOUT_MS) {
  const started = performance.now()
  while (performance.now() - started < timeoutMs) {
    try {
      if ((await headOf(node)) >= number) return performance.now() - started
    } catch {
      // a replica may refuse connections while it installs a snapshot
    }
    await sleep(50)
  }
  throw new Error(`${node.url} did not reach block ${number} within ${timeoutMs} ms`)
}

/** One newHeads subscription; `onHead(number, gasUsed, arrivedAt)` for each notification. */
async function subscribeHeads(wsUrl, onHead) {
  const socket = new WebSocket(wsUrl, { perMessageDeflate: false })
  await new Promise((resolve, reject) => {
    socket.once('open', resolve)
    socket.once('error', reject)
  })
  await new Promise((resolve, reject) => {
    socket.once('message', (data) => {
      const answer = JSON.parse(String(data))
      if (answer.error !== undefined) reject(new Error(`eth_subscribe: ${answer.error.message}`))
      else resolve()
    })
    socket.send(req('eth_subscribe', ['newHeads']))
  })
  socket.on('message', (data) => {
    const at = performance.now()
    const head = JSON.parse(String(data)).params?.result
    if (head !== undefined) onHead(Number(head.number), Number(head.gasUsed), at)
  })
  socket.on('error', () => {})
  return socket
}

/** Cumulative bucket counts (by upper bound, +Inf last), sum and count of a replica's keel_replica_lag_seconds. */
async function scrapeLag(replica) {
  const family = parsePrometheusText(await (await fetch(replica.metricsUrl)).text()).get('keel_replica_lag_seconds')
  const buckets = family.samples.filter((s) => s.name.endsWith('_bucket')).map((s) => [Number(s.labels.le), s.value]).sort((a, b) => a[0] - b[0])
  const value = (suffix) => family.samples.find((s) => s.name.endsWith(suffix)).value
  return { buckets, sum: value('_sum'), count: value('_count') }
}

/** `later` - `earlier` of two scrapes. */
const lagDelta = (later, earlier) => ({
  buckets: later.buckets.map(([le, n], i) => [le, n - earlier.buckets[i][1]]),
  sum: later.sum - earlier.sum,
  count: later.count - earlier.count,
})

/** The sum of several deltas. */
function lagTotal(deltas) {
  if (deltas.length === 0) return undefined
  return deltas.reduce((acc, d) => ({ buckets: acc.buckets.map(([le, n], i) => [le, n + d.buckets[i][1]]), sum: acc.sum + d.sum, count: acc.count + d.count }))
}

/** A quantile from histogram buckets, interpolated linearly inside its bucket as Prometheus' histogram_quantile does; ms. */
function histogramQuantile(h, q) {
  if (h === undefined || h.count === 0) return undefined
  const rank = q * h.count
  let lower = 0
  let below = 0
  for (const [le, n] of h.buckets) {
    if (n >= rank) {
      if (le === Infinity) return lower * 1000
      return (lower + ((le - lower) * (rank - below)) / Math.max(1, n - below)) * 1000
    }
    lower = le
    below = n
  }
  return lower * 1000
}

function quantile(values, q) {
  if (values.length === 0) return undefined
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]
}

/**
 * Watches a producer and a replica: every newHeads notification on both, and after each of the replica's
 * a scrape of its lag histogram, whose growth since the scrape before belongs to the blocks announced in
 * between. A phase (begin/end) collects the blocks the producer announced meanwhile.
 */
async function watchReplication(producer, replica) {
  const atProducer = new Map() // number -> { at, gasUsed }
  const atReplica = new Map() // number -> at
  const scrapes = [{ upTo: await headOf(replica), lag: await scrapeLag(replica) }]
  let scraping = Promise.resolve()
  const sockets = [
    await subscribeHeads(producer.wsUrl, (n, gasUsed, at) => atProducer.set(n, { at, gasUsed })),
    await subscribeHeads(replica.wsUrl, (n, _gas, at) => {
      atReplica.set(n, at)
      // the histogram is observed as the block is announced: 200 ms later it holds block n
      scraping = scraping.then(async () => {
        await sleep(200)
        if (n > scrapes.at(-1).upTo) scrapes.push({ upTo: n, lag: await scrapeLag(replica) })
      })
    }),
  ]
  return {
    /** Waits until the replica has announced and scraped `number`. */
    async caughtUp(number) {
      const until = Date.now() + HEAD_TIMEOUT_MS
      while (scrapes.at(-1).upTo < number && Date.now() < until) await sleep(50)
      await scraping
    },
    /** How many blocks after `from` the producer announced with transactions. */
    loadedSince(from) {
      let loaded = 0
      for (const [n, p] of atProducer) if (n > from && p.gasUsed > 0) loaded++
      return loaded
    },
    /** The blocks the producer announced in (from, to], with newHeads lag and histogram shares, split empty / with transactions. */
    blocks(from, to) {
      const out = { loaded: { lags: [], hist: [], count: 0 }, empty: { lags: [], hist: [], count: 0 }, missed: 0 }
      for (let n = from + 1; n <= to; n++) {
        const p = atProducer.get(n)
        const r = atReplica.get(n)
        const side = p !== undefined && p.gasUsed > 0 ? out.loaded : out.empty
        side.count++
        if (p === undefined || r === undefined) out.missed++
        else side.lags.push(r - p.at)
      }
      // histogram growth of scrape intervals inside (from, to]; an interval holding a block with
      // transactions counts as loaded (one interval is one block unless scrapes fell behind)
      for (let i = 1; i < scrapes.length; i++) {
        const [a, b] = [scrapes[i - 1], scrapes[i]]
        if (a.upTo < from || b.upTo > to) continue
        let loaded = false
        for (let n = a.upTo + 1; n <= b.upTo; n++) if ((atProducer.get(n)?.gasUsed ?? 0) > 0) loaded = true
        ;(loaded ? out.loaded : out.empty).hist.push(lagDelta(b.lag, a.lag))
      }
      return out
    },
    close: async () => {
      for (const s of sockets) s.terminate()
      await scraping
    },
  }
}

// ---------------------------------------------------------------------------------------------------
// the phases

/** 4. Transfers mined on a producer with the stream (and a replica) and on one without, alternating. */
async function hotPath(withStream, replica, natsPid, plain, contexts) {
  const rows = []
  const runOne = async (node, ctx, kind, label, round) => {
    const pids = node === withStream ? [node.pid, replica.pid, natsPid] : [node.pid]
    const cpu0 = pids.map(cpuMicros)
    const r = await transfers(node, ctx, kind, PER_SENDER)
    const cpu = pids.map((pid, i) => (cpuMicros(pid) - cpu0[i]) / r.calls)
    errors += r.errors
    log(`  ${label} ${kind}${round ? `, round ${round}` : ' (warm-up)'}: ${r.value} tx/s, ${r.errors} errors, producer ${cpu[0].toFixed(0)} µs CPU/transfer${cpu.length > 1 ? `, replica ${cpu[1].toFixed(0)}, nats-server ${cpu[2].toFixed(0)}` : ''}`)
    await settle([withStream.pid, replica.pid, plain.pid])
    if (round) rows.push({ label, kind, round, value: r.value, cpu })
  }
  const sides = [
    [withStream, contexts[0], 'with --stream-url'],
    [plain, contexts[1], 'without'],
  ]
  for (const [node, ctx, label] of sides) for (const kind of ['native', 'erc20']) await runOne(node, ctx, kind, label)
  for (let round = 1; round <= AB_ROUNDS; round++) {
    for (const kind of ['native', 'erc20']) {
      for (const [node, ctx, label] of round % 2 === 1 ? sides : [...sides].reverse()) await runOne(node, ctx, kind, label, round)
    }
  }
  const table = []
  for (const kind of ['native', 'erc20']) {
    const of = (label) => rows.filter((r) => r.kind === kind && r.label === label)
    const [a, b] = [of('with --stream-url'), of('without')]
    const mean = (list, f) => list.reduce((s, r) => s + f(r), 0) / list.length
    table.push({
      'mined transfers': kind === 'native' ? 'native' : 'ERC20',
      'tx/s with stream (rounds)': a.map((r) => r.value).join(' / '),
      'tx/s without (rounds)': b.map((r) => r.value).join(' / '),
      'with/without (means)': Number((mean(a, (r) => r.value) / mean(b, (r) => r.value)).toFixed(3)),
      'producer CPU µs/tx with / without': `${mean(a, (r) => r.cpu[0]).toFixed(0)} / ${mean(b, (r) => r.cpu[0]).toFixed(0)}`,
      'replica / nats-server CPU µs/tx': `${mean(a, (r) => r.cpu[1]).toFixed(0)} / ${mean(a, (r) => r.cpu[2]).toFixed(0)}`,
    })
  }
  return table
}

/** 1 and 2. Lag and CPU per block, idle and under each transfer load. */
async function lagAndCpu(producer, replica, ctx) {
  const watch = await watchReplication(producer, replica)
  const pids = [producer.pid, replica.pid]
  const phases = []
  const phase = async (name, load) => {
    const from = await headOf(producer)
    await watch.caughtUp(from)
    const before = pids.map(threadCpu)
    const detail = await load()
    const to = await headOf(producer)
    await watch.caughtUp(to)
    const threads = pids.map((pid, i) => threadDeltas(before[i], threadCpu(pid)))
    const blocks = watch.blocks(from, to)
    if (blocks.missed > 0) {
      errors += blocks.missed
      log(`  ${name}: ${blocks.missed} blocks without a notification from both nodes`)
    }
    log(`  ${name}: blocks ${from + 1}..${to} (${blocks.loaded.count} with transactions)${detail ? `, ${detail}` : ''}`)
    phases.push({ name, blocks, threads })
  }
  try {
    await phase('idle (empty blocks)', async () => sleep(IDLE_SECONDS * 1000))
    for (const kind of ['native', 'erc20']) {
      await phase(kind === 'native' ? 'native transfers' : 'ERC20 transfers', async () => {
        const started = Date.now()
        const first = await headOf(producer)
        const rates = []
        for (let run = 0; run < LAG_MAX_RUNS && Date.now() - started < LAG_MAX_MS; run++) {
          const r = await transfers(producer, ctx, kind, PER_SENDER)
          errors += r.errors
          rates.push(r.value)
          if (watch.loadedSince(first) >= LAG_LOADED_BLOCKS) break
        }
        return `${rates.length} runs of ${ctx.senders.length * PER_SENDER} (${rates.join(', ')} tx/s)`
      })
    }
  } finally {
    await watch.close()
  }
  // the chain threads: the busiest besides the main one over the loads (an idle phase is too short to tell)
  const overLoads = pids.map((pid, i) => {
    const sum = new Map()
    for (const p of phases.slice(1)) for (const [tid, us] of p.threads[i]) sum.set(tid, (sum.get(tid) ?? 0) + us)
    return chainThreads(pid, sum)
  })
  log(`  chain threads (busiest besides main over the loads): producer ${overLoads[0].chain}, replica ${overLoads[1].chain}`)
  const lagRows = []
  const cpuRows = []
  for (const { name, blocks, threads } of phases) {
    for (const [kind, side] of [['with transactions', blocks.loaded], ['empty', blocks.empty]]) {
      if (side.count === 0) continue
      const hist = lagTotal(side.hist)
      lagRows.push({
        load: name,
        blocks: `${side.count} ${kind}`,
        'newHeads lag p50 / p99 / max ms': `${ms(quantile(side.lags, 0.5))} / ${ms(quantile(side.lags, 0.99))} / ${ms(Math.max(...side.lags))}`,
        'keel_replica_lag_seconds p50 / p99 ms': `${ms(histogramQuantile(hist, 0.5))} / ${ms(histogramQuantile(hist, 0.99))}`,
        'its mean ms (blocks)': hist ? `${ms((hist.sum / Math.max(1, hist.count)) * 1000)} (${hist.count})` : '-',
        'newHeads lag > 1 s': side.lags.filter((x) => x > 1000).length,
      })
    }
    const n = blocks.loaded.count + blocks.empty.count
    const [p, r] = threads.map((t, i) => {
      const total = [...t.values()].reduce((a, b) => a + b, 0)
      return { total, main: t.get(pids[i]) ?? 0, chain: t.get(overLoads[i].chain) ?? 0, second: t.get(overLoads[i].second) ?? 0 }
    })
    const per = (us) => (us / n / 1000).toFixed(1)
    cpuRows.push({
      load: name,
      blocks: `${n} (${blocks.loaded.count} with tx)`,
      'producer ms/block: process / chain thread / main': `${per(p.total)} / ${per(p.chain)} / ${per(p.main)}`,
      'replica ms/block: process / chain thread / main': `${per(r.total)} / ${per(r.chain)} / ${per(r.main)}`,
      'replica/producer: process / chain thread': `${(r.total / p.total).toFixed(2)} / ${(r.chain / p.chain).toFixed(2)}`,
      'runner-up thread ms/block producer / replica': `${per(p.second)} / ${per(r.second)}`,
    })
  }
  return { lagRows, cpuRows }
}

/**
 * 3. Reads: one replica directly, HAProxy to one replica, HAProxy to two; each load first warms both
 * replicas up directly (unmeasured), then runs on the three targets in turn, in reverse order in even rounds.
 */
async function reads(replicas, ctx) {
  const lbOne = await startHaproxy(replicas.slice(0, 1))
  const lbTwo = await startHaproxy(replicas)
  const all = [...replicas.map((r) => r.pid), lbOne.pid, lbTwo.pid]
  const rows = []
  try {
    const targets = [
      ['replica 1 directly', { url: replicas[0].url }, [replicas[0]]],
      ['HAProxy -> replica 1', lbOne, [replicas[0]]],
      ['HAProxy -> replicas 1 and 2', lbTwo, replicas],
    ]
    // distinct eth_call bodies for every run, so that no answer comes from a cache
    let next = 0
    const loads = [
      ['eth_getBalance', () => ({ body: req('eth_getBalance', [devWallet(1).address, 'latest']) })],
      ['eth_call balanceOf (unique)', () => ({ bodies: uniqueBalanceOfCalls(ctx, 200_000 + next++ * 50_000) })],
    ]
    for (const [method, body] of loads) {
      for (const replica of replicas) errors += (await cannon(replica.url, { ...body(), duration: quick ? 1 : 3 })).errors
      const runs = targets.map(() => [])
      for (let round = 1; round <= READ_ROUNDS; round++) {
        const order = round % 2 === 1 ? [0, 1, 2] : [2, 1, 0]
        for (const t of order) {
          const [target, lb, behind] = targets[t]
          const pids = [...behind.map((r) => r.pid), ...(lb.pid ? [lb.pid] : [])]
          await settle(all)
          const served0 = lb.served ? await lb.served() : []
          const cpu0 = pids.map(cpuMicros)
          const r = await cannon(lb.url, { ...body(), duration: READ_SECONDS })
          const cpu = pids.map((pid, i) => (cpuMicros(pid) - cpu0[i]) / r.calls)
          const served = lb.served ? (await lb.served()).map((n, i) => n - served0[i]) : []
          errors += r.errors
          runs[t].push({ r, replicaCpu: cpu.slice(0, behind.length).reduce((a, b) => a + b, 0), lbCpu: lb.pid ? cpu.at(-1) : undefined, served })
          log(`  ${method} via ${target}, round ${round}: ${r.value} req/s, ${r.errors} errors`)
        }
      }
      targets.forEach(([target, lb], t) => {
        const list = runs[t]
        const mean = (f) => list.reduce((sum, x) => sum + f(x), 0) / list.length
        rows.push({
          reads: method,
          target,
          'req/s (rounds)': list.map((x) => x.r.value).join(' / '),
          'p99 ms': list.map((x) => x.r.p99).join(' / '),
          'replica CPU µs/call': Number(mean((x) => x.replicaCpu).toFixed(1)),
          'HAProxy CPU µs/call': lb.pid ? Number(mean((x) => x.lbCpu).toFixed(1)) : '-',
          'answered by r1 / r2': lb.pid ? list[0].served.map((_, i) => list.reduce((sum, x) => sum + x.served[i], 0)).join(' / ') : '-',
          errors: list.reduce((sum, x) => sum + x.r.errors, 0),
        })
      })
    }
  } finally {
    await lbOne.stop()
    await lbTwo.stop()
  }
  return rows
}

/** The replica CPU one scrape of its metrics costs (the lag phases scrape once a block); ms. */
async function scrapeCost(replica) {
  const cpu0 = cpuMicros(replica.pid)
  for (let i = 0; i < 20; i++) await scrapeLag(replica)
  return (cpuMicros(replica.pid) - cpu0) / 20 / 1000
}

// ---------------------------------------------------------------------------------------------------

const commit = (() => {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim()
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src'], { encoding: 'utf8' }).trim() !== ''
    return dirty ? `${head} (src/ with uncommitted changes)` : head
  } catch {
    return 'unknown'
  }
})()
log(`replication bench${quick ? ' --quick' : ''}: ${new Date().toISOString()}, commit ${commit}, ${cpus().length} cores, Node ${process.version}, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`)
const started = Date.now()
let nats
let genesis
const nodes = []
let failed = false
try {
  nats = await startNats()
  dirs.add(nats.storeDir)
  const natsPid = childPid('nats-server')
  if (natsPid !== undefined) live.add(natsPid)
  genesis = writeGenesis()
  dirs.add(dirname(genesis))
  const producer = await startProducer(nats, genesis)
  nodes.push(producer)
  const replica = await startReplica(nats, producer, genesis)
  nodes.push(replica)
  const plain = await startProducer(undefined, genesis)
  nodes.push(plain)
  log(`nats-server ${nats.url} (pid ${natsPid}), producer ${producer.url} (pid ${producer.pid}), replica ${replica.url} (pid ${replica.pid}), producer without the stream ${plain.url} (pid ${plain.pid})`)
  const contexts = [await prepare(producer, quick), await prepare(plain, quick)]
  await waitForHead(replica, await headOf(producer))
  await settle([producer.pid, replica.pid, plain.pid])

  log('\n4. hot path: transfers with and without --stream-url, alternating')
  const hot = await hotPath(producer, replica, natsPid, plain, contexts)
  await stopNode(plain)
  nodes.splice(nodes.indexOf(plain), 1)

  log('\n1-2. lag and CPU per block')
  const { lagRows, cpuRows } = await lagAndCpu(producer, replica, contexts[0])
  await settle([producer.pid, replica.pid])
  const scrapeMs = await scrapeCost(replica)

  log('\n3. reads through HAProxy')
  const spawnedAt = performance.now()
  const second = await startReplica(nats, producer, genesis)
  nodes.push(second)
  const target = await headOf(producer)
  await waitForHead(second, target)
  log(`  a second replica started and reached block ${target} in ${((performance.now() - spawnedAt) / 1000).toFixed(1)} s`)
  const readRows = await reads([replica, second], contexts[0])

  log(`\n1. replication lag (newHeads: the producer's notification of a block to the replica's; keel_replica_lag_seconds: the replica's histogram, interpolated within buckets)`)
  console.table(lagRows)
  log(`\n2. CPU per block (all blocks of the phase; the chain thread is the busiest thread besides the main one; the replica's figures include one metrics scrape a block, ${scrapeMs.toFixed(2)} ms of its CPU each)`)
  console.table(cpuRows)
  log(`\n3. reads, ${READ_ROUNDS} round(s) of ${READ_SECONDS} s a target, 32 connections, all on this host`)
  console.table(readRows)
  log(`\n4. hot path: mined transfers, 64 senders x ${PER_SENDER}, every receipt checked; ${AB_ROUNDS} alternating rounds after a warm-up run of each`)
  console.table(hot)
} catch (err) {
  failed = true
  log(`\nreplication bench FAILED: ${err.stack ?? err}`)
} finally {
  for (const node of nodes.reverse()) await stopNode(node)
  await nats?.close()
  live.clear()
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  dirs.clear()
}
log(`\nreplication bench finished in ${((Date.now() - started) / 1000).toFixed(0)} s, ${errors} errors${failed ? ', and a failure' : ''}`)
process.exit(failed || errors > 0 ? 1 : 0)
