// Polling filters (eth_newFilter, eth_newBlockFilter, eth_newPendingTransactionFilter) with geth's
// semantics, expiring after a period without polls (--filter-timeout-seconds; geth: 5 minutes). The
// methods see a FilterStore: this node's own (LocalFilters), or with --redis-url the one the nodes behind
// a load balancer share (src/rpc/shared-filters.ts).

import { randomBytes } from 'node:crypto'
import type { LogCriteria } from '../chain/logs.js'
import type { BlockRef } from './params.js'

export type LogFilterSpec = { type: 'logs'; criteria: LogCriteria; fromBlock?: BlockRef; toBlock?: BlockRef }
export type FilterSpec = LogFilterSpec | { type: 'blocks' } | { type: 'pendingTransactions' }

/** What one poll hands out: the changes since the filter's last poll. */
export type FilterChanges =
  /** the blocks after `after` up to `upTo` (none when equal) */
  | { type: 'logs'; spec: LogFilterSpec; after: bigint; upTo: bigint }
  | { type: 'blocks'; after: bigint; upTo: bigint }
  | { type: 'pendingTransactions'; hashes: string[] }

export interface FilterStore {
  /** Installs a filter whose changes start after block `head`; its id. */
  install(spec: FilterSpec, head: bigint): Promise<string>
  /** The changes up to block `head` since the last poll, the cursor moved past them; undefined: not found. */
  poll(id: string, head: bigint): Promise<FilterChanges | undefined>
  /** The filter's spec (eth_getFilterLogs), its expiry pushed back as by a poll; undefined: not found. */
  spec(id: string): Promise<FilterSpec | undefined>
  uninstall(id: string): Promise<boolean>
  /** Hashes of transactions this node learned were admitted to the pool. */
  onPendingTransactions(hashes: string[]): void
  close(): Promise<void>
}

/** At most this many pending hashes wait in one filter; older ones are dropped first. */
const MAX_PENDING_HASHES = 10_000

/** geth's ids: 16 random bytes, as a hex QUANTITY (leading zeros trimmed). */
export function newId(): string {
  const hex = randomBytes(16).toString('hex').replace(/^0+/, '')
  return `0x${hex === '' ? '0' : hex}`
}

interface LocalFilter {
  spec: FilterSpec
  cursor: bigint
  hashes: string[]
  lastPoll: number
}

/** Filters held in this node's memory. */
export class LocalFilters implements FilterStore {
  private readonly filters = new Map<string, LocalFilter>()
  private readonly sweeper: NodeJS.Timeout

  constructor(private readonly timeoutMs: number) {
    this.sweeper = setInterval(() => this.expire(Date.now()), Math.min(timeoutMs, 30_000))
    this.sweeper.unref()
  }

  /** Filters held in this node's memory (all of them, for this store). */
  get localCount(): number {
    return this.filters.size
  }

  has(id: string): boolean {
    return this.filters.has(id.toLowerCase())
  }

  async install(spec: FilterSpec, head: bigint): Promise<string> {
    const id = newId()
    this.filters.set(id, { spec, cursor: head, hashes: [], lastPoll: Date.now() })
    return id
  }

  async poll(id: string, head: bigint): Promise<FilterChanges | undefined> {
    const filter = this.touch(id)
    if (filter === undefined) return undefined
    const { spec } = filter
    if (spec.type === 'pendingTransactions') {
      const hashes = filter.hashes
      filter.hashes = []
      return { type: 'pendingTransactions', hashes }
    }
    const after = filter.cursor
    if (head > after) filter.cursor = head
    return spec.type === 'logs' ? { type: 'logs', spec, after, upTo: filter.cursor } : { type: 'blocks', after, upTo: filter.cursor }
  }

  async spec(id: string): Promise<FilterSpec | undefined> {
    return this.touch(id)?.spec
  }

  async uninstall(id: string): Promise<boolean> {
    return this.filters.delete(id.toLowerCase())
  }

  onPendingTransactions(hashes: string[]): void {
    for (const filter of this.filters.values()) {
      if (filter.spec.type !== 'pendingTransactions') continue
      filter.hashes.push(...hashes)
      if (filter.hashes.length > MAX_PENDING_HASHES) filter.hashes.splice(0, filter.hashes.length - MAX_PENDING_HASHES)
    }
  }

  expire(now: number): void {
    for (const [id, filter] of this.filters) if (now - filter.lastPoll > this.timeoutMs) this.filters.delete(id)
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper)
  }

  private touch(id: string): LocalFilter | undefined {
    const filter = this.filters.get(id.toLowerCase())
    if (filter !== undefined) filter.lastPoll = Date.now()
    return filter
  }
}
