// The write guard on its own: free space below the margin stops writes, a failed write stops them, the
// retry backs off, tells the owner once per kind of cause, and resumes only once a probe write succeeds.

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { StorageWriteError, WriteGuard } from '../../dist/chain/store/write-guard.js'

const MiB = 1024 * 1024
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

function guard({ free, probe, minFree = 64 * MiB }) {
  const changes = []
  let resumed = 0
  const g = new WriteGuard('/data/chain', minFree, { probe, onChange: (s) => changes.push(s), onResume: () => resumed++ }, () => free.bytes)
  return { g, changes, resumed: () => resumed }
}

test('free space below the margin stops writes with the reason; space back past the resume margin resumes at the next retry', async (t) => {
  const free = { bytes: 10 * MiB }
  let probes = 0
  const { g, changes, resumed } = guard({ free, probe: async () => void probes++ })
  t.after(() => g.close())
  assert.equal(g.writable, false)
  assert.throws(() => g.assertWritable(), (err) => err.code === -32603 && /disk full: 10\.0 MiB free on \/data\/chain, --min-free-disk keeps 64 MiB/.test(err.message))
  assert.equal(changes.length, 1)
  assert.equal(changes[0].writable, false)
  assert.equal(changes[0].failures, 1)
  // back above the margin but not past the resume margin (64 MiB + 16 MiB): still stopped
  free.bytes = 70 * MiB
  await sleep(1_150)
  assert.equal(probes, 0)
  assert.equal(g.writable, false)
  free.bytes = 100 * MiB
  assert.equal(g.writable, false, 'resumed before a retry probed the database')
  await sleep(2_100) // the second retry, ~2 s after the first
  assert.equal(probes, 1)
  assert.equal(g.writable, true)
  assert.equal(resumed(), 1)
  assert.deepEqual(changes.map((c) => c.writable), [false, true])
})

test('a failed write stops writes until a probe succeeds; retries back off and are not reported each time', async (t) => {
  const free = { bytes: 100 * MiB }
  let failing = true
  const probeTimes = []
  const started = Date.now()
  const { g, changes, resumed } = guard({
    free,
    probe: async () => {
      probeTimes.push(Date.now() - started)
      if (failing) throw new Error('IO error: 000005.ldb: No space left on device')
    },
  })
  t.after(() => g.close())
  g.writeFailed(new StorageWriteError(new Error('IO error: 000005.ldb: No space left on device')))
  assert.equal(g.writable, false)
  assert.match(g.status().reason, /^a database write failed: IO error: 000005\.ldb: No space left on device$/)
  // an error raised only because writes were already stopped changes nothing
  g.writeFailed(new StorageWriteError())
  assert.match(g.status().reason, /No space left/)
  await sleep(3_300) // retries at ~1 s and ~3 s
  assert.equal(probeTimes.length, 2)
  assert.ok(probeTimes[1] - probeTimes[0] >= 1_900, `the second retry came ${probeTimes[1] - probeTimes[0]} ms after the first`)
  // the first failed probe with room on the disk says a restart is needed, once; the second says nothing new
  assert.equal(changes.length, 2, 'each failed retry was reported')
  assert.match(changes[1].reason, /free space is back but LevelDB keeps refusing writes until the node restarts$/)
  failing = false
  await sleep(4_200) // the next retry, ~4 s later
  assert.equal(g.writable, true)
  assert.equal(resumed(), 1)
  assert.equal(changes.length, 3)
  assert.equal(g.status().failures, 1)
})

test('--min-free-disk 0 never reads the free space', () => {
  const { g } = guard({ free: { get bytes() { throw new Error('statfs called') } }, probe: async () => {}, minFree: 0 })
  assert.equal(g.writable, true)
  g.close()
})
