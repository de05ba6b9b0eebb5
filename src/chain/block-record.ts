// The keys a block adds besides its state: canonical hash, number by hash, header, body, receipts, the
// transaction lookup, the log index and the head pointer. The producer writes them in the block's batch;
// a replica derives the same ones from the block it received, so that both databases hold the same keys.

import { bytesToHex } from '@ethereumjs/util'
import type { ReceiptRecord } from './receipts.js'
import type { Turns } from '../util/time-slicer.js'
import type { LevelOp } from './store/state-db.js'
import { encodeHead, encodeNumber, encodeTxLookup, Keys } from './store/schema.js'

export interface BlockRecord {
  number: bigint
  hash: Uint8Array
  headerRlp: Uint8Array
  bodyRlp: Uint8Array
  receiptsRlp: Uint8Array
  /** the transactions' hashes, in block order */
  txHashes: readonly Uint8Array[]
  receipts: readonly ReceiptRecord[]
  logsBloom: Uint8Array
}

/**
 * Appends the block's keys to a batch; the head pointer moves to this block. `turns`: the producer's
 * event loop gets a turn when due (a block of 2,000 token transfers: thousands of keys).
 */
export async function pushBlockRecord(ops: LevelOp[], block: BlockRecord, turns?: Turns): Promise<void> {
  const { number, hash } = block
  ops.push(
    { type: 'put', key: Keys.canonicalHash(number), value: hash },
    { type: 'put', key: Keys.blockNumber(hash), value: encodeNumber(number) },
    { type: 'put', key: Keys.header(number), value: block.headerRlp },
    { type: 'put', key: Keys.body(number), value: block.bodyRlp },
    { type: 'put', key: Keys.receipts(number), value: block.receiptsRlp },
  )
  for (let i = 0; i < block.txHashes.length; i++) {
    if (turns?.due) await turns.turn()
    ops.push({ type: 'put', key: Keys.txLookup(block.txHashes[i]), value: encodeTxLookup(number, i) })
  }
  await pushLogIndex(ops, number, block.receipts, block.logsBloom, turns)
  ops.push({ type: 'put', key: Keys.meta('head'), value: encodeHead(number, hash) })
}

/**
 * The log index entries of a block: one key per distinct log address and topic, and its bloom. Only a
 * block with logs has a bloom entry, so that a query naming no address or topic reads the blooms of
 * the blocks with logs and not one per block of its range.
 */
async function pushLogIndex(ops: LevelOp[], number: bigint, receipts: readonly ReceiptRecord[], bloom: Uint8Array, turns: Turns | undefined): Promise<void> {
  const seen = new Set<string>()
  const empty = new Uint8Array(0)
  for (const receipt of receipts) {
    if (turns?.due) await turns.turn()
    for (const [address, topics] of receipt.logs) {
      const a = `a${bytesToHex(address)}`
      if (!seen.has(a)) {
        seen.add(a)
        ops.push({ type: 'put', key: Keys.logAddress(address, number), value: empty })
      }
      for (const topic of topics) {
        const t = `t${bytesToHex(topic)}`
        if (seen.has(t)) continue
        seen.add(t)
        ops.push({ type: 'put', key: Keys.logTopic(topic, number), value: empty })
      }
    }
  }
  if (seen.size > 0) ops.push({ type: 'put', key: Keys.bloom(number), value: bloom })
}
