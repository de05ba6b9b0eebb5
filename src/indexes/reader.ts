// Reads of the explorer's indexes (block-indexes.ts) for the RPC layer: an address's transactions a page
// at a time in either direction, a transaction by sender and nonce, a contract's creator. Each read is a
// short LevelDB range scan; nothing past the head the caller names is returned (the writer may have
// written a block the reader's view has not applied yet).

import type { ChainLevel } from '../chain/store/level.js'
import { decodeNumber, Keys } from '../chain/store/schema.js'

export interface Appearance {
  number: bigint
  index: number
}

export interface AppearancePage {
  /** newest first */
  items: Appearance[]
  /** whether more entries lie beyond the page in the direction it was read */
  hasMore: boolean
}

const LAST_INDEX = 0xffffffff
/** Keys read at a time while the rest of the page's last block is read. */
const DRAIN_CHUNK = 256
/** I + address(20): where the block number starts in an appearance key */
const NUMBER_AT = 21

const appearanceOf = (key: Uint8Array): Appearance => ({
  number: decodeNumber(key, NUMBER_AT),
  index: new DataView(key.buffer, key.byteOffset, key.byteLength).getUint32(NUMBER_AT + 8),
})

/**
 * Reads `pageSize` appearances and then the rest of the last block read (a block's transactions are
 * never split across pages, as Erigon's search does), then looks one entry further for hasMore.
 */
async function readPage(level: ChainLevel, range: { gte: Uint8Array; lte: Uint8Array; reverse: boolean }, pageSize: number): Promise<AppearancePage> {
  const items: Appearance[] = []
  let hasMore = false
  // nextv reads a run of keys in one native call; an async for over the iterator took ~10x as long
  const keys = level.keys(range)
  try {
    let want = pageSize + 1
    for (;;) {
      const chunk = await keys.nextv(want)
      for (const key of chunk) {
        const a = appearanceOf(key)
        if (items.length >= pageSize && a.number !== items[items.length - 1].number) {
          hasMore = true
          return { items, hasMore }
        }
        items.push(a)
      }
      if (chunk.length < want) return { items, hasMore }
      // the page is full but its last block may go on
      want = DRAIN_CHUNK
    }
  } finally {
    await keys.close()
  }
}

/** The address's transactions in blocks [floor, before), newest first. */
export async function appearancesBefore(level: ChainLevel, address: Uint8Array, before: bigint, floor: bigint, pageSize: number): Promise<AppearancePage> {
  if (before <= floor) return { items: [], hasMore: false }
  return readPage(level, { gte: Keys.appearance(address, floor, 0), lte: Keys.appearance(address, before - 1n, LAST_INDEX), reverse: true }, pageSize)
}

/** The address's transactions in blocks (after, ceiling], newest first (read oldest first, then turned). */
export async function appearancesAfter(level: ChainLevel, address: Uint8Array, after: bigint, ceiling: bigint, pageSize: number): Promise<AppearancePage> {
  if (after >= ceiling) return { items: [], hasMore: false }
  const page = await readPage(level, { gte: Keys.appearance(address, after + 1n, 0), lte: Keys.appearance(address, ceiling, LAST_INDEX), reverse: false }, pageSize)
  page.items.reverse()
  return page
}

/** The hash of the mined transaction of `sender` with `nonce`. */
export async function txBySenderAndNonce(level: ChainLevel, sender: Uint8Array, nonce: bigint): Promise<Uint8Array | undefined> {
  return level.get(Keys.senderNonce(sender, nonce))
}

/** The transaction that created the contract at `address` last, and its direct creator. */
export async function creatorOf(level: ChainLevel, address: Uint8Array): Promise<{ hash: Uint8Array; creator: Uint8Array } | undefined> {
  const value = await level.get(Keys.creator(address))
  return value === undefined ? undefined : { hash: value.subarray(0, 32), creator: value.subarray(32, 52) }
}
