// The in-memory index of recent transactions: lookups for the latest blocks skip LevelDB, older blocks
// drop out whole, and what it cannot index it leaves to the database.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { RecentTxIndex } from '../../dist/chain/recent-txs.js'

const hash = (n) => `0x${n.toString(16).padStart(64, '0')}`

test('recent transactions are found by hash with their block and index; old blocks drop out whole', () => {
  const index = new RecentTxIndex(10)
  index.add(1n, [hash(1), hash(2), hash(3), hash(4)])
  index.add(2n, [])
  index.add(3n, [hash(5), hash(6), hash(7), hash(8)])
  assert.deepEqual(index.get(hash(3)), { number: 1n, index: 2 })
  assert.deepEqual(index.get(hash(8)), { number: 3n, index: 3 })
  assert.equal(index.get(hash(99)), undefined)
  // 4 + 4 + 4 > 10: block 1 goes, all of it
  index.add(4n, [hash(9), hash(10), hash(11), hash(12)])
  for (let n = 1; n <= 4; n++) assert.equal(index.get(hash(n)), undefined, `tx ${n} of the dropped block`)
  assert.deepEqual(index.get(hash(5)), { number: 3n, index: 0 })
  assert.deepEqual(index.get(hash(12)), { number: 4n, index: 3 })
})

test('a block bigger than the whole index is still kept (the newest block always is)', () => {
  const index = new RecentTxIndex(3)
  index.add(7n, [hash(1), hash(2)])
  index.add(8n, [hash(3), hash(4), hash(5), hash(6)])
  assert.equal(index.get(hash(1)), undefined)
  assert.deepEqual(index.get(hash(6)), { number: 8n, index: 3 })
  index.add(9n, [hash(7)])
  assert.equal(index.get(hash(6)), undefined)
  assert.deepEqual(index.get(hash(7)), { number: 9n, index: 0 })
})

test('block numbers round-trip exactly up to 2^33; beyond, the index stays out of the way', () => {
  const index = new RecentTxIndex(100)
  const high = 2n ** 33n - 1n
  index.add(high, [hash(1), hash(2)])
  assert.deepEqual(index.get(hash(2)), { number: high, index: 1 })
  index.add(2n ** 33n, [hash(3)])
  assert.equal(index.get(hash(3)), undefined)
})

test('many blocks: memory is reclaimed and lookups stay right', () => {
  const index = new RecentTxIndex(50)
  let next = 0
  for (let b = 1n; b <= 5000n; b++) index.add(b, [hash(++next), hash(++next)])
  assert.deepEqual(index.get(hash(next)), { number: 5000n, index: 1 })
  assert.deepEqual(index.get(hash(next - 49)), { number: 4976n, index: 0 })
  assert.equal(index.get(hash(next - 50)), undefined)
})
