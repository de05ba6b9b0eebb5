// Polling filters (eth_newFilter, eth_newBlockFilter, eth_newPendingTransactionFilter): node-local
// state with geth's semantics, expiring after a period without polls (geth: 5 minutes).

import { randomBytes } from 'node:crypto'
import type { LogCriteria } from '../chain/logs.js'
import type { BlockRef } from './params.js'

export type Filter =
  | { type: 'logs'; criteria: LogCriteria; fromBlock?: BlockRef; toBlock?: BlockRef; cursor: bigint; lastPoll: number }
  | { type: 'blocks'; cursor: bigint; lastPoll: number }
  | { type: 'pendingTransactions'; hashes: string[]; lastPoll: number }

/** At most this many pending hashes wait in one filter; older ones are dropped first. */
const MAX_PENDING_HASHES = 10_000

/** geth's ids: 16 random bytes, as a hex QUANTITY (leading zeros trimmed). */
export function newId(): string {
  const hex = randomBytes(16).toString('hex').replace(/^0+/, '')
  return `0x${hex === '' ? '0' : hex}`
}

export class FilterRegistry {
  private readonly filters = new Map<string, Filter>()
  private readonly sweeper: NodeJS.Timeout

  constructor(private readonly timeoutMs: number) {
    this.sweeper = setInterval(() => this.expire(Date.now()), Math.min(timeoutMs, 30_000))
    this.sweeper.unref()
  }

  get size(): number {
    return this.filters.size
  }

  install(filter: Filter): string {
    const id = newId()
    this.filters.set(id, filter)
    return id
  }

  /** The filter, marked as polled now; undefined when unknown or expired. */
  poll(id: string): Filter | undefined {
    const filter = this.filters.get(id.toLowerCase())
    if (filter !== undefined) filter.lastPoll = Date.now()
    return filter
  }

  uninstall(id: string): boolean {
    return this.filters.delete(id.toLowerCase())
  }

  onPendingTransactions(hashes: string[]): void {
    for (const filter of this.filters.values()) {
      if (filter.type !== 'pendingTransactions') continue
      filter.hashes.push(...hashes)
      if (filter.hashes.length > MAX_PENDING_HASHES) filter.hashes.splice(0, filter.hashes.length - MAX_PENDING_HASHES)
    }
  }

  expire(now: number): void {
    for (const [id, filter] of this.filters) if (now - filter.lastPoll > this.timeoutMs) this.filters.delete(id)
  }

  close(): void {
    clearInterval(this.sweeper)
  }
}
