// Token buckets per client: each call spends its method's cost, a batch's calls one by one. A client is
// an allow-listed API key, else its IP address (an IPv6 client by its /64, since one host usually owns a
// whole /64 and could rotate through it). Allow-listed IPs/CIDRs and keys get their own rate and burst.
//
// Memory is bounded: a bucket that has refilled to full carries nothing worth keeping (a new bucket starts
// full), so full buckets are swept, and the table never holds more than `maxBuckets` entries: past that the
// least recently used bucket is dropped (an attacker rotating source addresses only ever costs the oldest
// idle entries their debt).

import type { IpAddress } from './cidr.js'
import { Cidr, formatIp, parseIp } from './cidr.js'

/** Units per second and bucket size. rate 0 = unlimited. */
export interface RatePolicy {
  readonly rate: number
  readonly burst: number
}

/** Who is asking: the resolved client address and the API key presented, if any. */
export interface RateLimitSubject {
  readonly clientIp: string
  readonly apiKey?: string | undefined
}

/**
 * Default cost per method, in units of a cheap read (1). The ratio follows what each call costs this node:
 * eth_call/estimateGas/createAccessList (and eth_fillTransaction's estimate) run the EVM in the call pool
 * (bounded by the 50M gas cap and the 5 s timeout); eth_getLogs scans up to 10,000 blocks of blooms;
 * sendRawTransaction recovers a signature and enters the producer's queue; the explorer's ots_ pages read 25
 * transactions with their receipts, and its traces run a transaction again. Methods not listed cost 1.
 */
export const DEFAULT_METHOD_COSTS: Readonly<Record<string, number>> = Object.freeze({
  eth_call: 5,
  eth_estimateGas: 5,
  eth_createAccessList: 5,
  eth_fillTransaction: 5,
  eth_simulateV1: 10,
  eth_getLogs: 10,
  eth_getFilterLogs: 10,
  eth_newFilter: 2,
  eth_getBlockReceipts: 2,
  eth_getProof: 3,
  eth_feeHistory: 2,
  eth_sendRawTransaction: 2,
  eth_sendRawTransactionSync: 2,
  debug_traceTransaction: 20,
  debug_traceCall: 20,
  debug_traceBlockByNumber: 50,
  debug_traceBlockByHash: 50,
  debug_traceBlock: 50,
  debug_storageRangeAt: 20,
  txpool_content: 5,
  txpool_inspect: 5,
  // the explorer: a page of 25 transactions with their receipts; a transaction run again (once for all
  // three views of it, which Otterscan asks for together)
  ots_getBlockDetails: 2,
  ots_getBlockDetailsByHash: 2,
  ots_getBlockTransactions: 5,
  ots_searchTransactionsBefore: 5,
  ots_searchTransactionsAfter: 5,
  ots_traceTransaction: 10,
  ots_getInternalOperations: 10,
  ots_getTransactionError: 10,
  trace_replayTransaction: 20,
})

/** What a request that is not a valid call (parse error, invalid request) costs: garbage is not free. */
export const INVALID_CALL_COST = 1

/** Default table size: about 100 bytes a bucket, so a few MB at most. */
export const DEFAULT_MAX_BUCKETS = 65_536

const SWEEP_INTERVAL_MS = 10_000

/** How much of a batch is admitted: its first `served` calls; the rest wait `retryAfter` seconds. */
export interface BatchAdmission {
  readonly served: number
  readonly retryAfter: number
}

/**
 * What the envelope and the call pool need of a limiter: the local RateLimiter, or the one shared between
 * nodes through Redis (src/rpc/shared-ratelimit.ts), whose answer may wait on a round trip.
 */
export interface ClientRateLimiter {
  readonly active: boolean
  readonly trackedClients: number
  allowListed(clientIp: string): boolean
  allowListedKey(apiKey: string | undefined): boolean
  costOf(method: string): number
  /** 0 = admitted, else whole seconds (>= 1) to wait. */
  take(subject: RateLimitSubject, cost: number): number | Promise<number>
  /** Charges a batch call by call, in order. */
  takeEach(subject: RateLimitSubject, costs: readonly number[]): BatchAdmission | Promise<BatchAdmission>
  start?(): Promise<void>
  close?(): Promise<void>
}

export interface RateLimiterOptions {
  /** Default policy of a client IP. rate 0 = no limit for clients outside the allow-list. */
  policy: RatePolicy
  allowList?: AllowList
  /** Per-method costs merged over DEFAULT_METHOD_COSTS. */
  methodCosts?: Readonly<Record<string, number>>
  maxBuckets?: number
  /** Milliseconds clock; tests inject a fake one. */
  now?: () => number
}

interface Bucket {
  tokens: number
  updatedAt: number
  readonly policy: RatePolicy
}

export class RateLimiter implements ClientRateLimiter {
  readonly policy: RatePolicy
  readonly allowList: AllowList
  private readonly costs: Map<string, number>
  private readonly buckets = new Map<string, Bucket>()
  private readonly maxBuckets: number
  private readonly now: () => number
  private lastSweep = 0

  constructor(options: RateLimiterOptions) {
    this.policy = options.policy
    this.allowList = options.allowList ?? AllowList.EMPTY
    this.costs = new Map(Object.entries({ ...DEFAULT_METHOD_COSTS, ...options.methodCosts }))
    this.maxBuckets = Math.max(1, options.maxBuckets ?? DEFAULT_MAX_BUCKETS)
    this.now = options.now ?? Date.now
    this.lastSweep = this.now()
  }

  /** False when nobody can ever be limited (rate 0 and no limited allow-list entry): skip the work. */
  get active(): boolean {
    return this.policy.rate > 0 || this.allowList.anyLimited
  }

  /** Whether the address falls in an allow-listed range (it has its own policy: the operator's choice). */
  allowListed(clientIp: string): boolean {
    return this.rangePolicyOf(clientIp) !== undefined
  }

  /** Whether the API key is allow-listed (`key:NAME`): whoever presents it is the operator's client. */
  allowListedKey(apiKey: string | undefined): boolean {
    return apiKey !== undefined && this.allowList.hasKey(apiKey)
  }

  costOf(method: string): number {
    return this.costs.get(method) ?? 1
  }

  get trackedClients(): number {
    return this.buckets.size
  }

  /**
   * Spends `cost` from the subject's bucket. Returns 0 when admitted, else the whole seconds (>= 1) until
   * the call would be admitted. A cost above the burst is admitted from a full bucket and leaves a debt,
   * so one call dearer than the burst is possible but pays for itself before the next.
   */
  take(subject: RateLimitSubject, cost: number): number {
    return this.takeOne(subject, cost)
  }

  /** A batch: each call charged in order, as if sent one by one; the first refused call ends it. */
  takeEach(subject: RateLimitSubject, costs: readonly number[]): BatchAdmission {
    for (let i = 0; i < costs.length; i++) {
      const retryAfter = this.takeOne(subject, costs[i]!)
      if (retryAfter > 0) return { served: i, retryAfter }
    }
    return { served: costs.length, retryAfter: 0 }
  }

  /** The subject's bucket key (API key, IPv4 address or IPv6 /64) and its policy. */
  clientOf(subject: RateLimitSubject): { key: string; policy: RatePolicy } {
    const key = this.keyOf(subject)
    return { key, policy: this.policyOf(subject, key) }
  }

  // take() may be wrapped (metrics count its decisions); takeEach() charges through this unwrapped one.
  private takeOne(subject: RateLimitSubject, cost: number): number {
    const now = this.now()
    if (now - this.lastSweep >= SWEEP_INTERVAL_MS) this.sweep(now)
    const key = this.keyOf(subject)
    let bucket = this.buckets.get(key)
    if (bucket === undefined) {
      const policy = this.policyOf(subject, key)
      if (policy.rate <= 0) return 0
      bucket = { tokens: policy.burst, updatedAt: now, policy }
      if (this.buckets.size >= this.maxBuckets) this.makeRoom(now)
    } else {
      // Re-inserting keeps the Map in least-recently-used order, which makeRoom relies on.
      this.buckets.delete(key)
      const { rate, burst } = bucket.policy
      bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.updatedAt) * rate) / 1000)
      bucket.updatedAt = now
    }
    this.buckets.set(key, bucket)
    const { rate, burst } = bucket.policy
    const needed = Math.min(cost, burst)
    if (bucket.tokens >= needed) {
      bucket.tokens -= cost
      return 0
    }
    return Math.max(1, Math.ceil((needed - bucket.tokens) / rate))
  }

  /** Drops buckets that have refilled to full: they hold nothing a fresh bucket would not. */
  sweep(now = this.now()): void {
    this.lastSweep = now
    for (const [key, bucket] of this.buckets) {
      const { rate, burst } = bucket.policy
      if (bucket.tokens + ((now - bucket.updatedAt) * rate) / 1000 >= burst) this.buckets.delete(key)
    }
  }

  private makeRoom(now: number): void {
    if (now - this.lastSweep >= 1000) this.sweep(now)
    // Still full: drop the least recently used (the first in insertion order).
    let excess = this.buckets.size - this.maxBuckets + 1
    for (const key of this.buckets.keys()) {
      if (excess-- <= 0) break
      this.buckets.delete(key)
    }
  }

  private keyOf(subject: RateLimitSubject): string {
    const apiKey = subject.apiKey
    if (apiKey !== undefined && this.allowList.hasKey(apiKey)) return `key:${apiKey}`
    const ip = subject.clientIp
    // IPv4 text is its own key; only IPv6 needs parsing (to its /64, or to IPv4 when mapped).
    if (!ip.includes(':')) return ip
    const parsed = parseIp(ip)
    if (parsed === undefined) return ip
    if (!parsed.v6) return formatIp(parsed)
    return `${formatIp({ v6: true, bits: (parsed.bits >> 64n) << 64n })}/64`
  }

  private policyOf(subject: RateLimitSubject, key: string): RatePolicy {
    if (key.startsWith('key:')) return this.allowList.policyForKey(subject.apiKey!) ?? this.policy
    return this.rangePolicyOf(subject.clientIp) ?? this.policy
  }

  /** The policy of the allow-listed range the address falls in, if any. */
  private rangePolicyOf(clientIp: string): RatePolicy | undefined {
    if (!this.allowList.hasRanges) return undefined
    const ip = parseIp(clientIp)
    return ip === undefined ? undefined : this.allowList.policyForIp(ip)
  }
}

/**
 * `--rate-limit-allow-list`: comma-separated `TARGET=RATE[/BURST]` entries. TARGET is an IP, a CIDR
 * (IPv4 or IPv6) or `key:NAME` (an API key, sent as the URL path /key/NAME or the X-Api-Key header).
 * RATE 0 = unlimited; BURST defaults to 2 x RATE. The first matching range wins.
 * Example: "10.0.0.0/8=1000,fd00::/8=0,key:partner-a=5000/20000".
 */
export class AllowList {
  static readonly EMPTY = new AllowList([], new Map())

  readonly anyLimited: boolean

  private constructor(
    private readonly ranges: ReadonlyArray<{ cidr: Cidr; policy: RatePolicy }>,
    private readonly keys: ReadonlyMap<string, RatePolicy>,
  ) {
    this.anyLimited = [...ranges.map((r) => r.policy), ...keys.values()].some((p) => p.rate > 0)
  }

  static parse(text: string | undefined): AllowList {
    if (text === undefined || text.trim() === '') return AllowList.EMPTY
    const ranges: Array<{ cidr: Cidr; policy: RatePolicy }> = []
    const keys = new Map<string, RatePolicy>()
    for (const raw of text.split(',')) {
      const entry = raw.trim()
      if (entry === '') continue
      const eq = entry.lastIndexOf('=')
      if (eq <= 0) throw new Error(`rate limit allow-list entry "${entry}" must be TARGET=RATE[/BURST]`)
      const target = entry.slice(0, eq).trim()
      const policy = parsePolicy(entry.slice(eq + 1).trim(), entry)
      if (target.startsWith('key:')) {
        const name = target.slice(4)
        if (!/^[A-Za-z0-9._~-]{1,128}$/.test(name)) {
          throw new Error(`rate limit allow-list entry "${entry}": an API key is 1-128 characters of A-Z a-z 0-9 . _ ~ -`)
        }
        keys.set(name, policy)
      } else {
        try {
          ranges.push({ cidr: Cidr.parse(target), policy })
        } catch (err) {
          throw new Error(`rate limit allow-list entry "${entry}": ${(err as Error).message}`)
        }
      }
    }
    return new AllowList(ranges, keys)
  }

  /** The same entries with every rate and burst times `factor` (unlimited stays unlimited). */
  scaled(factor: number): AllowList {
    if (factor === 1) return this
    const scale = (p: RatePolicy): RatePolicy => scalePolicy(p, factor)
    return new AllowList(
      this.ranges.map((r) => ({ cidr: r.cidr, policy: scale(r.policy) })),
      new Map([...this.keys].map(([k, p]) => [k, scale(p)])),
    )
  }

  get hasRanges(): boolean {
    return this.ranges.length > 0
  }

  hasKey(key: string): boolean {
    return this.keys.has(key)
  }

  policyForKey(key: string): RatePolicy | undefined {
    return this.keys.get(key)
  }

  policyForIp(ip: IpAddress): RatePolicy | undefined {
    for (const { cidr, policy } of this.ranges) if (cidr.contains(ip)) return policy
    return undefined
  }
}

/** A policy times `factor`: rate 0 (unlimited) stays 0, and a burst never drops below one cheap call. */
export function scalePolicy(policy: RatePolicy, factor: number): RatePolicy {
  return { rate: policy.rate * factor, burst: Math.max(1, policy.burst * factor) }
}

function parsePolicy(text: string, entry: string): RatePolicy {
  const [rateText, burstText, extra] = text.split('/')
  const rate = Number(rateText)
  const burst = burstText === undefined ? 2 * rate : Number(burstText)
  if (extra !== undefined || rateText === '' || !Number.isFinite(rate) || rate < 0 || !Number.isFinite(burst) || burst < 1 && rate > 0) {
    throw new Error(`rate limit allow-list entry "${entry}": expected RATE[/BURST] with RATE >= 0 and BURST >= 1`)
  }
  return { rate, burst }
}

/** "eth_call=5,eth_getLogs=20": per-method cost overrides. */
export function parseMethodCosts(text: string | undefined): Record<string, number> {
  const costs: Record<string, number> = {}
  if (text === undefined) return costs
  for (const raw of text.split(',')) {
    const entry = raw.trim()
    if (entry === '') continue
    const [method, costText] = entry.split('=')
    const cost = Number(costText)
    if (!method || !/^[A-Za-z0-9_]+$/.test(method) || !Number.isFinite(cost) || cost < 0) {
      throw new Error(`method cost "${entry}" must be METHOD=COST with COST >= 0`)
    }
    costs[method] = cost
  }
  return costs
}

/**
 * The client policy from the options: --rate-limit unset = 100/s (off with --dev), --rate-burst unset =
 * 2 x rate. 100/s with a 200 burst is far above what a wallet or dapp sends and well below what one
 * client needs to starve the call pool.
 */
export function resolveRatePolicy(options: { rateLimit: number | undefined; rateBurst: number | undefined; dev: boolean }): RatePolicy {
  const rate = options.rateLimit ?? (options.dev ? 0 : DEFAULT_RATE_LIMIT)
  return { rate, burst: options.rateBurst ?? Math.max(1, 2 * rate) }
}

export const DEFAULT_RATE_LIMIT = 100

/** The API key of a request: the URL path /key/NAME (any prefix before it) or the X-Api-Key header. */
export function apiKeyOf(url: string, header: string): string | undefined {
  if (header !== '') return header
  const at = url.indexOf('/key/')
  if (at < 0) return undefined
  const rest = url.slice(at + 5)
  const end = rest.indexOf('/')
  const key = end < 0 ? rest : rest.slice(0, end)
  return key === '' ? undefined : key
}
