// What one mined transfer allocates on Keel's producer thread, garbage included: V8's sampling heap
// profiler (HeapProfiler.startSampling with the objects later collected kept in the profile), reached
// through the inspector (the node started with --inspect, the producer's session through NodeWorker),
// around one run of the macro bench's transfers. Prints KiB a transfer and the allocating functions, or
// the call paths into them.
//
//   npm run build && node bench/macro/tx-alloc.js [erc20|native] [--per-sender 100] [--stacks] [--top 30]
//                      [--survivors] [--main]
//   --survivors  only what outlives the young generation (promoted, or live at the end)
//   --main       the main thread instead (intake, RPC transport, receipt reads, new heads)

import WebSocket from 'ws'
import { flagValue as opt } from '../lib/args.js'
import { freePort } from '../lib/free-port.js'
import { startKeel } from './nodes.js'
import { prepare, signTransfers, submitTransfers } from './scenarios.js'

const KIND = process.argv[2] === 'native' ? 'native' : 'erc20'
const PER_SENDER = Number(opt('--per-sender', 100))
const TOP = Number(opt('--top', 30))
const STACKS = process.argv.includes('--stacks')
// only what outlives the young generation (a scavenge copies it, a full collection frees it): the
// allocations that set the collectors' cost rather than their rate
const SURVIVORS = process.argv.includes('--survivors')
const MAIN = process.argv.includes('--main')
// a sample every 8 KiB allocated (V8's default is 32 KiB): ~25 samples an ERC20 transfer
const SAMPLING_BYTES = 8192
const UNMINED = 64

/** A DevTools protocol session with the producer thread (or with `main`, the main thread's own). */
async function threadSession(port, main) {
  const [target] = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()
  const ws = new WebSocket(target.webSocketDebuggerUrl)
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject))
  let id = 0
  const pending = new Map()
  const workers = []
  ws.on('message', (data) => {
    const msg = JSON.parse(String(data))
    if (msg.id !== undefined) pending.get(`m${msg.id}`)?.(msg)
    if (msg.method === 'NodeWorker.attachedToWorker') workers.push(msg.params)
    if (msg.method === 'NodeWorker.receivedMessageFromWorker') {
      const inner = JSON.parse(msg.params.message)
      if (inner.id !== undefined) pending.get(`w${inner.id}`)?.(inner)
    }
  })
  const call = (key, send) => new Promise((resolve, reject) => {
    pending.set(key, (msg) => {
      pending.delete(key)
      if (msg.error !== undefined) reject(new Error(msg.error.message))
      else resolve(msg.result)
    })
    send()
  })
  if (main) {
    return {
      send(method, params = {}) {
        const my = ++id
        return call(`m${my}`, () => ws.send(JSON.stringify({ id: my, method, params })))
      },
      close: () => ws.close(),
    }
  }
  const my = ++id
  await call(`m${my}`, () => ws.send(JSON.stringify({ id: my, method: 'NodeWorker.enable', params: { waitForDebuggerOnStart: false } })))
  const deadline = Date.now() + 5_000
  while (!workers.some((w) => w.workerInfo.url.includes('producer-thread')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
  const producer = workers.find((w) => w.workerInfo.url.includes('producer-thread'))
  if (producer === undefined) throw new Error('no producer thread in the inspector')
  return {
    send(method, params = {}) {
      const inner = ++id
      return call(`w${inner}`, () =>
        ws.send(JSON.stringify({ id: ++id, method: 'NodeWorker.sendMessageToWorker', params: { sessionId: producer.sessionId, message: JSON.stringify({ id: inner, method, params }) } })),
      )
    },
    close: () => ws.close(),
  }
}

/** Bytes a transfer by allocating function, or by the call path into it (5 frames). */
function aggregate(profile, transfers) {
  const totals = new Map()
  let all = 0
  const walk = (node, path) => {
    const f = node.callFrame
    const here = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*node_modules\//, '').replace(/^.*\/dist\//, 'dist/')}:${f.lineNumber + 1}`
    const next = [here, ...path]
    if (node.selfSize > 0) {
      all += node.selfSize
      const key = STACKS ? next.slice(0, 5).join(' < ') : here
      totals.set(key, (totals.get(key) ?? 0) + node.selfSize)
    }
    for (const child of node.children) walk(child, next)
  }
  walk(profile.head, [])
  return { perTransfer: all / transfers, rows: [...totals].sort((a, b) => b[1] - a[1]).slice(0, TOP).map(([where, bytes]) => ({ 'bytes a transfer': Math.round(bytes / transfers), where })) }
}

const inspectPort = await freePort()
process.env.KEEL_BENCH_NODE_ARGS = `${process.env.KEEL_BENCH_NODE_ARGS ?? ''} --inspect=127.0.0.1:${inspectPort}`.trim()
const node = await startKeel()
try {
  const ctx = await prepare(node, true)
  // a warm-up run: V8 compiles the paths before the measured one
  await submitTransfers(node, ctx, KIND, await signTransfers(node, ctx, KIND, 40), UNMINED)
  const signed = await signTransfers(node, ctx, KIND, PER_SENDER)
  const session = await threadSession(inspectPort, MAIN)
  try {
    await session.send('HeapProfiler.enable')
    await session.send('HeapProfiler.startSampling', { samplingInterval: SAMPLING_BYTES, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: !SURVIVORS })
    const run = await submitTransfers(node, ctx, KIND, signed, UNMINED)
    const { profile } = await session.send('HeapProfiler.stopSampling')
    if (run.errors > 0) throw new Error(`${run.errors} transfers failed`)
    const { perTransfer, rows } = aggregate(profile, run.calls)
    console.log(`Keel's ${MAIN ? 'main thread' : 'producer'}, ${KIND} × ${run.calls} (${run.value} tx/s under the profiler): ${(perTransfer / 1024).toFixed(1)} KiB ${SURVIVORS ? 'outliving the young generation' : 'allocated'} a transfer`)
    console.table(rows)
  } finally {
    session.close()
  }
} finally {
  await node.stop()
}
