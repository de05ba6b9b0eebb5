// The explorer's index entries of a block (src/indexes/block-indexes.ts), written through the producer's
// writeBatch into a real LevelDB and read back as the ots_ methods read them: the entries pushIndexOps lays
// out in one buffer are the keys schema.ts defines, the sender is indexed even when its frames leave it
// out, and a write that fails part-way leaves nothing behind.

import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { openChainLevel } from '../../dist/chain/store/level.js'
import { Keys } from '../../dist/chain/store/schema.js'
import { writeBatch } from '../../dist/chain/store/write-batch.js'
import { pushIndexOps } from '../../dist/indexes/block-indexes.js'
import { appearancesBefore, creatorOf, txBySenderAndNonce } from '../../dist/indexes/reader.js'

const dir = mkdtempSync(join(tmpdir(), 'keel-index-entries-'))
let level

before(async () => {
  level = await openChainLevel(join(dir, 'db'))
})

after(async () => {
  await level?.close()
  rmSync(dir, { recursive: true, force: true })
})

const address = (n) => Uint8Array.from({ length: 20 }, (_, i) => (i === 19 ? n : i === 0 ? 0xaa : 0))
const hash = (n) => Uint8Array.from({ length: 32 }, (_, i) => (i === 31 ? n : 0x11))
const hex = (bytes) => Buffer.from(bytes).toString('hex')

test('a block\'s entries are the schema\'s keys, read back by the readers', async () => {
  const [alice, bob, token, factory, child] = [1, 2, 3, 4, 5].map(address)
  const txs = [
    // a plain transfer: its frames as the recorder gives them
    { hash: hash(1), sender: alice, nonce: 7n, to: bob, ok: true },
    // frames that list the sender after the others (a replica's, say): the sender is not indexed twice
    { hash: hash(2), sender: bob, nonce: 0x1_0000_0001n, to: token, ok: true },
    // frames without the sender: it is indexed anyway
    { hash: hash(3), sender: alice, nonce: 8n, to: factory, ok: true },
  ]
  const frames = [
    { addresses: [alice, bob], creations: [] },
    { addresses: [token, Uint8Array.from(bob)], creations: [] },
    { addresses: [factory, child], creations: [[child, factory]] },
  ]
  const number = 0x0102_0304_0506n
  const ops = []
  pushIndexOps(ops, number, txs, frames)
  const expected = [
    [Keys.senderNonce(alice, 7n), hash(1)], [Keys.appearance(alice, number, 0), new Uint8Array(0)], [Keys.appearance(bob, number, 0), new Uint8Array(0)],
    [Keys.senderNonce(bob, 0x1_0000_0001n), hash(2)], [Keys.appearance(token, number, 1), new Uint8Array(0)], [Keys.appearance(bob, number, 1), new Uint8Array(0)],
    [Keys.senderNonce(alice, 8n), hash(3)], [Keys.appearance(factory, number, 2), new Uint8Array(0)], [Keys.appearance(child, number, 2), new Uint8Array(0)],
    [Keys.appearance(alice, number, 2), new Uint8Array(0)], [Keys.creator(child), Uint8Array.from([...hash(3), ...factory])],
  ]
  assert.deepEqual(ops.map((op) => [op.type, hex(op.key), hex(op.value)]), expected.map(([k, v]) => ['put', hex(k), hex(v)]))

  await writeBatch(level, ops)
  const page = await appearancesBefore(level, alice, number + 1n, 0n, 25)
  assert.deepEqual(page.items, [{ number, index: 2 }, { number, index: 0 }])
  assert.equal(page.hasMore, false)
  assert.deepEqual((await appearancesBefore(level, bob, number + 1n, 0n, 25)).items, [{ number, index: 1 }, { number, index: 0 }])
  assert.equal(hex(await txBySenderAndNonce(level, bob, 0x1_0000_0001n)), hex(hash(2)))
  assert.equal(await txBySenderAndNonce(level, bob, 1n), undefined)
  const created = await creatorOf(level, child)
  assert.equal(hex(created.hash), hex(hash(3)))
  assert.equal(hex(created.creator), hex(factory))
})

test('writeBatch writes puts and deletions together, and nothing when an operation is refused', async () => {
  const a = Keys.meta('head')
  const b = Keys.creator(address(9))
  await writeBatch(level, [{ type: 'put', key: a, value: hash(1) }, { type: 'put', key: b, value: hash(2) }])
  await writeBatch(level, [{ type: 'del', key: a }, { type: 'put', key: b, value: hash(3) }])
  assert.equal(await level.get(a), undefined)
  assert.equal(hex(await level.get(b)), hex(hash(3)))
  await assert.rejects(writeBatch(level, [{ type: 'put', key: b, value: hash(4) }, { type: 'put', key: null, value: hash(5) }]))
  assert.equal(hex(await level.get(b)), hex(hash(3)), 'the refused batch wrote its first operation')
  // the refused batch's LevelDB batch was closed: the database still writes
  await writeBatch(level, [{ type: 'put', key: b, value: hash(6) }])
  assert.equal(hex(await level.get(b)), hex(hash(6)))
})
