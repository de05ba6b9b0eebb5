// HTTP transport metrics, read from the server at scrape time: requests in progress (being read or
// answered) and those refused at the --http-max-in-flight cap.

import type { MetricsRegistry } from './registry.js'

/** Structurally RpcServer.httpStats(). */
export interface HttpSources {
  stats(): { inFlight: number; refusedBusy: number }
}

export class HttpMetrics {
  private bound = false

  constructor(private readonly register: MetricsRegistry) {}

  bind(sources: HttpSources): void {
    if (this.bound) return
    this.bound = true
    this.register.gauge({ name: 'keel_http_requests_in_flight', help: 'HTTP requests being read or answered' }).addCollect((g) => g.set(sources.stats().inFlight))
    this.register.externalCounter({
      name: 'keel_http_requests_refused_busy_total',
      help: 'HTTP requests answered 503 because --http-max-in-flight requests were already in progress',
      read: () => sources.stats().refusedBusy,
    })
  }
}
