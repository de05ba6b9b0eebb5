// Answers of eth_getLogs by (resolved block range, criteria). Keel's chain has one sequencer and never
// reorganises, so the logs of a range that ends at or below the head are fixed for good: the same
// query, which dapps and indexers repeat, is served from the encoded answer. Bounded by total size.

import type { LogCriteria } from '../chain/logs.js'
import type { RawJson } from './context.js'

export class LogsAnswerCache {
  private readonly answers = new Map<string, RawJson>()
  private bytes = 0

  constructor(
    private readonly maxBytes = 32 << 20,
    private readonly maxEntries = 512,
  ) {}

  static key(criteria: LogCriteria, from: bigint, to: bigint): string {
    return `${from}:${to}:${criteria.addresses.join(',')}:${JSON.stringify(criteria.topics)}`
  }

  get(key: string): RawJson | undefined {
    const answer = this.answers.get(key)
    if (answer !== undefined) {
      this.answers.delete(key)
      this.answers.set(key, answer)
    }
    return answer
  }

  set(key: string, answer: RawJson): void {
    const size = answer.json.length
    if (size > this.maxBytes / 4) return
    const previous = this.answers.get(key)
    if (previous !== undefined) {
      this.answers.delete(key)
      this.bytes -= previous.json.length
    }
    this.answers.set(key, answer)
    this.bytes += size
    while (this.bytes > this.maxBytes || this.answers.size > this.maxEntries) {
      const [oldest, dropped] = this.answers.entries().next().value as [string, RawJson]
      this.answers.delete(oldest)
      this.bytes -= dropped.json.length
    }
  }
}
