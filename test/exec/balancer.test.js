// The call pool's load balancer: which worker thread piscina gives a task to.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { chooseWorker, LONG_CALL_MS, runsLong } from '../../dist/exec/balancer.js'
import { CallProgress } from '../../dist/exec/progress.js'

const MAX_USAGE = 2
const worker = (id, currentUsage) => ({ id, currentUsage })
const handed = (thread, { lane } = {}) => ({ progress: new CallProgress(), lane, worker: thread })

/** Claims the task on `thread` and starts its first call, as a worker does. */
function running(task, thread) {
  assert.ok(task.progress.claim(thread))
  assert.ok(task.progress.start(0))
}

test('an idle worker first, else the least busy; none at the limit', () => {
  const tasks = [handed(1), handed(2), handed(2)]
  assert.equal(chooseWorker(null, [worker(1, 1), worker(2, 2), worker(3, 0)], tasks, MAX_USAGE).id, 3)
  assert.equal(chooseWorker(null, [worker(2, 2), worker(1, 1)], tasks, MAX_USAGE).id, 1)
  assert.equal(chooseWorker(null, [worker(1, 2), worker(2, 2)], tasks, MAX_USAGE), null)
})

test('the chosen thread is recorded in the task', () => {
  const task = handed(0)
  assert.equal(chooseWorker(task, [worker(7, 1), worker(8, 0)], [], MAX_USAGE).id, 8)
  assert.equal(task.worker, 8)
  const waiting = handed(0)
  assert.equal(chooseWorker(waiting, [worker(7, 2), worker(8, 2)], [], MAX_USAGE), null)
  assert.equal(waiting.worker, 0, 'a task no worker took names none')
})

test('a worker running a long call gets nothing more; one running a short call does', async () => {
  const long = handed(1)
  running(long, 1)
  await new Promise((resolve) => setTimeout(resolve, LONG_CALL_MS + 20))
  const short = handed(2)
  running(short, 2)
  assert.equal(runsLong(long.progress, Date.now()), true)
  assert.equal(runsLong(short.progress, Date.now()), false)
  assert.equal(chooseWorker(null, [worker(1, 1), worker(2, 1)], [long, short], MAX_USAGE).id, 2)
  assert.equal(chooseWorker(null, [worker(1, 1)], [long], MAX_USAGE), null)
})

test('a lane\'s task holds its worker from the moment it is given to it, before the worker has started it', () => {
  // the lane's task was just given to worker 1, which has not claimed it yet (its progress names no
  // thread); worker 2 runs a short call. Another task given to worker 1 would wait behind the lane's
  // call, which may run for seconds.
  const lane = handed(0, { lane: {} })
  assert.equal(chooseWorker(lane, [worker(1, 0), worker(2, 1)], [], MAX_USAGE).id, 1)
  assert.equal(lane.progress.thread, 0)
  const other = handed(2)
  running(other, 2)
  assert.equal(chooseWorker(handed(0), [worker(1, 1), worker(2, 1)], [lane, other], MAX_USAGE).id, 2)
  // and once it runs, still
  running(lane, 1)
  assert.equal(chooseWorker(handed(0), [worker(1, 1), worker(2, 1)], [lane, other], MAX_USAGE).id, 2)
  assert.equal(chooseWorker(handed(0), [worker(1, 1)], [lane], MAX_USAGE), null)
})
