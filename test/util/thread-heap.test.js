// A thread's live heap (keel_thread_heap_live_bytes) is read just after its full collections: retained
// objects raise it, garbage awaiting collection does not.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { ThreadHeaps } from '../../dist/util/thread-heap.js'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc')
const MiB = 1024 * 1024
// the observer's callback runs on a later turn of the event loop
const settle = () => new Promise((resolve) => setTimeout(resolve, 50))
const main = (heaps) => heaps.current().find((h) => h.thread === 'main')

test('the live heap follows what full collections keep, not the garbage between them', async () => {
  const heaps = new ThreadHeaps()
  try {
    gc()
    await settle()
    const base = main(heaps)
    assert.ok(base.liveBytes > 0 && base.liveBytes <= base.totalBytes, `live ${base.liveBytes} of ${base.totalBytes}`)

    // ~32 MiB kept across a full collection
    let kept = Array.from({ length: 400_000 }, (_, i) => ({ i, s: `entry ${i}` }))
    gc()
    await settle()
    const withKept = main(heaps)
    assert.ok(withKept.liveBytes - base.liveBytes > 16 * MiB, `live rose ${((withKept.liveBytes - base.liveBytes) / MiB).toFixed(1)} MiB`)

    // garbage alone raises the heap in use, not the live size read at the last full collection
    let garbage = Array.from({ length: 400_000 }, (_, i) => ({ i, s: `garbage ${i}` }))
    garbage = undefined
    const withGarbage = main(heaps)
    assert.equal(withGarbage.liveBytes, withKept.liveBytes)

    kept = undefined
    gc()
    await settle()
    const after = main(heaps)
    assert.ok(withKept.liveBytes - after.liveBytes > 16 * MiB, `live fell ${((withKept.liveBytes - after.liveBytes) / MiB).toFixed(1)} MiB`)
    void kept
    void garbage
  } finally {
    heaps.close()
  }
})
