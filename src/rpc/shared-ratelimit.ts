// The per-client token buckets shared by every node behind one load balancer (--redis-url): a client's
// budget is one budget whichever node takes its calls.
//
// The bucket lives in Redis (src/shared/redis-buckets.ts); a node leases tokens from it in chunks (a tenth
// of the client's burst) and spends them locally, so most decisions never wait on Redis: a cheap-read
// flood costs one round trip per chunk. When Redis has nothing left, the client is blocked on this node
// until a chunk could have refilled, and asks again only then. Leases can only make the shared limit
// stricter: every admitted call was paid in Redis, and tokens leased to a node the client then leaves are
// lost (at most one chunk per node).
//
// Redis down or slower than its command timeout: the node falls back to a local bucket at rate / N and
// burst / N (--rate-limit-nodes N), so N nodes together still admit about the one rate. Neither fail open
// (a flood gets rate x nodes, or unlimited) nor fail closed (an outage of Redis refuses every client). It
// logs once per outage, probes Redis and goes back to it as soon as it answers.
//
// rate-limiter-flexible was not used: its Redis limiters are fixed windows with one point budget per
// limiter, which fits neither token buckets with a burst and a rate per client policy nor leasing.

import type { SharedBucketStore } from '../shared/redis-buckets.js'
import type { BatchAdmission, ClientRateLimiter, RateLimiterOptions, RateLimitSubject, RatePolicy } from './ratelimit.js'
import { DEFAULT_MAX_BUCKETS, RateLimiter, scalePolicy } from './ratelimit.js'

/** A node's lease on one client's shared bucket. */
interface Lease {
  tokens: number
  /** Redis said the bucket is empty: refuse locally until then (ms). */
  blockedUntil: number
  usedAt: number
  /** The round trip in flight for this client; other calls of the client wait on it. */
  pending: Promise<void> | undefined
  readonly policy: RatePolicy
}

export interface SharedRateLimiterEvents {
  /** Entered (true) or left (false) the local fallback; `error` is why it was entered. */
  fallback?(active: boolean, error?: unknown): void
  /** One round trip to Redis: its duration and whether it answered. */
  roundTrip?(seconds: number, ok: boolean): void
}

export interface SharedRateLimiterOptions extends RateLimiterOptions {
  store: SharedBucketStore
  /** --rate-limit-nodes: how many nodes share the limit; the fallback admits 1/nodes of it. */
  nodes: number
  /** Milliseconds between probes of Redis during a fallback. */
  probeIntervalMs?: number
}

/** The lease asked for: a tenth of the burst, so N nodes strand at most N tenths of it. */
const LEASE_FRACTION = 0.1
/** Leases unused this long are forgotten (their tokens are lost, which only ever errs strict). */
const LEASE_IDLE_MS = 60_000
const SWEEP_INTERVAL_MS = 10_000
/** Costs are floats (0.5 is a valid weight): a grant of exactly cost - lease may round just below. */
const EPSILON = 1e-9

const ALL_SERVED = (count: number): BatchAdmission => ({ served: count, retryAfter: 0 })

export class SharedRateLimiter implements ClientRateLimiter {
  /** Policies, keys and costs (and the decisions of no-limit clients) come from the local limiter. */
  private readonly local: RateLimiter
  private readonly fallbackLimiter: RateLimiter
  private readonly store: SharedBucketStore
  private readonly leases = new Map<string, Lease>()
  private readonly maxLeases: number
  private readonly now: () => number
  private readonly probeIntervalMs: number
  private readonly listeners: SharedRateLimiterEvents[] = []
  private fallbackActive = false
  private probe: NodeJS.Timeout | undefined
  private lastSweep: number
  private closed = false

  constructor(options: SharedRateLimiterOptions) {
    this.local = new RateLimiter(options)
    const share = 1 / Math.max(1, options.nodes)
    this.fallbackLimiter = new RateLimiter({
      ...options,
      policy: scalePolicy(options.policy, share),
      allowList: this.local.allowList.scaled(share),
    })
    this.store = options.store
    this.maxLeases = Math.max(1, options.maxBuckets ?? DEFAULT_MAX_BUCKETS)
    this.now = options.now ?? Date.now
    this.probeIntervalMs = options.probeIntervalMs ?? 250
    this.lastSweep = this.now()
  }

  get active(): boolean {
    return this.local.active
  }

  /** Whether the local fallback is deciding (Redis down or slow). */
  get inFallback(): boolean {
    return this.fallbackActive
  }

  get trackedClients(): number {
    return this.leases.size + this.fallbackLimiter.trackedClients
  }

  allowListed(clientIp: string): boolean {
    return this.local.allowListed(clientIp)
  }

  allowListedKey(apiKey: string | undefined): boolean {
    return this.local.allowListedKey(apiKey)
  }

  costOf(method: string): number {
    return this.local.costOf(method)
  }

  on(events: SharedRateLimiterEvents): void {
    this.listeners.push(events)
  }

  take(subject: RateLimitSubject, cost: number): number | Promise<number> {
    const admission = this.admit(subject, [cost])
    if (admission instanceof Promise) return admission.then((a) => a.retryAfter)
    return admission.retryAfter
  }

  takeEach(subject: RateLimitSubject, costs: readonly number[]): BatchAdmission | Promise<BatchAdmission> {
    return this.admit(subject, costs)
  }

  /** Connects to Redis before the first call (a node starting while Redis is down starts in the fallback). */
  async start(): Promise<void> {
    await this.store.connect(1000)
  }

  async close(): Promise<void> {
    this.closed = true
    if (this.probe !== undefined) clearInterval(this.probe)
    this.probe = undefined
    await this.store.close()
  }

  private admit(subject: RateLimitSubject, costs: readonly number[]): BatchAdmission | Promise<BatchAdmission> {
    if (this.fallbackActive) return this.fallback(subject, costs, 0)
    const { key, policy } = this.local.clientOf(subject)
    if (policy.rate <= 0) return ALL_SERVED(costs.length)
    const now = this.now()
    if (now - this.lastSweep >= SWEEP_INTERVAL_MS) this.sweep(now)
    let lease = this.leases.get(key)
    if (lease === undefined) {
      if (this.leases.size >= this.maxLeases) this.makeRoom()
      lease = { tokens: 0, blockedUntil: 0, usedAt: now, pending: undefined, policy }
    } else {
      // re-inserted: the Map stays in least-recently-used order for makeRoom
      this.leases.delete(key)
    }
    lease.usedAt = now
    this.leases.set(key, lease)
    const answer = this.spend(lease, costs, 0, now)
    return typeof answer === 'number' ? this.lease(subject, key, lease, costs, answer) : answer
  }

  /**
   * Serves calls from `from` on out of the lease. Returns the admission when every call is decided here,
   * or the index of the first call the lease cannot pay (Redis must be asked).
   */
  private spend(lease: Lease, costs: readonly number[], from: number, now: number): BatchAdmission | number {
    let i = from
    for (; i < costs.length; i++) {
      const cost = costs[i]!
      if (lease.tokens + EPSILON < cost) break
      lease.tokens -= cost
    }
    if (i === costs.length) return i === 1 ? SERVED_ONE : ALL_SERVED(i)
    if (now < lease.blockedUntil) return { served: i, retryAfter: Math.max(1, Math.ceil((lease.blockedUntil - now) / 1000)) }
    return i
  }

  private async lease(subject: RateLimitSubject, key: string, lease: Lease, costs: readonly number[], from: number): Promise<BatchAdmission> {
    let i = from
    for (;;) {
      if (lease.pending !== undefined) {
        await lease.pending
      } else {
        const pending = this.fetch(key, lease, costs, i)
        lease.pending = pending
        await pending
        lease.pending = undefined
      }
      if (this.fallbackActive) return this.fallback(subject, costs, i)
      const answer = this.spend(lease, costs, i, this.now())
      if (typeof answer !== 'number') return answer
      i = answer
    }
  }

  /**
   * The local fallback decides the calls from `from` on. A client Redis last said was empty stays refused
   * until then: the fallback's fresh bucket would otherwise hand a flooding client a new burst.
   */
  private fallback(subject: RateLimitSubject, costs: readonly number[], from: number): BatchAdmission {
    const now = this.now()
    const blockedUntil = this.leases.get(this.local.clientOf(subject).key)?.blockedUntil ?? 0
    if (now < blockedUntil) return { served: from, retryAfter: Math.max(1, Math.ceil((blockedUntil - now) / 1000)) }
    if (from === 0) return this.fallbackLimiter.takeEach(subject, costs)
    const rest = this.fallbackLimiter.takeEach(subject, costs.slice(from))
    return { served: from + rest.served, retryAfter: rest.retryAfter }
  }

  /** One round trip: enough for the call at `i` at least, a chunk or the rest of the batch (up to the burst) at best. */
  private async fetch(key: string, lease: Lease, costs: readonly number[], i: number): Promise<void> {
    const { rate, burst } = lease.policy
    const need = costs[i]! - lease.tokens
    let rest = -lease.tokens
    for (let j = i; j < costs.length; j++) rest += costs[j]!
    const want = Math.max(need, Math.min(burst, Math.max(burst * LEASE_FRACTION, rest)))
    const startedAt = performance.now()
    try {
      const grant = await this.store.take(key, rate, burst, need, want)
      this.emit('roundTrip', (performance.now() - startedAt) / 1000, true)
      lease.tokens += grant.granted
      if (grant.granted === 0) {
        // Empty: refused here without asking again until the call, or a lease's worth, is back.
        const chunk = Math.min(burst, Math.max(need, burst * LEASE_FRACTION))
        lease.blockedUntil = this.now() + (Math.max(0, chunk - grant.tokens) * 1000) / rate
      }
    } catch (err) {
      this.emit('roundTrip', (performance.now() - startedAt) / 1000, false)
      this.enterFallback(err)
    }
  }

  private enterFallback(err: unknown): void {
    if (this.fallbackActive) return
    this.fallbackActive = true
    if (this.closed) return
    this.emit('fallback', true, err)
    this.probe = setInterval(() => void this.tryRedis(), this.probeIntervalMs)
    this.probe.unref()
  }

  private probing = false

  private async tryRedis(): Promise<void> {
    if (this.probing || !this.fallbackActive) return
    this.probing = true
    try {
      await this.store.ping()
    } catch {
      return
    } finally {
      this.probing = false
    }
    if (this.probe !== undefined) clearInterval(this.probe)
    this.probe = undefined
    this.fallbackActive = false
    this.emit('fallback', false)
  }

  private emit<E extends keyof SharedRateLimiterEvents>(event: E, ...args: Parameters<NonNullable<SharedRateLimiterEvents[E]>>): void {
    for (const listener of this.listeners) (listener[event] as ((...a: unknown[]) => void) | undefined)?.(...args)
  }

  private sweep(now: number): void {
    this.lastSweep = now
    for (const [key, lease] of this.leases) {
      if (lease.pending === undefined && now - lease.usedAt >= LEASE_IDLE_MS && now >= lease.blockedUntil) this.leases.delete(key)
    }
  }

  private makeRoom(): void {
    let excess = this.leases.size - this.maxLeases + 1
    for (const [key, lease] of this.leases) {
      if (excess <= 0) break
      if (lease.pending !== undefined) continue
      this.leases.delete(key)
      excess--
    }
  }
}

const SERVED_ONE: BatchAdmission = Object.freeze({ served: 1, retryAfter: 0 })
