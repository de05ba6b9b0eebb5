// eth_subscribe state and fan-out. Everything runs on the main thread, block by block in chain order, so
// every subscriber sees every block and every matching log in order. Each payload is serialised once
// (one header JSON per block, one JSON per matched log, grouped by distinct filter) and a notification is
// the subscription's ready-made prefix + payload + '}}': the per-subscriber cost is two string joins and
// a socket write. Slow sockets are closed by WsSession.send, never waited for.

import type { LogCriteria, MatchedLog } from '../chain/logs.js'
import { LogMatcher } from '../chain/logs.js'
import type { ReceiptRecord } from '../chain/receipts.js'
import type { BlockRecord } from '../chain/view.js'
import { newId } from './filters.js'
import { headerJson, logJsonText } from './methods/chain-json.js'
import type { WsRequestContext, WsSession } from './server.js'
import { tooManySubscriptions } from './subscription-errors.js'

export type SubscriptionKind = 'newHeads' | 'logs' | 'newPendingTransactions' | 'syncing'

export type SubscriptionRequest =
  | { kind: 'newHeads' }
  | { kind: 'logs'; criteria: LogCriteria }
  | { kind: 'newPendingTransactions'; fullTransactions: boolean }
  | { kind: 'syncing' }

export interface SubscriptionManagerOptions {
  keccak(data: Uint8Array): Uint8Array
  /** Subscriptions one connection may hold. */
  maxPerConnection: number
  /** Bytes of notifications that may wait for a subscribe answer before the client counts as too slow. */
  pendingByteLimit: number
  /** JSON of a transaction just added to the pool, or null when it is gone (for fullTransactions). */
  pendingTransactionJson(hash: string): Promise<string | null>
  /** Reports an unexpected failure of the asynchronous part of the fan-out. */
  onError?(err: unknown): void
  /** Counts notifications handed to connections, by subscription kind (for metrics). */
  onNotified?(kind: 'newHeads' | 'logs' | 'newPendingTransactions', count: number): void
}

export interface SubscriptionStats {
  connections: number
  subscriptions: number
  newHeads: number
  logs: number
  /** Distinct log filters: matching runs once per block for each of them. */
  logFilters: number
  newPendingTransactions: number
  syncing: number
  /** Subscriptions whose subscribe answer has not been written yet. */
  awaitingAnswer: number
}

interface Subscription {
  readonly id: string
  readonly kind: SubscriptionKind
  readonly session: WsSession
  /** `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"0x…","result":` */
  readonly prefix: string
  /** Notifications produced before the subscribe answer was sent; null once active. */
  waiting: string[] | null
  waitingBytes: number
  closed: boolean
  group: LogGroup | null
  fullTransactions: boolean
}

/** Every logs subscription with the same criteria: matched once per block, then fanned out. */
interface LogGroup {
  readonly key: string
  readonly matcher: LogMatcher
  readonly members: Set<Subscription>
}

const NOTIFICATION_HEAD = '{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"'
const NOTIFICATION_TAIL = '}}'
const SYNCING_FALSE = 'false'


/**
 * Canonical form of log criteria, so that equivalent filters share one group: addresses and topic
 * alternatives sorted and deduplicated, an empty alternative list is a wildcard, trailing wildcards dropped.
 */
export function canonicalCriteria(criteria: LogCriteria): LogCriteria {
  const addresses = [...new Set(criteria.addresses.map((a) => a.toLowerCase()))].sort()
  const topics: Array<string[] | null> = criteria.topics.map((alts) =>
    alts === null || alts.length === 0 ? null : [...new Set(alts.map((t) => t.toLowerCase()))].sort(),
  )
  while (topics.length > 0 && topics[topics.length - 1] === null) topics.pop()
  return { addresses, topics }
}

export class SubscriptionManager {
  private readonly bySession = new Map<WsSession, Map<string, Subscription>>()
  private readonly heads = new Set<Subscription>()
  private readonly logGroups = new Map<string, LogGroup>()
  private readonly pendingHashes = new Set<Subscription>()
  private readonly pendingFull = new Set<Subscription>()
  private readonly syncing = new Set<Subscription>()
  private awaitingAnswer = 0
  private fullTxQueue: Promise<void> = Promise.resolve()
  private readonly matched: MatchedLog[] = []

  constructor(private readonly options: SubscriptionManagerOptions) {}

  /**
   * Installs a subscription for the connection of `ctx` and returns its id. Its notifications wait until
   * the answer carrying the id has been written to the socket.
   */
  subscribe(ctx: WsRequestContext, request: SubscriptionRequest): string {
    const session = ctx.session
    if (session.closed) throw new Error('subscribe on a closed connection')
    let own = this.bySession.get(session)
    if (own === undefined) {
      own = new Map()
      this.bySession.set(session, own)
    }
    if (own.size >= this.options.maxPerConnection) throw tooManySubscriptions(this.options.maxPerConnection)
    let id = newId()
    while (own.has(id)) id = newId()
    const sub: Subscription = {
      id,
      kind: request.kind,
      session,
      prefix: NOTIFICATION_HEAD + id + '","result":',
      waiting: [],
      waitingBytes: 0,
      closed: false,
      group: null,
      fullTransactions: false,
    }
    own.set(id, sub)
    this.awaitingAnswer++
    switch (request.kind) {
      case 'newHeads':
        this.heads.add(sub)
        break
      case 'logs':
        sub.group = this.joinGroup(sub, request.criteria)
        break
      case 'newPendingTransactions':
        sub.fullTransactions = request.fullTransactions
        ;(sub.fullTransactions ? this.pendingFull : this.pendingHashes).add(sub)
        break
      case 'syncing':
        this.syncing.add(sub)
        // A single node that produces its own blocks is never syncing.
        this.deliver(sub, SYNCING_FALSE)
        break
    }
    ctx.afterAnswer(() => this.activate(sub))
    return id
  }

  /** Removes a subscription of this connection; false when it holds no such id. */
  unsubscribe(session: WsSession, id: string): boolean {
    const own = this.bySession.get(session)
    const sub = own?.get(id.toLowerCase())
    if (own === undefined || sub === undefined) return false
    own.delete(sub.id)
    if (own.size === 0) this.bySession.delete(session)
    this.detach(sub)
    return true
  }

  /** Drops every subscription of a connection that closed. */
  closeSession(session: WsSession): void {
    const own = this.bySession.get(session)
    if (own === undefined) return
    this.bySession.delete(session)
    for (const sub of own.values()) this.detach(sub)
  }

  /** A new head: newHeads and logs notifications, in that order, for every subscriber. */
  publishBlock(block: BlockRecord): void {
    if (this.heads.size > 0) {
      const payload = headerJson(block)
      for (const sub of this.heads) this.deliver(sub, payload)
      this.options.onNotified?.('newHeads', this.heads.size)
    }
    if (this.logGroups.size === 0) return
    let logNotifications = 0
    const bloom = block.header.logsBloom
    const matched = this.matched
    let receipts: ReceiptRecord[] | undefined
    for (const group of this.logGroups.values()) {
      if (!group.matcher.bloomMayMatch(bloom)) continue
      matched.length = 0
      receipts ??= block.receipts()
      group.matcher.matchBlock(block, matched, receipts)
      for (let i = 0; i < matched.length; i++) {
        const payload = logJsonText(matched[i]!)
        for (const sub of group.members) this.deliver(sub, payload)
        logNotifications += group.members.size
      }
    }
    matched.length = 0
    if (logNotifications > 0) this.options.onNotified?.('logs', logNotifications)
  }

  /** Hashes just added to the pool, in pool order. */
  publishPendingTransactions(hashes: readonly string[]): void {
    if (this.pendingHashes.size > 0) {
      for (const hash of hashes) {
        const payload = '"' + hash + '"'
        for (const sub of this.pendingHashes) this.deliver(sub, payload)
      }
      this.options.onNotified?.('newPendingTransactions', hashes.length * this.pendingHashes.size)
    }
    if (this.pendingFull.size === 0) return
    // Lookups run in parallel; deliveries stay in arrival order through one queue.
    const lookups = hashes.map((hash) => this.options.pendingTransactionJson(hash))
    this.fullTxQueue = this.fullTxQueue
      .then(async () => {
        for (const lookup of lookups) {
          const payload = await lookup
          if (payload === null) continue
          for (const sub of this.pendingFull) this.deliver(sub, payload)
          this.options.onNotified?.('newPendingTransactions', this.pendingFull.size)
        }
      })
      .catch((err: unknown) => this.options.onError?.(err))
  }

  stats(): SubscriptionStats {
    let logs = 0
    for (const group of this.logGroups.values()) logs += group.members.size
    const newPendingTransactions = this.pendingHashes.size + this.pendingFull.size
    return {
      connections: this.bySession.size,
      subscriptions: this.heads.size + logs + newPendingTransactions + this.syncing.size,
      newHeads: this.heads.size,
      logs,
      logFilters: this.logGroups.size,
      newPendingTransactions,
      syncing: this.syncing.size,
      awaitingAnswer: this.awaitingAnswer,
    }
  }

  private joinGroup(sub: Subscription, criteria: LogCriteria): LogGroup {
    const canonical = canonicalCriteria(criteria)
    const key = JSON.stringify(canonical)
    let group = this.logGroups.get(key)
    if (group === undefined) {
      group = { key, matcher: new LogMatcher(canonical, this.options.keccak), members: new Set() }
      this.logGroups.set(key, group)
    }
    group.members.add(sub)
    return group
  }

  private detach(sub: Subscription): void {
    sub.closed = true
    if (sub.waiting !== null) {
      sub.waiting = null
      this.awaitingAnswer--
    }
    switch (sub.kind) {
      case 'newHeads':
        this.heads.delete(sub)
        break
      case 'logs': {
        const group = sub.group!
        group.members.delete(sub)
        if (group.members.size === 0) this.logGroups.delete(group.key)
        break
      }
      case 'newPendingTransactions':
        ;(sub.fullTransactions ? this.pendingFull : this.pendingHashes).delete(sub)
        break
      case 'syncing':
        this.syncing.delete(sub)
        break
    }
  }

  /** The subscribe answer is on the socket: flush what waited, then send as things happen. */
  private activate(sub: Subscription): void {
    const waiting = sub.waiting
    if (waiting === null || sub.closed) return
    sub.waiting = null
    sub.waitingBytes = 0
    this.awaitingAnswer--
    for (const message of waiting) if (!sub.session.send(message)) return
  }

  private deliver(sub: Subscription, payload: string): void {
    const message = sub.prefix + payload + NOTIFICATION_TAIL
    const waiting = sub.waiting
    if (waiting === null) {
      sub.session.send(message)
      return
    }
    waiting.push(message)
    sub.waitingBytes += message.length
    if (sub.waitingBytes > this.options.pendingByteLimit) sub.session.closeTooSlow()
  }
}
