// A list joined from items encoded one by one is the list RLP encodes whole: the block's stored receipts
// are encoded in slices on the producer (src/chain/producer.ts) and read back by every node.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { RLP } from '@ethereumjs/rlp'
import { bytesToHex } from '@ethereumjs/util'
import { joinRlpList } from '../../dist/util/rlp-list.js'
import { decodeReceipts, encodeReceipts, encodeStoredReceipt } from '../../dist/chain/receipts.js'

test('joined items are the whole list, at every length prefix form', () => {
  // payload lengths around the one-byte prefix's end (55/56) and past one and two length bytes
  for (const sizes of [[], [0], [54], [55], [56], [1, 53], [300], [70_000], [20, 1_000, 40_000, 30_000]]) {
    const items = sizes.map((n) => randomBytes(n))
    const joined = joinRlpList(items.map((item) => RLP.encode(item)))
    assert.equal(bytesToHex(joined), bytesToHex(RLP.encode(items)), `item sizes ${sizes}`)
    assert.deepEqual(RLP.decode(joined).map((b) => bytesToHex(b)), items.map((b) => bytesToHex(b)))
  }
})

test('a block\'s receipts encoded one by one are its stored receipts', () => {
  const log = () => [randomBytes(20), [randomBytes(32), randomBytes(32)], randomBytes(64)]
  const receipts = Array.from({ length: 300 }, (_, i) => ({
    status: i % 7 === 0 ? 0 : 1,
    cumulativeGasUsed: BigInt(21_000 * (i + 1)),
    logs: Array.from({ length: i % 3 }, log),
  }))
  receipts.push({ status: 1, root: randomBytes(32), cumulativeGasUsed: 99n, logs: [] })
  const joined = joinRlpList(receipts.map(encodeStoredReceipt))
  assert.equal(bytesToHex(joined), bytesToHex(encodeReceipts(receipts)))
  assert.equal(decodeReceipts(joined).length, receipts.length)
})
