// TaskAbort: the light abort signal the pool hands piscina (piscina's abort.js contract).

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { TaskAbort } from '../../dist/exec/task-abort.js'

test('fires its listener once with the reason set; a removed listener is not called', () => {
  const signal = new TaskAbort()
  let calls = 0
  signal.once('abort', () => {
    calls++
    assert.equal(signal.aborted, true)
    assert.equal(signal.reason, 'runaway')
  })
  signal.abort('runaway')
  signal.abort('again')
  assert.equal(calls, 1)
  assert.equal(signal.reason, 'runaway')

  const other = new TaskAbort()
  const listener = () => assert.fail('removed listener called')
  other.once('abort', listener)
  other.removeListener('abort', listener)
  other.abort()
  assert.equal(other.aborted, true)
  assert.ok(other.reason instanceof Error)
})
