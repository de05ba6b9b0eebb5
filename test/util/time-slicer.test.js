// A turn of the event loop lets what is waiting run, and the immediates those callbacks queue: the
// producer's submissions queue their journal write that way (src/chain/store/group-commit.ts), and a
// build's slice must not resume ahead of it.

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { MessageChannel } from 'node:worker_threads'
import { eventLoopTurn, TimeSlicer } from '../../dist/util/time-slicer.js'

test('an immediate queued by a message handler that ran in the turn runs before the turn ends', async () => {
  const order = []
  const { port1, port2 } = new MessageChannel()
  // a submission's handler: its journal write is queued with setImmediate (the group commit)
  port1.on('message', (n) => {
    order.push(`message ${n}`)
    setImmediate(() => order.push(`its write ${n}`))
  })
  try {
    for (let n = 1; n <= 3; n++) {
      // a job's slice, resumed from an immediate as a build's slices are, during which a message arrives
      await eventLoopTurn()
      port2.postMessage(n)
      const until = performance.now() + 3
      while (performance.now() < until) {
        // the slice's work
      }
      await eventLoopTurn()
      order.push(`job resumes ${n}`)
    }
    assert.deepEqual(order, ['message 1', 'its write 1', 'job resumes 1', 'message 2', 'its write 2', 'job resumes 2', 'message 3', 'its write 3', 'job resumes 3'])
  } finally {
    port1.close()
  }
})

test('a slicer is due once its slice has run, and a turn starts a new slice', async () => {
  const slicer = new TimeSlicer(5)
  assert.equal(slicer.due, false)
  const until = performance.now() + 6
  while (performance.now() < until) {
    // a slice's work
  }
  assert.equal(slicer.due, true)
  await slicer.turn()
  assert.equal(slicer.due, false)
})
