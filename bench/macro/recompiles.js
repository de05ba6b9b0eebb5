// What V8's optimizing compiler (TurboFan) compiles in a Keel node during a measured run of transfers,
// after a warm-up run of the same kind: how many compilations, their compile time (on V8's helper thread,
// from --trace-opt), and the functions compiled more than once in the run, by file and line (from the
// node's perf map, --perf-basic-prof-only-functions). In a warmed node a function compiled again and again
// has lost its optimized code each time: a closure made per call, whose optimized code V8 keeps only while
// a closure of it lives, is compiled again after each full collection (docs/measurements.md, "Closures
// made per call").
//
//   npm run build && node bench/macro/recompiles.js [erc20|native] [--per-sender 200]

import { closeSync, openSync, readSync, rmSync, statSync } from 'node:fs'
import { flagValue as opt } from '../lib/args.js'
import { startKeel } from './nodes.js'
import { prepare, signTransfers, submitTransfers } from './scenarios.js'

const KIND = process.argv[2] === 'native' ? 'native' : 'erc20'
const PER_SENDER = Number(opt('--per-sender', 200))
const UNMINED = 64
const TRACE = `/tmp/keel-recompiles-${process.pid}.txt`

process.env.KEEL_BENCH_NODE_ARGS = [process.env.KEEL_BENCH_NODE_ARGS ?? '', '--trace-opt', '--perf-basic-prof-only-functions'].join(' ').trim()
process.env.KEEL_BENCH_STDOUT = TRACE

const sizeOf = (file) => {
  try {
    return statSync(file).size
  } catch {
    return 0
  }
}

/** The bytes a file gained since `from`, as text. */
function textSince(file, from) {
  const fd = openSync(file, 'r')
  try {
    const buf = Buffer.alloc(sizeOf(file) - from)
    readSync(fd, buf, 0, buf.length, from)
    return buf.toString('utf8')
  } finally {
    closeSync(fd)
  }
}

const node = await startKeel()
const perfMap = `/tmp/perf-${node.pid}.map`
try {
  const ctx = await prepare(node, true)
  const warm = await submitTransfers(node, ctx, KIND, await signTransfers(node, ctx, KIND, Math.min(PER_SENDER, 40)), UNMINED)
  const signed = await signTransfers(node, ctx, KIND, PER_SENDER)
  const traceFrom = sizeOf(TRACE)
  const mapFrom = sizeOf(perfMap)
  const run = await submitTransfers(node, ctx, KIND, signed, UNMINED)
  if (warm.errors + run.errors > 0) throw new Error(`${warm.errors + run.errors} transfers failed`)
  const trace = textSince(TRACE, traceFrom)
  let compiles = 0
  let ms = 0
  for (const m of trace.matchAll(/completed compiling .* - took ([\d.]+), ([\d.]+), ([\d.]+) ms/g)) {
    compiles++
    ms += Number(m[1]) + Number(m[2]) + Number(m[3])
  }
  // a perf map line: start size name; TurboFan's code is named "JS:*name url:line:column"
  const sites = new Map()
  for (const line of textSince(perfMap, mapFrom).split('\n')) {
    const m = /^\S+ \S+ JS:\*(\S*) (\S+)$/.exec(line)
    if (m === null) continue
    const url = m[2].includes('/node_modules/') ? m[2].replace(/^.*\/node_modules\//, '') : m[2].replace(/^.*\/dist\//, 'dist/')
    const key = `${m[1] || '(anonymous)'} ${url}`
    sites.set(key, (sites.get(key) ?? 0) + 1)
  }
  const txs = run.calls
  console.log(`Keel, ${KIND} × ${txs} after a warm-up run: ${run.value} tx/s; TurboFan compilations during the run: ${compiles} (${ms.toFixed(0)} ms of compile time, ${(ms * 1000 / txs).toFixed(1)} µs a transfer)`)
  // the node's threads share the map: a function that runs in several of them is listed once per thread
  const again = [...sites].filter(([, n]) => n > 1).sort((a, b) => b[1] - a[1])
  if (again.length === 0) console.log('no function compiled more than once')
  else console.table(again.map(([where, n]) => ({ compilations: n, where })))
} finally {
  await node.stop()
  rmSync(TRACE, { force: true })
  rmSync(perfMap, { force: true })
}
