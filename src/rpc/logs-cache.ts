// Answers of eth_getLogs by (resolved block range, criteria). Keel's chain has one sequencer and never
// reorganises, so the logs of a range that ends at or below the head are fixed for good: the same
// query, which dapps and indexers repeat, is served from the encoded answer. Bounded by total size.
//
// A query up to 'latest' resolves to a new range at every block. The answer for [from, to] is then the
// last one stored for [from, to'] (same criteria, to' < to) plus the logs of the blocks after to':
// usually one block, often without a match, so a poll over a long range costs what its new blocks cost.

import type { LogCriteria } from '../chain/logs.js'
import type { RawJson } from './context.js'

export interface CachedLogs {
  answer: RawJson
  /** logs in the answer (the max-results bound counts the extended answer as a whole) */
  count: number
  to: bigint
}

export class LogsAnswerCache {
  private readonly answers = new Map<string, CachedLogs>()
  /** stem (criteria and start) -> key of the answer with the highest end stored for it */
  private readonly latest = new Map<string, string>()
  private bytes = 0

  // 16 MiB: a node polled with sliding ranges (from = head - N) stores a new answer at every block and
  // keeps the cache full; 32 MiB of such answers was the largest single growth of a node's memory in the
  // soak (bench/README.md, "Soak"). A whole-chain answer of 3,200 logs (~2 MB) still fits four times.
  constructor(
    private readonly maxBytes = 16 << 20,
    private readonly maxEntries = 512,
  ) {}

  /** What a query is, without its end. */
  static stem(criteria: LogCriteria, from: bigint): string {
    return `${from}:${criteria.addresses.join(',')}:${JSON.stringify(criteria.topics)}`
  }

  static key(stem: string, to: bigint): string {
    return `${stem}:${to}`
  }

  get(key: string): CachedLogs | undefined {
    const entry = this.answers.get(key)
    if (entry !== undefined) {
      this.answers.delete(key)
      this.answers.set(key, entry)
    }
    return entry
  }

  /** The answer stored last for `stem` if it ends before `to`: the start of the answer up to `to`. */
  prefixOf(stem: string, to: bigint): CachedLogs | undefined {
    const key = this.latest.get(stem)
    if (key === undefined) return undefined
    const entry = this.answers.get(key)
    return entry !== undefined && entry.to < to ? entry : undefined
  }

  /** Stores an answer; one that extends `replaces` takes its place (a poll moves on, it rarely goes back). */
  set(stem: string, entry: CachedLogs, replaces?: CachedLogs): void {
    const size = entry.answer.jsonLength
    if (size > this.maxBytes / 4) return
    if (replaces !== undefined) this.drop(LogsAnswerCache.key(stem, replaces.to))
    const key = LogsAnswerCache.key(stem, entry.to)
    this.drop(key)
    this.answers.set(key, entry)
    this.bytes += size
    const latestKey = this.latest.get(stem)
    const latest = latestKey === undefined ? undefined : this.answers.get(latestKey)
    if (latest === undefined || latest.to <= entry.to) this.latest.set(stem, key)
    while (this.bytes > this.maxBytes || this.answers.size > this.maxEntries) {
      this.drop(this.answers.keys().next().value as string)
    }
  }

  private drop(key: string): void {
    const entry = this.answers.get(key)
    if (entry === undefined) return
    this.answers.delete(key)
    this.bytes -= entry.answer.jsonLength
    const stem = key.slice(0, key.lastIndexOf(':'))
    if (this.latest.get(stem) === key) this.latest.delete(stem)
  }
}
