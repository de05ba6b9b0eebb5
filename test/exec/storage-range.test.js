// The ordered walk behind debug_storageRangeAt (src/exec/storage-range.ts) against a sort of every key:
// a trie of random 32-byte keys, with keys that share 31 bytes (so that short leaves are embedded in
// their branch), read from many start keys with many counts.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { createMPT } from '@ethereumjs/mpt'
import { RLP } from '@ethereumjs/rlp'
import { bytesToHex, setLengthLeft } from '@ethereumjs/util'
import { slotsFrom } from '../../dist/exec/storage-range.js'

test('slotsFrom: the keys at or after the start, in order, as many as asked; embedded leaves too', async () => {
  const trie = await createMPT()
  const entries = new Map()
  const put = async (key, value) => {
    await trie.put(key, RLP.encode(value))
    entries.set(bytesToHex(key), bytesToHex(setLengthLeft(value, 32)))
  }
  for (let i = 0; i < 300; i++) await put(new Uint8Array(randomBytes(32)), new Uint8Array(randomBytes(1 + (i % 32))))
  // siblings under one 31-byte prefix with one-byte values: their leaves are shorter than a hash
  const prefix = new Uint8Array(randomBytes(31))
  for (const last of [0x00, 0x01, 0x10, 0x11, 0xff]) await put(Uint8Array.of(...prefix, last), Uint8Array.of(last + 1))
  const sorted = [...entries.keys()].sort()

  const check = async (start, count, exclusive = false) => {
    const got = await slotsFrom(trie, start, count)
    const startHex = bytesToHex(start)
    const from = sorted.filter((k) => (exclusive ? k > startHex.slice(0, 66) : k >= startHex))
    assert.deepEqual(got.map((s) => bytesToHex(s.hashedKey)), from.slice(0, count), `start ${startHex} count ${count}`)
    for (const s of got) assert.equal(bytesToHex(s.value), entries.get(bytesToHex(s.hashedKey)))
  }
  await check(new Uint8Array(0), 1000)
  await check(new Uint8Array(32), 7)
  await check(Uint8Array.of(...prefix), 3) // a 31-byte start: the siblings first
  await check(Uint8Array.of(...prefix, 0x10), 10)
  await check(Uint8Array.of(...prefix, 0x10, 0x00), 2, true) // longer than a key: past the key it starts with
  await check(new Uint8Array(32).fill(0xff), 5)
  for (let i = 0; i < 40; i++) {
    const existing = sorted[Math.floor(Math.random() * sorted.length)]
    await check(Buffer.from(existing.slice(2), 'hex'), 1 + (i % 13))
    await check(new Uint8Array(randomBytes(1 + (i % 32))), 1 + (i % 17))
  }
  assert.deepEqual(await slotsFrom(trie, new Uint8Array(0), 0), [])
})
