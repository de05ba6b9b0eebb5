// How far down the explorer's indexes reach: `m indexes` holds the lowest block from which every block
// up to the head is indexed. A new chain is indexed from its genesis; a chain opened by a node that
// did not write the indexes yet is indexed from its next block, and the background builder
// (backfill.ts) moves the mark down to block 1 one block at a time.

import type { ChainLevel } from '../chain/store/level.js'
import type { LevelOp } from '../chain/store/state-db.js'
import { decodeNumber, encodeNumber, Keys } from '../chain/store/schema.js'

/** The lowest block from which the indexes are complete; undefined when the database has no mark. */
export async function indexedFrom(level: ChainLevel): Promise<bigint | undefined> {
  const bytes = await level.get(Keys.meta('indexes'))
  return bytes === undefined ? undefined : decodeNumber(bytes)
}

export const indexedFromOp = (number: bigint): LevelOp => ({ type: 'put', key: Keys.meta('indexes'), value: encodeNumber(number) })

/**
 * Sets the mark on a chain that has none, before its next block is written: 0 for a chain that only has
 * its genesis (which has no transactions), else the next block.
 */
export async function markIndexStart(level: ChainLevel, head: bigint): Promise<void> {
  if ((await indexedFrom(level)) !== undefined) return
  await level.batch([indexedFromOp(head === 0n ? 0n : head + 1n)])
}

/** Whether blocks below `from` still wait for their indexes (block 0 has no transactions). */
export const indexesComplete = (from: bigint): boolean => from <= 1n
