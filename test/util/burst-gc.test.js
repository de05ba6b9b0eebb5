// The producer's collector runs a full collection after a burst that grew the heap, and not otherwise.

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { getHeapStatistics } from 'node:v8'
import { BurstCollector } from '../../dist/util/burst-gc.js'

test('a burst that grew the heap past the threshold is collected; a small one is not', () => {
  const collector = new BurstCollector(8 << 20)
  collector.afterBurst()
  const start = collector.collections

  let keep = []
  for (let i = 0; i < 400_000; i++) keep.push({ i, s: `burst-${i}` }) // ~30 MiB, promoted as it is kept
  keep = null
  const before = getHeapStatistics().used_heap_size
  collector.afterBurst()
  assert.equal(collector.collections, start + 1)
  const after = getHeapStatistics().used_heap_size
  assert.ok(after < before - (16 << 20), `heap ${before} -> ${after}`)

  const small = Array.from({ length: 1000 }, (_, i) => ({ i }))
  collector.afterBurst()
  assert.equal(collector.collections, start + 1, 'a small burst runs no collection')
  assert.equal(small.length, 1000)
})

test('collections are spaced to take a small share of the time', async () => {
  const collector = new BurstCollector(1 << 20)
  const burst = () => {
    let keep = []
    for (let i = 0; i < 100_000; i++) keep.push({ i, s: `burst-${i}` })
    keep = null
  }
  burst()
  collector.afterBurst()
  const first = collector.collections
  burst()
  collector.afterBurst()
  assert.equal(collector.collections, first, 'right after a collection, the next one waits')
  await new Promise((resolve) => setTimeout(resolve, 3000))
  burst()
  collector.afterBurst()
  assert.equal(collector.collections, first + 1, 'later, a new burst is collected')
})
