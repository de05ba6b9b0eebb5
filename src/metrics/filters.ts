// Polling filter metrics: the filters this node holds in memory and, with --redis-url, whether Redis
// answers the filter calls (a poll it does not answer is "filter not found" to the client).

import type { CollectableGauge, MetricsRegistry } from './registry.js'

/** What the metrics need of the filters: structurally src/rpc/shared-filters.ts SharedFilters or LocalFilters. */
export interface ObservableFilters {
  /** filters held in this node's memory */
  readonly localCount: number
  on?(events: { failed?(): void }): void
  readonly unavailable?: boolean
}

export class FilterMetrics {
  readonly local: CollectableGauge
  readonly redisUnavailable: CollectableGauge
  readonly redisFailures

  constructor(register: MetricsRegistry) {
    this.local = register.gauge({
      name: 'keel_filters_local',
      help: 'Polling filters held in this node\'s memory (all of them without --redis-url; with it, those made while Redis was unavailable)',
    })
    this.redisUnavailable = register.gauge({
      name: 'keel_filters_redis_unavailable',
      help: 'With --redis-url: 1 while the last filter call found Redis unavailable (polls of shared filters answer "filter not found")',
    })
    this.redisFailures = register.counter({
      name: 'keel_filters_redis_failures_total',
      help: 'With --redis-url: filter calls Redis failed or did not answer in time',
    })
  }

  observe(filters: ObservableFilters): void {
    this.local.addCollect((g) => g.set(filters.localCount))
    if (filters.on === undefined) return
    filters.on({ failed: () => this.redisFailures.inc() })
    this.redisUnavailable.addCollect((g) => g.set(filters.unavailable === true ? 1 : 0))
  }
}
