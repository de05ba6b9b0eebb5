// Keel starts the block producer's thread without V8's memory reducer and then gives the threads after
// it the setting the process started with: an operator's `node --no-memory-reducer` must stay in force.

import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { test } from 'node:test'
import { memoryReducerAtStart } from '../../dist/util/memory-reducer.js'

test('the memory reducer is on unless node was started with it off', () => {
  assert.equal(memoryReducerAtStart([]), true)
  assert.equal(memoryReducerAtStart(['--max-old-space-size=4096', '--memory-reducer-for-small-heaps']), true)
  assert.equal(memoryReducerAtStart(['--no-memory-reducer']), false)
  assert.equal(memoryReducerAtStart(['--no_memory_reducer']), false)
  assert.equal(memoryReducerAtStart(['--nomemory-reducer']), false)
  assert.equal(memoryReducerAtStart(['--no-memory-reducer-for-small-heaps']), true)
})

test('the last of node\'s memory reducer flags wins, as in V8', () => {
  assert.equal(memoryReducerAtStart(['--no-memory-reducer', '--memory-reducer']), true)
  assert.equal(memoryReducerAtStart(['--memory-reducer', '--no-memory-reducer']), false)
})

test('the default reads the flags this node process was started with', () => {
  const script = `import(${JSON.stringify(new URL('../../dist/util/memory-reducer.js', import.meta.url).href)})
    .then((m) => console.log(m.memoryReducerAtStart()))`
  const run = (flags) => execFileSync(process.execPath, [...flags, '-e', script], { encoding: 'utf8' }).trim()
  assert.equal(run([]), 'true')
  assert.equal(run(['--no-memory-reducer']), 'false')
})
