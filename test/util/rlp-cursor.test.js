// src/util/rlp-cursor.ts: RLP read where it lies. Walking an encoding item by item gives back what
// RLP.decode gives, for short and long strings and lists; malformed bytes throw the caller's error.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { RLP } from '@ethereumjs/rlp'
import { RlpCursor } from '../../dist/util/rlp-cursor.js'

/** The item at `pos` of `bytes` (its enclosing item ending at `limit`), as RLP.decode would give it. */
function walk(cursor, bytes, pos, limit) {
  cursor.read(bytes, pos, limit)
  if (!cursor.list) return bytes.slice(cursor.start, cursor.end)
  const items = []
  const end = cursor.end
  for (let at = cursor.start; at < end; ) {
    items.push(walk(cursor, bytes, at, end))
    at = cursor.end
  }
  cursor.end = end
  return items
}

const bytes = (n, fill) => new Uint8Array(n).fill(fill)

test('walking an encoding item by item gives what RLP.decode gives', () => {
  const values = [
    Uint8Array.of(0x7f), Uint8Array.of(0x80), new Uint8Array(0), bytes(55, 1), bytes(56, 2), bytes(300, 3), bytes(70_000, 4),
    [], [Uint8Array.of(1)], [bytes(20, 5), [bytes(32, 6), bytes(32, 7)], bytes(100, 8)],
    Array.from({ length: 300 }, (_, i) => [Uint8Array.of(i % 256), [bytes(i % 60, i % 256)]]),
  ]
  for (const value of values) {
    const encoded = RLP.encode(value)
    const cursor = new RlpCursor()
    assert.deepEqual(walk(cursor, encoded, 0, encoded.length), RLP.decode(encoded))
    assert.equal(cursor.end, encoded.length)
  }
})

test('an item that runs past its enclosing item, or a missing one, throws the error the caller makes', () => {
  const encoded = RLP.encode([bytes(300, 1)])
  const cursor = new RlpCursor((detail) => new RangeError(`bad: ${detail}`))
  assert.throws(() => cursor.read(encoded, 0, encoded.length - 1), { name: 'RangeError', message: /^bad: the item at 0 \(303 bytes\) runs past/ })
  // the inner string's header (0xb9 and two bytes of length) cut short
  assert.throws(() => cursor.read(encoded, 3, 5), { name: 'RangeError', message: /^bad: the length at 3 runs past 5/ })
  assert.throws(() => cursor.read(encoded, 5, 5), { name: 'RangeError', message: /^bad: an item expected at 5/ })
  assert.throws(() => new RlpCursor().read(Uint8Array.of(0x82, 1), 0, 2), /^Error: malformed RLP: the item at 0 \(2 bytes\) runs past 2/)
})
