// WeightedLruMap: bounded by the summed weight of what it holds, keeps what was used recently.

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { WeightedLruMap } from '../../dist/util/weighted-lru.js'

const weightOf = (map, keys, weigh) => keys.filter((k) => map.get(k) !== undefined).reduce((sum, k) => sum + weigh(k), 0)

test('the summed weight stays within the bound, however the entries are sized', () => {
  const weigh = (v) => v
  const map = new WeightedLruMap(1_000, weigh)
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
  const map = new WeightedLruMap(100, (v) => v.weight)
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
  const map = new WeightedLruMap(10, (v) => v)
  map.set('a', 4)
  map.set('a', 1)
  map.set('b', 3)
  assert.equal(map.get('a'), 1)
  assert.equal(map.get('b'), 3)
  map.set('huge', 50)
  assert.equal(map.get('huge'), 50)
})
