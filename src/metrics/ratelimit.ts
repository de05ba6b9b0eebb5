// Rate limiter metrics: each admission decision (one per request message: a batch is charged at once) by
// transport, and the number of clients the limiter holds a bucket for. Refused requests are answered
// -32005 before any method runs, so they appear here and not in keel_rpc_requests_total.

import type { Transport } from '../rpc/context.js'
import type { CounterChild } from './family.js'
import type { CollectableGauge, MetricsRegistry } from './registry.js'

/** What the metrics need of the limiter: structurally src/rpc/ratelimit.ts RateLimiter. */
export interface ObservableLimiter {
  take(subject: { clientIp: string }, cost: number): number
  readonly trackedClients: number
}

export class RateLimitMetrics {
  readonly decisions
  /** Clients (IPs or API keys) the limiter currently holds a bucket for. */
  readonly trackedClients: CollectableGauge
  private readonly allowedBy: Record<Transport, CounterChild>
  private readonly limitedBy: Record<Transport, CounterChild>

  constructor(register: MetricsRegistry) {
    this.decisions = register.counterFamily<'decision' | 'transport'>({
      name: 'keel_ratelimit_decisions_total',
      help: 'Rate limiter decisions per request message (allowed or limited), by transport',
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
      help: 'Clients the rate limiter currently holds a bucket for',
    })
  }

  decided(transport: Transport, allowed: boolean): void {
    ;(allowed ? this.allowedBy : this.limitedBy)[transport === 'ws' ? 'ws' : 'http'].inc()
  }

  /**
   * Counts every decision of `limiter` (its take() answers 0 = admitted, else seconds to wait) and reads
   * its tracked clients at scrape time. The subject handed to take() is the request context.
   */
  observe(limiter: ObservableLimiter): void {
    const take = limiter.take.bind(limiter)
    limiter.take = (subject, cost) => {
      const retryAfter = take(subject, cost)
      this.decided((subject as { transport?: Transport }).transport ?? 'http', retryAfter === 0)
      return retryAfter
    }
    this.trackedClients.addCollect((g) => g.set(limiter.trackedClients))
  }
}
