// Trie nodes read in place: the same items RLP.decode gives, as views of the node's own bytes.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { MerklePatriciaTrie } from '@ethereumjs/mpt'
import { RLP } from '@ethereumjs/rlp'
import { bytesToHex } from '@ethereumjs/util'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { decodeNodeViews } from '../../dist/chain/store/trie-node.js'

const hexTree = (items) => items.map((x) => (Array.isArray(x) ? hexTree(x) : bytesToHex(x)))

function sharesBuffer(items, buffer) {
  return items.every((x) => (Array.isArray(x) ? sharesBuffer(x, buffer) : x.length === 0 || x.buffer === buffer))
}

test('every node of a trie (branches, extensions, leaves, embedded nodes, long values) decodes as RLP.decode does, into views of its bytes', async () => {
  const t = new MerklePatriciaTrie()
  // hashed keys (branches and leaves), keys with long shared prefixes (extensions), short keys with small
  // values (nodes under 32 bytes, embedded in their parent), values past 55 bytes (a long string's header)
  for (let i = 0; i < 200; i++) await t.put(keccak_256(Uint8Array.of(i)), Uint8Array.of(i, 1, 2))
  for (let i = 0; i < 20; i++) await t.put(Uint8Array.from([9, 9, 9, 9, 9, 9, i]), new Uint8Array(60 + i).fill(i))
  for (let i = 0; i < 16; i++) await t.put(Uint8Array.of(0xaa, i), Uint8Array.of(i))
  const kinds = { branch: 0, short: 0, embedded: 0 }
  const nodes = []
  await t.walkTrie(t.root(), async (_ref, node, _key, controller) => {
    nodes.push(node.serialize())
    controller.allChildren(node)
  })
  assert.ok(nodes.length > 100)
  for (const encoded of nodes) {
    const views = decodeNodeViews(encoded)
    assert.deepEqual(hexTree(views), hexTree(RLP.decode(encoded)))
    assert.ok(sharesBuffer(views, encoded.buffer), 'items are views of the node, not copies')
    if (views.length === 17) kinds.branch++
    else kinds.short++
    if (views.some(Array.isArray)) kinds.embedded++
  }
  assert.ok(kinds.branch > 0 && kinds.short > 0 && kinds.embedded > 0, JSON.stringify(kinds))
})

test('bytes that are not one trie node are refused', () => {
  for (const [bytes, what] of [
    [Uint8Array.of(0x80), 'a string'],
    [Uint8Array.of(0xc2, 0x80), 'a list cut short'],
    [Uint8Array.of(0xc2, 0x80, 0x80, 0x00), 'bytes after the node'],
    [Uint8Array.of(0xc3, 0x80, 0x80, 0x80), 'three items'],
    [Uint8Array.of(0xc4, 0x80, 0xb8, 0x40, 0x00), 'an item longer than the node'],
  ]) {
    assert.throws(() => decodeNodeViews(bytes), { name: 'TrieNodeError' }, what)
  }
})
