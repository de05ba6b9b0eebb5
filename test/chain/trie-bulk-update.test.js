// The one-pass state trie update gives the root @ethereumjs/mpt gives for the same writes, and stores
// every node a later read needs.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { MerklePatriciaTrie } from '@ethereumjs/mpt'
import { bytesToHex } from '@ethereumjs/util'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { bulkUpdateTrie } from '../../dist/chain/store/trie-bulk-update.js'
import { toNibbles, compareNibbles } from '../../dist/chain/ordered-trie.js'
import { TimeSlicer } from '../../dist/util/time-slicer.js'

// a small deterministic generator, so that a failure can be replayed
function rng(seed) {
  let s = seed >>> 0
  return () => {
    s = (s + 0x6d2b79f5) >>> 0
    let t = s
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function bytes(random, n) {
  const out = new Uint8Array(n)
  for (let i = 0; i < n; i++) out[i] = Math.floor(random() * 256)
  return out
}

/**
 * Keys share prefixes often (few distinct first bytes) so that extensions appear; `short` keys (3 bytes
 * from a 4-letter alphabet) make deep tries whose small leaves and branches are embedded in their parent.
 */
let short = false
function key(random) {
  if (short) return Uint8Array.from([0, 0, 0].map(() => [0, 1, 2, 0x10][Math.floor(random() * 4)]))
  const k = bytes(random, 32)
  k[0] = Math.floor(random() * 3)
  if (random() < 0.5) k[1] = 7
  return k
}

const value = (random) => bytes(random, [1, 2, 5, 20, 31, 40, 80][Math.floor(random() * 7)])

async function check(seed, initial, batches, slicer) {
  const random = rng(seed)
  const reference = new MerklePatriciaTrie()
  const subject = new MerklePatriciaTrie()
  const keys = []
  for (let i = 0; i < initial; i++) {
    const k = key(random)
    const v = value(random)
    keys.push(k)
    await reference.put(k, v)
    await subject.put(k, v)
  }
  for (let b = 0; b < batches.length; b++) {
    const writes = new Map()
    for (let i = 0; i < batches[b]; i++) {
      const r = random()
      // delete an existing key, overwrite one, write a new one, or delete a key that is not there
      const k = r < 0.3 && keys.length > 0 ? keys[Math.floor(random() * keys.length)] : r < 0.9 ? key(random) : key(random)
      const v = r < 0.3 || r >= 0.9 ? new Uint8Array(0) : value(random)
      writes.set(bytesToHex(k), [k, v])
      if (v.length > 0) keys.push(k)
    }
    for (const [k, v] of writes.values()) {
      if (v.length === 0) await reference.del(k)
      else await reference.put(k, v)
    }
    const items = [...writes.values()].map(([k, v]) => ({ nibbles: toNibbles(k), value: v }))
    items.sort((x, y) => compareNibbles(x.nibbles, y.nibbles))
    const root = await bulkUpdateTrie(subject.database(), subject.root(), items, keccak_256, slicer)
    assert.equal(bytesToHex(root), bytesToHex(reference.root()), `seed ${seed}, batch ${b}: roots differ`)
    subject.root(root)
    for (const k of keys) {
      const expected = await reference.get(k)
      const got = await subject.get(k)
      assert.equal(got === null ? null : bytesToHex(got), expected === null ? null : bytesToHex(expected), `seed ${seed}, batch ${b}: value of ${bytesToHex(k)}`)
    }
  }
}

for (const [seed, initial, batches] of [
  [1, 0, [1]],
  [2, 0, [5, 5]],
  [3, 1, [1, 1, 1]],
  [4, 3, [2, 3, 10]],
  [5, 40, [20, 40, 5]],
  [6, 300, [100, 300, 50]],
  [7, 2000, [1000, 10]],
]) {
  test(`bulk trie update = key-by-key MPT (seed ${seed}: ${initial} keys, batches ${batches.join('/')})`, async () => {
    await check(seed, initial, batches)
  })
}

for (const seed of [11, 12, 13]) {
  test(`bulk trie update = key-by-key MPT with embedded nodes (short keys, seed ${seed})`, async () => {
    short = true
    try {
      await check(seed, 20, [10, 30, 5, 40])
    } finally {
      short = false
    }
  })
}

test('deleting every key gives the empty trie root', async () => {
  const random = rng(9)
  const trie = new MerklePatriciaTrie()
  const keys = Array.from({ length: 50 }, () => key(random))
  for (const k of keys) await trie.put(k, value(random))
  const items = keys.map((k) => ({ nibbles: toNibbles(k), value: new Uint8Array(0) })).sort((x, y) => compareNibbles(x.nibbles, y.nibbles))
  const root = await bulkUpdateTrie(trie.database(), trie.root(), items, keccak_256)
  assert.equal(bytesToHex(root), bytesToHex(new MerklePatriciaTrie().root()))
})

test('a bulk update with a time slicer gives the event loop turns while it descends, and the same root', async () => {
  // a slicer whose slices are over at once turns at every subtrie and between the new subtries' hashing;
  // the producer's uses 5 ms (src/chain/seal-turns.ts)
  const slicer = new TimeSlicer(0)
  let turns = 0
  let counting = true
  const count = () => {
    if (!counting) return
    turns++
    setImmediate(count)
  }
  setImmediate(count)
  try {
    await check(21, 300, [200, 50], slicer)
  } finally {
    counting = false
  }
  assert.ok(turns > 100, `only ${turns} event loop turns during the updates`)
})
