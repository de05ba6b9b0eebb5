// A block's batch over a real LevelDB: with turns of the event loop while its operations are added (the
// producer's commit), it is still one atomic write: a read in a turn sees none of it, and every operation
// lands, deletes included.

import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { openChainLevel } from '../../dist/chain/store/level.js'
import { tempLevel } from '../helpers/temp-level.js'
import { writeBatch } from '../../dist/chain/store/write-batch.js'
import { TimeSlicer } from '../../dist/util/time-slicer.js'

const key = (n) => Uint8Array.of(0x71, n >> 8, n & 0xff)

test('a batch added with turns is written whole: reads in the turns see none of it', async (t) => {
  const level = await tempLevel(t, 'write-batch')
  await level.put(key(5000), Uint8Array.of(9))
  const ops = []
  for (let n = 0; n < 4096; n++) ops.push({ type: 'put', key: key(n), value: Uint8Array.of(n & 0xff, 1) })
  ops.push({ type: 'del', key: key(5000) })
  // a slice of 0 ms: a turn at every check (every 512 operations)
  const turns = new TimeSlicer(0)
  const seenInTurns = []
  let reading = true
  const reader = async () => {
    while (reading) {
      // one read of the three (getMany reads one snapshot)
      seenInTurns.push(await level.getMany([key(0), key(4095), key(5000)]))
      await new Promise((resolve) => setImmediate(resolve))
    }
  }
  const readerDone = reader()
  await writeBatch(level, ops, turns)
  reading = false
  await readerDone
  assert.ok(seenInTurns.length >= 2, `the reader ran during the batch (${seenInTurns.length} reads)`)
  const partial = seenInTurns.filter(([first, last, deleted]) => (first === undefined) !== (last === undefined) || (first !== undefined) === (deleted !== undefined))
  assert.deepEqual(partial, [], 'no read saw part of the batch')
  for (const n of [0, 511, 512, 4095]) assert.deepEqual([...(await level.get(key(n)))], [n & 0xff, 1])
  assert.equal(await level.get(key(5000)), undefined)
})

test('a batch whose database closes during a turn fails and writes nothing', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-write-batch-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const level = await openChainLevel(dir)
  const ops = []
  for (let n = 0; n < 2048; n++) ops.push({ type: 'put', key: key(n), value: Uint8Array.of(1) })
  const turns = new TimeSlicer(0)
  const closing = new Promise((resolve) => setImmediate(() => resolve(level.close())))
  await assert.rejects(writeBatch(level, ops, turns))
  await closing
  const again = await openChainLevel(dir)
  try {
    assert.equal(await again.get(key(0)), undefined)
    assert.equal(await again.get(key(2047)), undefined)
  } finally {
    await again.close()
  }
})
