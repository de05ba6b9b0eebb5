// Log queries: a block is read only when the address/topic index or its bloom says it can hold a match.
// eth_getLogs then matches the block's pre-encoded log texts (src/rpc/log-text-matcher.ts); a logs
// subscription scans a new block's receipts with LogMatcher.

import { bytesToHex } from '@ethereumjs/util'
import type { ReceiptRecord, StoredLog } from './receipts.js'
import type { BlockRecord, ChainView } from './view.js'
import { trustedHexToBytes } from '../util/hex.js'

export interface LogCriteria {
  /** lowercase 0x addresses; empty = any */
  addresses: string[]
  /** per position: null = any, else the alternatives (lowercase 0x hashes) */
  topics: Array<string[] | null>
}

export interface MatchedLog {
  block: BlockRecord
  txIndex: number
  logIndex: number
  log: StoredLog
}

/** The three bloom bits of one item, as [byteIndex, mask] pairs. */
type BloomBits = Array<[number, number]>

function bloomBits(item: Uint8Array, keccak: (b: Uint8Array) => Uint8Array): BloomBits {
  const h = keccak(item)
  const bits: BloomBits = []
  for (let i = 0; i < 6; i += 2) {
    const bit = ((h[i] << 8) | h[i + 1]) & 2047
    bits.push([255 - (bit >> 3), 1 << (bit & 7)])
  }
  return bits
}

function inBloom(bloom: Uint8Array, bits: BloomBits): boolean {
  for (const [index, mask] of bits) if ((bloom[index] & mask) === 0) return false
  return true
}

function isEmptyBloom(bloom: Uint8Array): boolean {
  for (let i = 0; i < bloom.length; i++) if (bloom[i] !== 0) return false
  return true
}

export class LogMatcher {
  private readonly addressBits: BloomBits[]
  private readonly topicBits: Array<BloomBits[] | null>
  private readonly addressSet: Set<string> | null
  private readonly topicSets: Array<Set<string> | null>

  constructor(
    readonly criteria: LogCriteria,
    keccak: (b: Uint8Array) => Uint8Array,
  ) {
    this.addressBits = criteria.addresses.map((a) => bloomBits(trustedHexToBytes(a), keccak))
    this.topicBits = criteria.topics.map((alts) => (alts === null ? null : alts.map((t) => bloomBits(trustedHexToBytes(t), keccak))))
    this.addressSet = criteria.addresses.length === 0 ? null : new Set(criteria.addresses)
    this.topicSets = criteria.topics.map((alts) => (alts === null ? null : new Set(alts)))
  }

  bloomMayMatch(bloom: Uint8Array): boolean {
    if (this.addressBits.length > 0 && !this.addressBits.some((bits) => inBloom(bloom, bits))) return false
    for (const alts of this.topicBits) {
      if (alts === null || alts.length === 0) continue
      if (!alts.some((bits) => inBloom(bloom, bits))) return false
    }
    return true
  }

  logMatches(log: StoredLog): boolean {
    if (this.addressSet !== null && !this.addressSet.has(bytesToHex(log[0]))) return false
    const topics = log[1]
    // as geth: a filter naming more positions than the log has topics never matches it, wildcards or not
    if (this.topicSets.length > topics.length) return false
    for (let i = 0; i < this.topicSets.length; i++) {
      const set = this.topicSets[i]
      if (set === null || set.size === 0) continue
      if (!set.has(bytesToHex(topics[i]))) return false
    }
    return true
  }

  /** Every matching log of one block, in log order (`receipts`: the block's, when already decoded). */
  matchBlock(block: BlockRecord, out: MatchedLog[], receipts: readonly ReceiptRecord[] = block.receipts()): void {
    let logIndex = 0
    for (let txIndex = 0; txIndex < receipts.length; txIndex++) {
      for (const log of receipts[txIndex].logs) {
        if (this.logMatches(log)) out.push({ block, txIndex, logIndex, log })
        logIndex++
      }
    }
  }
}

/**
 * Blocks that may hold a match, from the inverted index (addresses and topics), in ascending order;
 * undefined when the criteria constrain nothing (then every block with a non-empty bloom is a candidate).
 */
async function indexedCandidates(view: ChainView, criteria: LogCriteria, from: bigint, to: bigint): Promise<bigint[] | undefined> {
  let result: Set<bigint> | undefined
  const intersect = (set: Set<bigint>) => {
    if (result === undefined) result = set
    else for (const n of result) if (!set.has(n)) result.delete(n)
  }
  if (criteria.addresses.length > 0) {
    const union = new Set<bigint>()
    for (const a of criteria.addresses) for (const n of await view.indexedBlocks('address', trustedHexToBytes(a), from, to)) union.add(n)
    intersect(union)
  }
  for (const alternatives of criteria.topics) {
    if (alternatives === null || alternatives.length === 0) continue
    if (result !== undefined && result.size === 0) break
    const union = new Set<bigint>()
    for (const t of alternatives) for (const n of await view.indexedBlocks('topic', trustedHexToBytes(t), from, to)) union.add(n)
    intersect(union)
  }
  if (result === undefined) return undefined
  return [...(result as Set<bigint>)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
}

/**
 * The blocks in [from, to] that may hold a log matching the criteria, in ascending order: from the
 * inverted address/topic index when the criteria name any, else every block whose bloom may match.
 */
export async function candidateBlocks(view: ChainView, matcher: LogMatcher, from: bigint, to: bigint): Promise<bigint[]> {
  const indexed = await indexedCandidates(view, matcher.criteria, from, to)
  if (indexed !== undefined) return indexed
  const candidates: bigint[] = []
  for (const { number, bloom } of await view.blooms(from, to)) {
    if (!isEmptyBloom(bloom) && matcher.bloomMayMatch(bloom)) candidates.push(number)
  }
  return candidates
}
