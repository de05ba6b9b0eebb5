// Polling filters shared by the nodes behind one load balancer (--redis-url): ids valid on every node,
// each change handed out once across nodes (src/shared/redis-filters.ts holds the cursors). Redis down or
// slow: a poll of a filter kept there answers geth's "filter not found", which ethers and viem answer by
// making a new filter; a filter made meanwhile lives in this node's memory (valid through this node only,
// as without Redis) so that a client kept on one node goes on working. Nothing else waits on Redis.

import type { LogCriteria } from '../chain/logs.js'
import type { RedisFilterStore, StoredFilterKind } from '../shared/redis-filters.js'
import type { FilterChanges, FilterSpec, FilterStore, LocalFilters, LogFilterSpec } from './filters.js'
import { newId } from './filters.js'
import type { BlockRef } from './params.js'

/**
 * A filter call waits this long for Redis before answering "filter not found" (or installing the filter
 * locally). Longer than the rate limiter's --redis-timeout-ms: a poll is one call of a client that
 * already waits on its answer, not a toll on every call.
 */
export const FILTER_REDIS_TIMEOUT_MS = 1_000
/** Pending hashes per stream entry: one entry per turn of the event loop, split when larger. */
const PENDING_HASHES_PER_ENTRY = 1_000

export interface SharedFilterEvents {
  /** Redis became unavailable to filter calls (true, with the error) or answers again (false). */
  unavailable?(active: boolean, error?: unknown): void
  /** A filter call Redis did not answer. */
  failed?(): void
}

export interface SharedFiltersOptions {
  store: Pick<RedisFilterStore, 'install' | 'poll' | 'read' | 'remove' | 'publishPending' | 'close'>
  /** filters made while Redis is unavailable */
  local: LocalFilters
  /** --filter-timeout-seconds, in ms: Redis expires a filter not polled for this long */
  timeoutMs: number
  /** the producer's node: appends the hashes it admits to the shared pending stream */
  publishPending: boolean
}

export class SharedFilters implements FilterStore {
  private readonly store: SharedFiltersOptions['store']
  private readonly local: LocalFilters
  private readonly listeners: SharedFilterEvents[] = []
  private down = false
  private pending: string[] = []
  private flushScheduled = false

  constructor(private readonly opts: SharedFiltersOptions) {
    this.store = opts.store
    this.local = opts.local
  }

  on(events: SharedFilterEvents): void {
    this.listeners.push(events)
  }

  /** Whether the last filter call found Redis unavailable. */
  get unavailable(): boolean {
    return this.down
  }

  /** Filters held in this node's memory (made while Redis was unavailable). */
  get localCount(): number {
    return this.local.localCount
  }

  async install(spec: FilterSpec, head: bigint): Promise<string> {
    const id = newId()
    try {
      await this.store.install(id, spec.type, encodeSpec(spec), head, this.opts.timeoutMs)
      this.answered()
      return id
    } catch (err) {
      this.failed(err)
      return this.local.install(spec, head)
    }
  }

  async poll(id: string, head: bigint): Promise<FilterChanges | undefined> {
    if (this.local.has(id)) return this.local.poll(id, head)
    try {
      const stored = await this.store.poll(id.toLowerCase(), head, this.opts.timeoutMs)
      this.answered()
      if (stored === undefined) return undefined
      if (stored.kind === 'pendingTransactions') return { type: 'pendingTransactions', hashes: stored.hashes }
      if (stored.kind === 'blocks') return { type: 'blocks', after: stored.after, upTo: stored.upTo }
      return { type: 'logs', spec: decodeSpec('logs', stored.spec) as LogFilterSpec, after: stored.after, upTo: stored.upTo }
    } catch (err) {
      this.failed(err)
      return undefined
    }
  }

  async spec(id: string): Promise<FilterSpec | undefined> {
    if (this.local.has(id)) return this.local.spec(id)
    try {
      const stored = await this.store.read(id.toLowerCase(), this.opts.timeoutMs)
      this.answered()
      return stored === undefined ? undefined : decodeSpec(stored.kind, stored.spec)
    } catch (err) {
      this.failed(err)
      return undefined
    }
  }

  async uninstall(id: string): Promise<boolean> {
    if (this.local.has(id)) return this.local.uninstall(id)
    try {
      const removed = await this.store.remove(id.toLowerCase())
      this.answered()
      return removed
    } catch (err) {
      this.failed(err)
      return false
    }
  }

  onPendingTransactions(hashes: string[]): void {
    this.local.onPendingTransactions(hashes)
    if (!this.opts.publishPending) return
    // one stream entry per turn of the event loop: admissions come one transaction at a time
    for (const hash of hashes) this.pending.push(hash)
    if (this.flushScheduled) return
    this.flushScheduled = true
    setImmediate(() => this.flushPending())
  }

  async close(): Promise<void> {
    await this.local.close()
    await this.store.close()
  }

  private flushPending(): void {
    this.flushScheduled = false
    const hashes = this.pending
    this.pending = []
    for (let i = 0; i < hashes.length; i += PENDING_HASHES_PER_ENTRY) {
      // lost while Redis is down: the shared pending filters are "not found" then, and made afresh after
      this.store.publishPending(hashes.slice(i, i + PENDING_HASHES_PER_ENTRY)).then(
        () => this.answered(),
        (err: unknown) => this.failed(err),
      )
    }
  }

  private answered(): void {
    if (!this.down) return
    this.down = false
    for (const l of this.listeners) l.unavailable?.(false)
  }

  private failed(err: unknown): void {
    for (const l of this.listeners) l.failed?.()
    if (this.down) return
    this.down = true
    for (const l of this.listeners) l.unavailable?.(true, err)
  }
}

// The spec as Redis keeps it: JSON with block numbers as hex quantities.
interface StoredSpec {
  a: string[]
  t: Array<string[] | null>
  f?: string
  to?: string
}

function encodeSpec(spec: FilterSpec): string {
  if (spec.type !== 'logs') return ''
  const stored: StoredSpec = { a: spec.criteria.addresses, t: spec.criteria.topics }
  if (spec.fromBlock !== undefined) stored.f = encodeRef(spec.fromBlock)
  if (spec.toBlock !== undefined) stored.to = encodeRef(spec.toBlock)
  return JSON.stringify(stored)
}

function decodeSpec(kind: StoredFilterKind, text: string): FilterSpec {
  if (kind !== 'logs') return { type: kind }
  const stored = JSON.parse(text) as StoredSpec
  const criteria: LogCriteria = { addresses: stored.a, topics: stored.t }
  const spec: LogFilterSpec = { type: 'logs', criteria }
  if (stored.f !== undefined) spec.fromBlock = decodeRef(stored.f)
  if (stored.to !== undefined) spec.toBlock = decodeRef(stored.to)
  return spec
}

const encodeRef = (ref: BlockRef): string => (ref.kind === 'number' ? `0x${ref.number.toString(16)}` : ref.tag)
const decodeRef = (text: string): BlockRef =>
  text.startsWith('0x') ? { kind: 'number', number: BigInt(text) } : { kind: 'tag', tag: text as Extract<BlockRef, { kind: 'tag' }>['tag'] }
