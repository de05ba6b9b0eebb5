// The trie reader behind state reads: the values @ethereumjs/mpt stores, read from the nodes' encodings in
// place, and a node cache bounded by the bytes the nodes hold, not by their count.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { MerklePatriciaTrie } from '@ethereumjs/mpt'
import { bytesToHex, hexToBytes } from '@ethereumjs/util'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { TrieReader } from '../../dist/chain/store/trie-reader.js'

const keys = Array.from({ length: 300 }, (_, i) => keccak_256(Uint8Array.of(i >> 8, i & 255)))
const trie = new MerklePatriciaTrie()
for (const [i, k] of keys.entries()) await trie.put(k, Uint8Array.of(1, i >> 8, i & 255))

function countingSource() {
  const source = {
    fetches: 0,
    async fetch(hex) {
      source.fetches++
      return (await trie.database().get(hexToBytes(`0x${hex}`))) ?? undefined
    },
  }
  return source
}

async function readAll(reader) {
  for (const k of keys) {
    const got = await reader.get(trie.root(), k)
    assert.equal(bytesToHex(got), bytesToHex(await trie.get(k)))
  }
  assert.equal(await reader.get(trie.root(), keccak_256(Uint8Array.of(0xff, 0xff, 0xff))), null, 'a missing key reads null')
}

test('with room for the whole trie, a second pass reads nothing from the source', async () => {
  const source = countingSource()
  const reader = new TrieReader(source, 16 << 20)
  await readAll(reader)
  assert.ok(source.fetches > 0)
  const first = source.fetches
  await readAll(reader)
  assert.equal(source.fetches, first)
})

test('a small byte budget keeps only a few nodes: the second pass reads them again, with the same values', async () => {
  const source = countingSource()
  const reader = new TrieReader(source, 8 << 10)
  await readAll(reader)
  const first = source.fetches
  await readAll(reader)
  assert.ok(source.fetches - first > first / 2, `second pass fetched ${source.fetches - first} of ${first}`)
})

/** A reader over `t`'s nodes, each read from the MPT's database. */
function readerOf(t, cacheBytes = 16 << 20) {
  return new TrieReader({ fetch: async (hex) => (await t.database().get(hexToBytes(`0x${hex}`))) ?? undefined }, cacheBytes)
}

test('embedded nodes, values in branches, long values and keys of every length read as the MPT reads them', async () => {
  // unhashed keys of 1-3 bytes from a small alphabet: deep tries whose small leaves and branches are embedded
  // in their parents, keys that end where others go on (a branch's own value), values from 1 to 300 bytes
  // (RLP's long-string header from 56 on)
  const t = new MerklePatriciaTrie()
  const written = new Map()
  const alphabet = [0x00, 0x01, 0x10, 0x11, 0xff]
  let n = 0
  for (const a of alphabet) {
    for (const b of [undefined, ...alphabet]) {
      for (const c of [undefined, ...alphabet.slice(0, 2)]) {
        if (b === undefined && c !== undefined) continue
        const key = Uint8Array.from([a, b, c].filter((x) => x !== undefined))
        const length = [1, 2, 31, 32, 55, 56, 300][n++ % 7]
        const value = Uint8Array.from({ length }, (_, i) => (i + n) & 255)
        await t.put(key, value)
        written.set(bytesToHex(key), value)
      }
    }
  }
  for (const pass of [1, 2]) {
    const reader = readerOf(t)
    for (const [hex, value] of written) {
      assert.equal(bytesToHex(await reader.get(t.root(), hexToBytes(hex))), bytesToHex(value), `${hex} (pass ${pass})`)
    }
    for (const missing of ['0x02', '0x0002', '0x000002', '0x00000000', '0xfe', '0xff00ff', '0x1012']) {
      assert.equal(await reader.get(t.root(), hexToBytes(missing)), null, missing)
    }
  }
})

test('a node that is not RLP of a trie node throws a TrieNodeError, read past nothing', async () => {
  const root = keccak_256(Uint8Array.of(1))
  for (const [bytes, what] of [
    [Uint8Array.of(0x80), 'a string, not a list'],
    [Uint8Array.of(0xc3, 0x80, 0x80), 'a list cut short'],
    [Uint8Array.of(0xf9, 0x01), 'a long list whose length runs out'],
    [Uint8Array.of(0xc3, 0x20, 0xb8, 0x40), 'a value longer than its node'],
    [Uint8Array.of(0xc3, 0x80, 0x81, 0x05), 'a short node with an empty path'],
    [Uint8Array.of(0xc5, 0x81, 0x00, 0x82, 0x01, 0x02), 'an extension whose child reference is 2 bytes'],
  ]) {
    const reader = new TrieReader({ fetch: () => bytes }, 1 << 20)
    await assert.rejects(reader.get(root, new Uint8Array(32)), { name: 'TrieNodeError' }, what)
  }
})
