// An idle thread's heap: one collection per idle spell, never while work is open or the thread is busy
// with work it does not bracket, and (in a thread sized as a call worker) the young generation a burst
// grew given back without a full collection.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'
import { IdleCollection } from '../../dist/util/idle-collection.js'

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const IDLE_COLLECTION_URL = JSON.stringify(new URL('../../dist/util/idle-collection.js', import.meta.url).href)

/** Runs `count` workers of an ES module's source; each posts one message; resolves with the messages. */
async function runWorkers(source, { count = 1, resourceLimits } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'keel-idle-'))
  const file = join(dir, 'worker.mjs')
  writeFileSync(file, source)
  const workers = Array.from({ length: count }, () => new Worker(file, { resourceLimits }))
  try {
    return await Promise.all(workers.map((w) => new Promise((resolve, reject) => w.once('message', resolve).once('error', reject))))
  } finally {
    await Promise.all(workers.map((w) => w.terminate()))
    rmSync(dir, { recursive: true, force: true })
  }
}

test('one collection per idle spell, none while work is open', async () => {
  const idle = new IdleCollection(100, 10)
  try {
    // start-up's garbage counts as work: the first spell begins at once
    await sleep(250)
    assert.equal(idle.collections, 1)
    await sleep(250)
    assert.equal(idle.collections, 1, 'a second collection in the same idle spell')

    idle.begin()
    await sleep(250)
    assert.equal(idle.collections, 1, 'a collection while work was open')
    idle.end()
    await sleep(40)
    assert.equal(idle.collections, 1, 'a collection before the spell was long enough')
    await sleep(250)
    assert.equal(idle.collections, 2)

    // two pieces of work open at once: idle only when both ended
    idle.begin()
    idle.begin()
    idle.end()
    await sleep(250)
    assert.equal(idle.collections, 2)
    idle.end()
    await sleep(250)
    assert.equal(idle.collections, 3)
  } finally {
    idle.stop()
  }
})

test('work outside begin/end (the producer\'s seals) holds the spell back until it ends', async () => {
  let sealing = true
  const idle = new IdleCollection(100, 10, () => !sealing)
  try {
    await sleep(250)
    assert.equal(idle.collections, 0, 'a collection while the thread was not quiet')
    sealing = false
    await sleep(40)
    assert.equal(idle.collections, 0, 'the spell began before the work ended')
    await sleep(250)
    assert.equal(idle.collections, 1)
  } finally {
    idle.stop()
  }
})

// A worker with a call worker's young generation (24 MiB) fills its heap, goes idle, and reports its
// heap before and after its collection.
const WORKER = `
import { parentPort } from 'node:worker_threads'
import { getHeapStatistics, getHeapSpaceStatistics } from 'node:v8'
import { constants, PerformanceObserver } from 'node:perf_hooks'
const { IdleCollection } = await import(${IDLE_COLLECTION_URL})
// the collections gc() ran (V8's own are not forced), by kind
const forced = { full: 0, scavenges: 0 }
new PerformanceObserver((list) => {
  for (const { detail } of list.getEntries()) {
    if ((detail.flags & constants.NODE_PERFORMANCE_GC_FLAGS_FORCED) === 0) continue
    if (detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR) forced.full++
    else if (detail.kind === constants.NODE_PERFORMANCE_GC_MINOR) forced.scavenges++
  }
}).observe({ entryTypes: ['gc'] })
const heap = () => ({
  total: getHeapStatistics().total_heap_size,
  young: getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size,
})
const idle = new IdleCollection(6000, 100)
idle.begin()
let kept = []
let garbage = []
for (let i = 0; i < 2_000_000; i++) {
  garbage.push({ i, s: 'x' + i })
  if (garbage.length === 50_000) { kept.push(garbage.slice(0, 200)); garbage = [] }
}
garbage = undefined
idle.end()
const before = heap()
const started = Date.now()
while (idle.collections === 0 && Date.now() - started < 15_000) await new Promise((resolve) => setTimeout(resolve, 100))
// the observer's callback runs on a later turn
await new Promise((resolve) => setTimeout(resolve, 20))
parentPort.postMessage({ before, after: heap(), collections: idle.collections, forced, kept: kept.length })
idle.stop()
`

test('an idle worker gives back the young generation its burst grew, with no full collection', async () => {
  const [report] = await runWorkers(WORKER, { resourceLimits: { maxYoungGenerationSizeMb: 24 } })
  const MiB = 1024 * 1024
  assert.equal(report.collections, 1)
  // scavenges only: a full collection would drop what the thread compiled (src/util/idle-collection.ts)
  assert.deepEqual(report.forced, { full: 0, scavenges: 2 }, 'the collections the idle spell ran')
  assert.ok(report.before.young >= 8 * MiB, `the burst grew the young generation to ${(report.before.young / MiB).toFixed(1)} MiB`)
  assert.ok(report.after.young <= report.before.young / 4, `young generation ${(report.before.young / MiB).toFixed(1)} -> ${(report.after.young / MiB).toFixed(1)} MiB`)
  assert.ok(report.after.total < report.before.total - 8 * MiB, `heap ${(report.before.total / MiB).toFixed(1)} -> ${(report.after.total / MiB).toFixed(1)} MiB`)
})

// Threads reach their first idle spell together: each one's collection runs (the flag that gives gc() is
// process-wide, and one thread clearing it must not leave another without).
const RACER = `
import { parentPort } from 'node:worker_threads'
const { IdleCollection } = await import(${IDLE_COLLECTION_URL})
const idle = new IdleCollection(50, 5)
const started = Date.now()
while (idle.collections === 0 && Date.now() - started < 5_000) await new Promise((resolve) => setTimeout(resolve, 10))
parentPort.postMessage(idle.collections)
idle.stop()
`

test('threads idle at once each run their collection', async () => {
  assert.deepEqual(await runWorkers(RACER, { count: 4 }), [1, 1, 1, 1])
})
