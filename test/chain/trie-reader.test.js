// The trie reader behind state reads: the values @ethereumjs/mpt stores, and a node cache bounded by the
// bytes the decoded nodes hold (a branch is ~1.9 KiB decoded), not by their count.

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
