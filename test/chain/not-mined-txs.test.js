// The memory of hashes the transaction index did not hold: a miss answers "not mined" once a block has
// been applied since it was found (never at the head it was found at), until a block holding the hash is
// applied; a lookup that raced a block records nothing; a transaction the pool accepted counts the same
// way from the head it was handed over at; it stays bounded.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { NotMinedTxs } from '../../dist/chain/not-mined-txs.js'

const hash = (n) => `0x${n.toString(16).padStart(64, '0')}`

test('a miss counts from the next block on, until a block with the hash is applied; other blocks leave it', () => {
  const notMined = new NotMinedTxs(100)
  assert.equal(notMined.has(hash(1)), false)
  notMined.recordMiss(hash(1), notMined.epoch)
  notMined.recordMiss(hash(2), notMined.epoch)
  assert.equal(notMined.has(hash(1)), false, 'at the head it was found missing at, the index is read again')
  notMined.blockApplied([hash(3), hash(4)])
  assert.equal(notMined.has(hash(1)), true)
  // asked again at a later head: still counted from the first miss
  notMined.recordMiss(hash(1), notMined.epoch)
  assert.equal(notMined.has(hash(1)), true)
  notMined.blockApplied([])
  assert.equal(notMined.has(hash(1)), true)
  notMined.blockApplied([hash(5), hash(1)])
  assert.equal(notMined.has(hash(1)), false)
  assert.equal(notMined.has(hash(2)), true)
})

test('a lookup that started before a block was applied records no miss (the block may hold the hash)', () => {
  const notMined = new NotMinedTxs(100)
  const epoch = notMined.epoch
  notMined.blockApplied([hash(7)])
  notMined.recordMiss(hash(7), epoch)
  notMined.recordMiss(hash(8), epoch)
  notMined.blockApplied([])
  assert.equal(notMined.has(hash(7)), false)
  assert.equal(notMined.has(hash(8)), false, 'any block applied meanwhile voids the lookup')
  notMined.recordMiss(hash(8), notMined.epoch)
  notMined.blockApplied([])
  assert.equal(notMined.has(hash(8)), true)
})

test('bounded: the least recently asked hashes are dropped', () => {
  const notMined = new NotMinedTxs(10)
  for (let n = 0; n < 1000; n++) notMined.recordMiss(hash(n), notMined.epoch)
  notMined.blockApplied([])
  let held = 0
  for (let n = 0; n < 1000; n++) if (notMined.has(hash(n))) held++
  assert.ok(held > 0 && held <= 10, `${held} held`)
  assert.equal(notMined.has(hash(999)), true)
})

test('a transaction the pool accepted: not mined from the next block on; a block applied during the hand-over voids it', () => {
  const notMined = new NotMinedTxs(100)
  const before = notMined.epoch
  notMined.recordAccepted(hash(20), before)
  assert.equal(notMined.has(hash(20)), false, 'at the head it was accepted at, the index is read')
  notMined.blockApplied([hash(21)])
  assert.equal(notMined.has(hash(20)), true, 'its receipt polls after a block without it read memory')
  notMined.blockApplied([hash(20)])
  assert.equal(notMined.has(hash(20)), false, 'mined')

  // the block holding it applied before the pool's answer came back: nothing recorded
  const handedOverAt = notMined.epoch
  notMined.blockApplied([hash(22)])
  notMined.recordAccepted(hash(22), handedOverAt)
  notMined.blockApplied([])
  assert.equal(notMined.has(hash(22)), false)
})
