// What the main thread can tell about the pool without asking it: a sender counts as pooled from the
// moment its transaction is taken until a block event posted after the pool's answer says otherwise.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { PooledSenders } from '../../dist/chain/pooled-senders.js'

const A = '0x' + 'aa'.repeat(20)
const B = '0x' + 'bb'.repeat(20)

test('the pool as a block event reported it', () => {
  const senders = new PooledSenders()
  assert.equal(senders.mayHavePooled(A), false)
  senders.poolReported([A])
  assert.equal(senders.mayHavePooled(A), true)
  assert.equal(senders.mayHavePooled(B), false)
  senders.poolReported([])
  assert.equal(senders.mayHavePooled(A), false)
})

test('a submission counts while in flight, and once accepted until the next block event', () => {
  const senders = new PooledSenders()
  senders.submitted(A)
  senders.submitted(A)
  assert.equal(senders.mayHavePooled(A), true)
  // a block event while both are in flight: they may land in the pool after it was posted
  senders.poolReported([])
  assert.equal(senders.mayHavePooled(A), true)
  senders.settled(A, false)
  assert.equal(senders.mayHavePooled(A), true, 'one still in flight')
  senders.settled(A, true)
  assert.equal(senders.mayHavePooled(A), true, 'accepted: pooled until a later event says otherwise')
  senders.poolReported([B])
  assert.equal(senders.mayHavePooled(A), false, 'the event after the answer no longer lists it: mined or dropped')
  assert.equal(senders.mayHavePooled(B), true)
})

test('a refused submission leaves nothing behind', () => {
  const senders = new PooledSenders()
  senders.submitted(B)
  senders.settled(B, false)
  assert.equal(senders.mayHavePooled(B), false)
})
