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

test('the sliced root is the same root, and turns while it hashes the leaves', async () => {
  const { orderedTrieRootSliced } = await import('../../dist/chain/ordered-trie.js')
  for (const n of [0, 1, 2, 15, 16, 17, 128, 129, 256, 1000, 4097]) {
    const values = Array.from({ length: n }, (_, i) => valueOf(i))
    let turns = 0
    const always = { due: true, turn: async () => void turns++ }
    // every node hashed once: the pass above the leaves takes the prepared ones instead of hashing them again
    let hashed = 0
    const counting = (data) => (hashed++, keccak_256(data))
    const sliced = bytesToHex(await orderedTrieRootSliced(values, counting, always))
    const slicedHashes = hashed
    hashed = 0
    assert.equal(sliced, bytesToHex(orderedTrieRoot(values, counting)), `${n} values`)
    assert.equal(slicedHashes, hashed, `${n} values: nodes hashed`)
    assert.equal(turns, n, `${n} values: a turn before each leaf`)
    const never = { due: false, turn: async () => assert.fail('not due') }
    assert.equal(bytesToHex(await orderedTrieRootSliced(values, keccak_256, never)), bytesToHex(await referenceRoot(values)), `${n} values`)
  }
})
