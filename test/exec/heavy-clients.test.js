// The lanes of clients whose calls ran long: one task of a client's calls at a time, the lanes in turn, at
// most `threads` workers for all of them, and a lane closes once its client has had no long call for a while.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { HEAVY_FOR_MS, HeavyClients, LANE_CAPACITY } from '../../dist/exec/heavy-clients.js'

const call = (client, n) => ({ client, n })

test('a client gets a lane once a call of its runs long, and its calls wait there until that call ends', () => {
  const heavy = new HeavyClients(1)
  assert.equal(heavy.has('a'), false)
  heavy.beginLook()
  heavy.sawLong('a', 1000)
  heavy.endLook(1000)
  assert.equal(heavy.has('a'), true)
  assert.equal(heavy.add(call('a', 1)), true)
  assert.equal(heavy.add(call('a', 2)), true)
  assert.equal(heavy.waiting, 2)
  assert.equal(heavy.next(1), undefined, 'its long call still runs')
  heavy.beginLook()
  heavy.endLook(1100)
  const first = heavy.next(1)
  assert.deepEqual(first.calls, [call('a', 1)])
  assert.equal(heavy.next(1), undefined, 'one task of a client at a time')
  first.lane.running = false
  heavy.add(call('a', 3))
  assert.deepEqual(heavy.next(8).calls, [call('a', 2), call('a', 3)], 'what waits goes out together, up to the most asked')
  assert.equal(heavy.waiting, 0)
})

test('the lanes take turns and together hold at most `threads` workers', () => {
  const heavy = new HeavyClients(2)
  heavy.beginLook()
  for (const c of ['a', 'b', 'c']) heavy.sawLong(c, 0)
  heavy.beginLook()
  heavy.endLook(1)
  for (const c of ['a', 'b', 'c']) for (let n = 0; n < 2; n++) heavy.add(call(c, n))
  const one = heavy.next(1)
  const two = heavy.next(1)
  assert.deepEqual([one.calls[0].client, two.calls[0].client], ['a', 'b'])
  assert.equal(heavy.next(1), undefined, 'two lanes run: the third waits')
  one.lane.running = false
  assert.equal(heavy.next(1).calls[0].client, 'c', 'the lane that waited longest goes first')
  two.lane.running = false
  assert.deepEqual(heavy.next(1).calls, [call('a', 1)])
})

test('a client\'s call running long in a shared task counts against the lanes\' threads', () => {
  const heavy = new HeavyClients(1)
  heavy.beginLook()
  heavy.sawLong('a', 0)
  heavy.sawLong('b', 0)
  heavy.beginLook()
  heavy.endLook(1)
  heavy.add(call('b', 0))
  heavy.beginLook()
  heavy.sawLong('a', 2)
  heavy.endLook(2)
  assert.equal(heavy.next(1), undefined, 'a holds the lanes\' one thread')
})

test('a lane closes HEAVY_FOR_MS after its last long call once it holds nothing; a full lane refuses calls', () => {
  const heavy = new HeavyClients(1)
  heavy.beginLook()
  heavy.sawLong('a', 0)
  heavy.endLook(0)
  for (let n = 0; n < LANE_CAPACITY; n++) assert.equal(heavy.add(call('a', n)), true)
  assert.equal(heavy.add(call('a', LANE_CAPACITY)), false)
  heavy.beginLook()
  heavy.endLook(HEAVY_FOR_MS)
  assert.equal(heavy.has('a'), true, 'calls still wait in it')
  assert.equal(heavy.drain().length, LANE_CAPACITY)
  heavy.endLook(HEAVY_FOR_MS - 1)
  assert.equal(heavy.has('a'), true)
  heavy.endLook(HEAVY_FOR_MS)
  assert.equal(heavy.has('a'), false)
  assert.equal(heavy.size, 0)
})

test('a client the pool exempts (an allow-listed address) never gets a lane', () => {
  const heavy = new HeavyClients(1, (client) => client === '10.0.0.5')
  heavy.beginLook()
  heavy.sawLong('10.0.0.5', 0)
  heavy.sawLong('198.51.100.7', 0)
  heavy.endLook(0)
  assert.equal(heavy.has('10.0.0.5'), false)
  assert.equal(heavy.has('198.51.100.7'), true)
  assert.equal(heavy.size, 1)
})
