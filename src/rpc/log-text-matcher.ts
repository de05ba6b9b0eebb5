// eth_getLogs criteria matched against the logs' encoded JSON (src/json/log.ts encodeBlockLogs): a
// block's logs are encoded once, and a query over thousands of them compares bytes in place, without
// decoding the block's receipts or making an object per log. Same rules as chain/logs.ts LogMatcher
// (the blocks to look at still come from its blooms or the address/topic index).

import type { LogCriteria } from '../chain/logs.js'
import { addressAt, topicAt, topicCountAt } from '../json/log.js'
import type { EncodedLogs } from '../json/log.js'
import type { LogsAnswerBuilder } from './logs-answer.js'

/** Up to this many alternatives are compared in place one by one; more are looked up in a set. */
const COMPARE_IN_PLACE = 4

/** One position's alternatives (as ASCII bytes, or a set of the texts), or null for any. */
type Alternatives = { list: Uint8Array[]; set: ReadonlySet<string> | null } | null

const alternatives = (list: readonly string[] | null): Alternatives =>
  // an empty list matches any, as geth
  list === null || list.length === 0
    ? null
    : { list: list.map((text) => Buffer.from(text, 'latin1')), set: list.length > COMPARE_IN_PLACE ? new Set(list) : null }

function equalAt(bytes: Uint8Array, at: number, expected: Uint8Array): boolean {
  // from the end: 0x and leading digits are what values share most
  for (let i = expected.length - 1; i >= 0; i--) if (bytes[at + i] !== expected[i]) return false
  return true
}

function matchesAt(alts: NonNullable<Alternatives>, bytes: Buffer, at: number, length: number): boolean {
  if (alts.set !== null) return alts.set.has(bytes.toString('latin1', at, at + length))
  for (let i = 0; i < alts.list.length; i++) if (equalAt(bytes, at, alts.list[i]!)) return true
  return false
}

export class LogTextMatcher {
  private readonly addresses: Alternatives
  private readonly topics: Alternatives[]

  constructor(criteria: LogCriteria) {
    this.addresses = alternatives(criteria.addresses)
    this.topics = criteria.topics.map(alternatives)
  }

  /** Whether the encoded log starting at `start` in `bytes` matches. */
  matches(bytes: Buffer, start: number): boolean {
    if (this.addresses !== null && !matchesAt(this.addresses, bytes, addressAt(start), 42)) return false
    const topics = this.topics
    if (topics.length === 0) return true
    // as geth: a filter naming more positions than the log has topics never matches it, wildcards or not
    if (topics.length > topicCountAt(bytes, start)) return false
    for (let position = 0; position < topics.length; position++) {
      const alts = topics[position]!
      if (alts !== null && !matchesAt(alts, bytes, topicAt(start, position), 66)) return false
    }
    return true
  }

  /** Adds the block's logs that match to `answer`. */
  collect(logs: EncodedLogs, answer: LogsAnswerBuilder): void {
    const { bytes, starts, ends } = logs
    for (let i = 0; i < starts.length; i++) if (this.matches(bytes, starts[i]!)) answer.add(bytes, starts[i]!, ends[i]!)
  }
}
