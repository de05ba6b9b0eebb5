// Rate limiter metrics: each admission decision (one per call: a batch's calls are charged one by one) by
// transport, and the number of clients the limiter holds a bucket for. Refused calls are answered -32005
// and never run, so they appear here and not in keel_rpc_requests_total. With --redis-url: the round
// trips to Redis, and the local fallback while Redis is unavailable.

import type { Transport } from '../rpc/context.js'
import type { CounterChild } from './family.js'
import type { CollectableGauge, MetricsRegistry } from './registry.js'

type Subject = { clientIp: string }

/** What the metrics need of the limiter: structurally src/rpc/ratelimit.ts ClientRateLimiter. */
export interface ObservableLimiter {
  take(subject: Subject, cost: number): number | Promise<number>
  takeEach?(subject: Subject, costs: readonly number[]): { served: number; retryAfter: number } | Promise<{ served: number; retryAfter: number }>
  readonly trackedClients: number
  /** The shared limiter's events (src/rpc/shared-ratelimit.ts). */
  on?(events: { fallback?(active: boolean): void; roundTrip?(seconds: number, ok: boolean): void }): void
  readonly inFallback?: boolean
}

/** Loopback round trips take well under a millisecond; the command timeout is tens of ms. */
const ROUND_TRIP_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1]

export class RateLimitMetrics {
  readonly decisions
  /** Clients (IPs or API keys) the limiter currently holds a bucket for. */
  readonly trackedClients: CollectableGauge
  readonly fallbackActive: CollectableGauge
  readonly fallbacks
  readonly redisRoundTrips
  private readonly allowedBy: Record<Transport, CounterChild>
  private readonly limitedBy: Record<Transport, CounterChild>

  constructor(register: MetricsRegistry) {
    this.decisions = register.counterFamily<'decision' | 'transport'>({
      name: 'keel_ratelimit_decisions_total',
      help: 'Rate limiter decisions per call (allowed or limited; a batch call by call), by transport',
      labelNames: ['decision', 'transport'],
    })
    this.allowedBy = {
      http: this.decisions.child({ decision: 'allowed', transport: 'http' }),
      ws: this.decisions.child({ decision: 'allowed', transport: 'ws' }),
    }
    this.limitedBy = {
      http: this.decisions.child({ decision: 'limited', transport: 'http' }),
      ws: this.decisions.child({ decision: 'limited', transport: 'ws' }),
    }
    this.trackedClients = register.gauge({
      name: 'keel_ratelimit_tracked_clients',
      help: 'Clients the rate limiter currently holds a bucket (or, with --redis-url, a lease) for',
    })
    this.fallbackActive = register.gauge({
      name: 'keel_ratelimit_fallback_active',
      help: 'With --redis-url: 1 while Redis is unavailable and this node limits alone at rate / --rate-limit-nodes',
    })
    this.fallbacks = register.counter({
      name: 'keel_ratelimit_fallbacks_total',
      help: 'With --redis-url: times this node fell back to its local limiter because Redis failed or timed out',
    })
    this.redisRoundTrips = register.histogram<'outcome'>({
      name: 'keel_ratelimit_redis_round_trip_seconds',
      help: 'With --redis-url: round trips to the shared buckets (a lease of tokens each), by outcome (ok or error)',
      labelNames: ['outcome'],
      buckets: ROUND_TRIP_BUCKETS,
    })
  }

  decided(transport: Transport, allowed: boolean, count = 1): void {
    ;(allowed ? this.allowedBy : this.limitedBy)[transport === 'ws' ? 'ws' : 'http'].inc(count)
  }

  /**
   * Counts every decision of `limiter` (take() answers 0 = admitted, else seconds to wait; takeEach() how
   * many calls of a batch were served) and reads its tracked clients at scrape time. The subject handed
   * to them is the request context.
   */
  observe(limiter: ObservableLimiter): void {
    const transportOf = (subject: Subject): Transport => (subject as { transport?: Transport }).transport ?? 'http'
    const take = limiter.take.bind(limiter)
    limiter.take = (subject, cost) => {
      const retryAfter = take(subject, cost)
      if (typeof retryAfter === 'number') {
        this.decided(transportOf(subject), retryAfter === 0)
        return retryAfter
      }
      return retryAfter.then((wait) => {
        this.decided(transportOf(subject), wait === 0)
        return wait
      })
    }
    if (limiter.takeEach !== undefined) {
      const takeEach = limiter.takeEach.bind(limiter)
      const count = (subject: Subject, total: number, served: number): void => {
        const transport = transportOf(subject)
        if (served > 0) this.decided(transport, true, served)
        if (served < total) this.decided(transport, false, total - served)
      }
      limiter.takeEach = (subject, costs) => {
        const admission = takeEach(subject, costs)
        if (!(admission instanceof Promise)) {
          count(subject, costs.length, admission.served)
          return admission
        }
        return admission.then((a) => {
          count(subject, costs.length, a.served)
          return a
        })
      }
    }
    this.trackedClients.addCollect((g) => g.set(limiter.trackedClients))
    if (limiter.on !== undefined) {
      const ok = this.redisRoundTrips.labels('ok')
      const failed = this.redisRoundTrips.labels('error')
      limiter.on({
        fallback: (active) => {
          if (active) this.fallbacks.inc()
        },
        roundTrip: (seconds, answered) => (answered ? ok : failed).observe(seconds),
      })
      this.fallbackActive.addCollect((g) => g.set(limiter.inFallback === true ? 1 : 0))
    }
  }
}
