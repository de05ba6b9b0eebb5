// The pool journal's group commit over a real LevelDB: writes of one turn share one batch, each caller
// resumes once its write is on disk (in order with the batches before it), and a failed batch tells the
// owner first and then fails every write it carried.

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { tempLevel } from '../helpers/temp-level.js'
import { GroupCommit } from '../../dist/chain/store/group-commit.js'

const key = (n) => Uint8Array.of(0x70, n)
const value = (n) => Uint8Array.of(n, n, n)
/** What LevelDB holds under a key, as plain numbers (it answers with Buffers). */
const stored = async (level, k) => {
  const v = await level.get(k)
  return v === undefined ? undefined : [...v]
}

/** Counts the LevelDB batches the level is asked for. */
function countBatches(level) {
  const counted = { batches: 0 }
  const batch = level.batch.bind(level)
  level.batch = (...args) => {
    counted.batches++
    return batch(...args)
  }
  return counted
}

test('writes of one turn share one batch; each resolves with its operations on disk, a delete after a put of the same key wins', async (t) => {
  const level = await tempLevel(t, 'group-commit')
  const counted = countBatches(level)
  const journal = new GroupCommit(level)
  const writes = [
    journal.write([{ type: 'put', key: key(1), value: value(1) }]),
    journal.write([{ type: 'put', key: key(2), value: value(2) }, { type: 'put', key: key(3), value: value(3) }]),
    journal.write([{ type: 'del', key: key(2) }]),
  ]
  assert.equal(await level.get(key(1)), undefined, 'nothing is written before the turn ends')
  await Promise.all(writes)
  assert.equal(counted.batches, 1)
  assert.deepEqual(await stored(level, key(1)), [...value(1)])
  assert.equal(await level.get(key(2)), undefined)
  assert.deepEqual(await stored(level, key(3)), [...value(3)])
  // a later turn: a batch of its own, written after the first
  await journal.write([{ type: 'put', key: key(4), value: value(4) }])
  assert.equal(counted.batches, 2)
  assert.deepEqual(await stored(level, key(4)), [...value(4)])
  // an empty write still resolves (after what came before it), and flush with nothing waiting too
  await journal.write([])
  await journal.flush()
})

test('the bytes of a write are taken when it is made: changing them afterwards changes nothing on disk', async (t) => {
  const level = await tempLevel(t, 'group-commit')
  const journal = new GroupCommit(level)
  const v = value(7)
  const done = journal.write([{ type: 'put', key: key(7), value: v }])
  v.fill(0)
  await done
  assert.deepEqual(await stored(level, key(7)), [...value(7)])
})

test('a failed batch tells the owner before any of its writes is failed; the next batch is written', async (t) => {
  const level = await tempLevel(t, 'group-commit')
  const events = []
  const journal = new GroupCommit(level, (err) => events.push(`owner: ${err.message}`))
  const batch = level.batch.bind(level)
  let failNext = true
  level.batch = () => {
    const b = batch()
    if (failNext) {
      failNext = false
      b.write = async () => {
        await b.close()
        throw new Error('disk full')
      }
    }
    return b
  }
  const a = journal.write([{ type: 'put', key: key(1), value: value(1) }]).then(() => events.push('a resolved'), (err) => events.push(`a: ${err.message}`))
  const b = journal.write([{ type: 'put', key: key(2), value: value(2) }]).then(() => events.push('b resolved'), (err) => events.push(`b: ${err.message}`))
  await Promise.all([a, b])
  assert.deepEqual(events, ['owner: disk full', 'a: disk full', 'b: disk full'])
  assert.equal(await level.get(key(1)), undefined)
  await journal.write([{ type: 'put', key: key(3), value: value(3) }])
  assert.deepEqual(await stored(level, key(3)), [...value(3)])
})

test('a write to a closed database is refused at once and the journal keeps working for nothing else', async (t) => {
  const level = await tempLevel(t, 'group-commit')
  const journal = new GroupCommit(level)
  await level.close()
  await assert.rejects(journal.write([{ type: 'put', key: key(1), value: value(1) }]), /not open|closed/i)
  await journal.flush()
})
