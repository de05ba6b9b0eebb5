// The one-pass transactions/receipts trie root agrees with @ethereumjs/mpt inserting key by key.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { MerklePatriciaTrie } from '@ethereumjs/mpt'
import { RLP } from '@ethereumjs/rlp'
import { bytesToHex } from '@ethereumjs/util'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { orderedTrieRoot } from '../../dist/chain/ordered-trie.js'

async function referenceRoot(values) {
  const trie = new MerklePatriciaTrie()
  for (let i = 0; i < values.length; i++) await trie.put(RLP.encode(i), values[i])
  return trie.root()
}

// value sizes from 1 byte (nodes embedded in their parent) to receipt-sized
const valueOf = (i) => randomBytes([1, 3, 10, 31, 32, 33, 120, 600][i % 8])

for (const n of [0, 1, 2, 3, 15, 16, 17, 127, 128, 129, 255, 256, 257, 1000, 4097]) {
  test(`ordered trie root of ${n} values matches @ethereumjs/mpt`, async () => {
    const values = Array.from({ length: n }, (_, i) => valueOf(i))
    assert.equal(bytesToHex(orderedTrieRoot(values, keccak_256)), bytesToHex(await referenceRoot(values)))
  })
}

test('ordered trie root changes with any value and with order', async () => {
  const values = Array.from({ length: 50 }, (_, i) => valueOf(i))
  const root = bytesToHex(orderedTrieRoot(values, keccak_256))
  const changed = values.slice()
  changed[37] = randomBytes(40)
  assert.notEqual(bytesToHex(orderedTrieRoot(changed, keccak_256)), root)
  assert.notEqual(bytesToHex(orderedTrieRoot(values.slice().reverse(), keccak_256)), root)
})
