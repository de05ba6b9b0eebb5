// Where the CPU goes under one macro scenario: Keel's threads (main, producer, call workers) and this
// load generator, each as a share of one core, from /proc/PID/task/TID/stat. Shows which side is the
// bottleneck on the shared cores (a thread near 100%) or that none is (the pipeline waits).
//
//   npm run build && node bench/macro/thread-cpu.js unique      # eth_call balanceOf, 50k holders
//   node bench/macro/thread-cpu.js repeated                      # the same eth_call every time
//   node bench/macro/thread-cpu.js estimate                      # eth_estimateGas of ERC20 transfers
//   node bench/macro/thread-cpu.js accesslist                    # eth_createAccessList of the same transfers
//   node bench/macro/thread-cpu.js batch                         # a batch of 100 eth_getBalance (8 connections)
//   node bench/macro/thread-cpu.js native                        # 64 senders x 40 transfers, all mined
//   node bench/macro/thread-cpu.js erc20                         # the same with token transfers
//   NO_WARMUP=1 node bench/macro/thread-cpu.js unique 3          # the first seconds of a cold node (no 3 s warm-up)
// The transfer runs are not warmed up, as in the bench: the threads Node leaves unnamed besides the
// producer and the call workers are V8's (TurboFan compiling the code paths a first burst reaches, and
// garbage collection), and show what that first contact costs. There the load generator's CPU per
// transfer includes signing it, and shares of a core are not shown (signing is part of the wall time).

import { threadTimes } from '../lib/thread-times.js'
import { startKeel } from './nodes.js'
import { BALANCE_BATCH, cannon, prepare, repeatedBalanceOfCall, transfers, uniqueBalanceOfCalls, uniqueTransferEstimates } from './scenarios.js'

const which = process.argv[2] ?? 'unique'
const seconds = Number(process.argv[3] ?? 8)
const node = await startKeel()
try {
  const c = await prepare(node, true)
  const load = {
    unique: (round) => ({ bodies: uniqueBalanceOfCalls(c, round * 50_000) }),
    repeated: () => ({ body: repeatedBalanceOfCall(c) }),
    batch: () => ({ body: BALANCE_BATCH, connections: 8 }),
    estimate: (round) => ({ bodies: uniqueTransferEstimates(c, round * 50_000) }),
    accesslist: (round) => ({ bodies: uniqueTransferEstimates(c, round * 50_000).map((body) => body.replace('eth_estimateGas', 'eth_createAccessList')) }),
  }[which]
  const transferKind = { native: 'native', erc20: 'erc20' }[which]
  if (load === undefined && transferKind === undefined) throw new Error(`unknown scenario ${which}: unique, repeated, estimate, accesslist, batch, native or erc20`)
  let measured
  if (load !== undefined) {
    if (!process.env.NO_WARMUP) await cannon(node.url, { ...load(0), duration: 3 }) // warm-up (JIT, caches)
    measured = load(1)
  }
  const keelBefore = threadTimes(node.pid)
  const genBefore = threadTimes(process.pid)
  const startedAt = Date.now()
  const result = load !== undefined ? await cannon(node.url, { ...measured, duration: seconds }) : await transfers(node, c, transferKind, 40)
  const wallMs = Date.now() - startedAt
  const rows = []
  for (const [side, before, after] of [['keel', keelBefore, threadTimes(node.pid)], ['load generator', genBefore, threadTimes(process.pid)]]) {
    for (const [tid, t] of after) {
      const share = (t.ms - (before.get(tid)?.ms ?? 0)) / wallMs
      // Node does not name its worker threads: the main thread is the one whose id is the process id
      const thread = Number(tid) === (side === 'keel' ? node.pid : process.pid) ? 'main' : `thread ${tid}`
      // a transfer run's wall time includes the load generator signing every transaction first
      if (share >= 0.02) rows.push({ side, thread, 'CPU % of a core': load !== undefined ? Math.round(share * 100) : '-', 'CPU µs per call': Math.round((share * wallMs * 1000) / result.calls) })
    }
  }
  console.log(`${which}: ${result.value} ${result.unit}, ${result.errors} errors`)
  console.table(rows)
} finally {
  await node.stop()
}
