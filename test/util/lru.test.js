// LruMap: bounded by the count of its entries, or with `weigh` by their summed weight; keeps what was used recently.

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { LruMap } from '../../dist/util/lru.js'

const weightOf = (map, keys, weigh) => keys.filter((k) => map.get(k) !== undefined).reduce((sum, k) => sum + weigh(k), 0)

test('the summed weight stays within the bound, however the entries are sized', () => {
  const weigh = (v) => v
  const map = new LruMap(1_000, weigh)
  const keys = []
  for (let i = 0; i < 5_000; i++) {
    const w = 1 + ((i * 7919) % 300) // 1..300
    keys.push(w * 100_000 + i)
    map.set(keys[i], w)
    // everything held: at most max, plus the one entry that tipped a generation over
    let held = 0
    for (const k of keys) {
      const v = map.get(k)
      if (v !== undefined) held += v
    }
    assert.ok(held <= 1_000 + 300, `holds weight ${held} after ${i + 1} entries`)
  }
  assert.ok(weightOf(map, keys, (k) => Math.floor(k / 100_000)) > 0)
})

test('heavy entries push out more light ones than light entries do; a used entry survives', () => {
  const map = new LruMap(100, (v) => v.weight)
  map.set('kept', { weight: 1 })
  for (let i = 0; i < 40; i++) map.set(`light${i}`, { weight: 1 })
  assert.equal(map.size, 41)
  for (let i = 0; i < 3; i++) {
    assert.ok(map.get('kept') !== undefined, 'an entry read between insertions stays')
    map.set(`heavy${i}`, { weight: 30 })
  }
  assert.ok(map.get('kept') !== undefined)
  assert.ok(map.size < 41, `heavy entries evicted light ones (size ${map.size})`)
})

test('replacing a value re-weighs it; one entry heavier than the whole bound is still served once', () => {
  const map = new LruMap(10, (v) => v)
  map.set('a', 4)
  map.set('a', 1)
  map.set('b', 3)
  assert.equal(map.get('a'), 1)
  assert.equal(map.get('b'), 3)
  map.set('huge', 50)
  assert.equal(map.get('huge'), 50)
})

test('without weights: at most max entries, a re-read entry survives a generation flip, delete frees a place', () => {
  const map = new LruMap(10)
  for (let i = 0; i < 100; i++) {
    map.set(i, i)
    if (i % 3 === 0) assert.equal(map.get(0), 0, `entry 0 kept while read (after ${i})`)
    assert.ok(map.size <= 10, `size ${map.size}`)
  }
  assert.equal(map.get(50), undefined)
  assert.equal(map.get(99), 99)
  assert.equal(map.delete(99), true)
  assert.equal(map.get(99), undefined)
  assert.equal(map.delete(99), false)
})
