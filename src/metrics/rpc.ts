// JSON-RPC traffic metrics, recorded on the hot path. The method label only ever holds a registered
// method name (or "other"; "invalid" for messages that never named a callable method), and the outcome
// label comes from a fixed table of error classes, so no request can create an unbounded series.

import type { Transport } from '../rpc/context.js'
import type { CounterChild, GaugeChild, HistogramChild } from './family.js'
import type { MetricsRegistry } from './registry.js'

/** Error code -> outcome label. Codes not listed count as "error". */
const OUTCOME_BY_CODE: ReadonlyMap<number, string> = new Map([
  [3, 'reverted'],
  [-32700, 'parse_error'],
  [-32600, 'invalid_request'],
  [-32601, 'method_not_found'],
  [-32602, 'invalid_params'],
  [-32603, 'internal_error'],
  [-32000, 'server_error'],
  [-32001, 'resource_not_found'],
  [-32002, 'timeout'],
  [-32003, 'response_too_large'],
  [-32004, 'not_supported'],
  [-32005, 'limit_exceeded'],
])

export const OTHER_METHOD = 'other'
/** The method label of messages rejected before a method could be called (parse errors, bad shapes). */
export const INVALID_METHOD = 'invalid'

export const outcomeOf = (code: number): string => (code === 0 ? 'ok' : (OUTCOME_BY_CODE.get(code) ?? 'error'))

/** Seconds. From 50 µs (a cached eth_blockNumber) to 10 s (a long eth_call / eth_getLogs). */
export const RPC_DURATION_BUCKETS = [
  0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
]
export const BATCH_SIZE_BUCKETS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]

class OutcomeCounters {
  private okCounter: CounterChild | undefined
  private readonly byCode = new Map<number, CounterChild>()

  constructor(private readonly counterFor: (outcome: string) => CounterChild) {}

  forCode(code: number): CounterChild {
    if (code === 0) return (this.okCounter ??= this.counterFor('ok'))
    let counter = this.byCode.get(code)
    if (counter === undefined) {
      const outcome = OUTCOME_BY_CODE.get(code)
      counter = this.counterFor(outcome ?? 'error')
      // only listed codes are remembered, so a handler throwing odd codes cannot grow the map
      if (outcome !== undefined) this.byCode.set(code, counter)
    }
    return counter
  }
}

class MethodSeries {
  readonly http: OutcomeCounters
  readonly ws: OutcomeCounters
  private durationChild: HistogramChild | undefined
  constructor(
    private readonly durationFor: () => HistogramChild,
    counterFor: (transport: Transport, outcome: string) => CounterChild,
  ) {
    this.http = new OutcomeCounters((outcome) => counterFor('http', outcome))
    this.ws = new OutcomeCounters((outcome) => counterFor('ws', outcome))
  }
  /** Created on first use so that series which never ran a call (e.g. "invalid") export no empty histogram. */
  get duration(): HistogramChild {
    return (this.durationChild ??= this.durationFor())
  }
}

interface TransportSeries {
  inFlight: GaugeChild
  requestBytes: CounterChild
  responseBytes: CounterChild
  batchSize: HistogramChild
}

export class RpcMetrics {
  readonly requests
  readonly duration
  readonly batchSize
  readonly inFlight
  readonly requestBytes
  readonly responseBytes
  private readonly series = new Map<string, MethodSeries>()
  private readonly other: MethodSeries
  private readonly invalid: MethodSeries
  private readonly http: TransportSeries
  private readonly ws: TransportSeries

  constructor(
    register: MetricsRegistry,
    private readonly isKnownMethod: (method: string) => boolean,
  ) {
    this.requests = register.counterFamily<'method' | 'transport' | 'outcome'>({
      name: 'keel_rpc_requests_total',
      help: 'JSON-RPC calls answered, by method, transport and outcome (ok or the error class)',
      labelNames: ['method', 'transport', 'outcome'],
    })
    this.duration = register.histogramFamily<'method'>({
      name: 'keel_rpc_request_duration_seconds',
      help: 'Time from dispatch to result of one JSON-RPC call, by method',
      labelNames: ['method'],
      buckets: RPC_DURATION_BUCKETS,
    })
    this.batchSize = register.histogramFamily<'transport'>({
      name: 'keel_rpc_batch_size',
      help: 'Calls per JSON-RPC batch',
      labelNames: ['transport'],
      buckets: BATCH_SIZE_BUCKETS,
    })
    this.inFlight = register.gaugeFamily<'transport'>({
      name: 'keel_rpc_in_flight_requests',
      help: 'JSON-RPC messages (a batch counts once) received and not yet answered',
      labelNames: ['transport'],
    })
    this.requestBytes = register.counterFamily<'transport'>({
      name: 'keel_rpc_request_bytes_total',
      help: 'Size of JSON-RPC request messages (UTF-16 code units, equal to bytes for ASCII JSON)',
      labelNames: ['transport'],
    })
    this.responseBytes = register.counterFamily<'transport'>({
      name: 'keel_rpc_response_bytes_total',
      help: 'Size of JSON-RPC response messages (UTF-16 code units, equal to bytes for ASCII JSON)',
      labelNames: ['transport'],
    })
    this.other = this.createSeries(OTHER_METHOD)
    this.invalid = this.createSeries(INVALID_METHOD)
    this.http = this.transportSeries('http')
    this.ws = this.transportSeries('ws')
  }

  /** One executed call (the Envelope onCall hook). code 0 = success. */
  recordCall(method: string, transport: Transport, code: number, durationMs: number): void {
    let series = this.series.get(method)
    if (series === undefined) series = this.seriesFor(method)
    series.duration.observe(durationMs / 1000)
    const outcomes = transport === 'ws' ? series.ws : series.http
    outcomes.forCode(code).inc()
  }

  /** A message or batch item rejected before any method ran (parse error, invalid request, batch too large). */
  recordRejected(transport: Transport, code: number): void {
    const outcomes = transport === 'ws' ? this.invalid.ws : this.invalid.http
    outcomes.forCode(code).inc()
  }

  recordBatch(transport: Transport, size: number): void {
    this.transport(transport).batchSize.observe(size)
  }

  messageReceived(transport: Transport, size: number): void {
    const t = this.transport(transport)
    t.inFlight.inc()
    t.requestBytes.inc(size)
  }

  /** `size` 0 when nothing was sent back (notifications only). */
  messageAnswered(transport: Transport, size: number): void {
    const t = this.transport(transport)
    t.inFlight.dec()
    t.responseBytes.inc(size)
  }

  private transport(transport: Transport): TransportSeries {
    return transport === 'ws' ? this.ws : this.http
  }

  private seriesFor(method: string): MethodSeries {
    // Unknown names are not remembered: they all share "other" and leave no trace in the map.
    if (!this.isKnownMethod(method)) return this.other
    const series = this.createSeries(method)
    this.series.set(method, series)
    return series
  }

  private createSeries(method: string): MethodSeries {
    return new MethodSeries(() => this.duration.child({ method }), (transport, outcome) =>
      this.requests.child({ method, transport, outcome }),
    )
  }

  private transportSeries(transport: Transport): TransportSeries {
    return {
      inFlight: this.inFlight.child({ transport }),
      requestBytes: this.requestBytes.child({ transport }),
      responseBytes: this.responseBytes.child({ transport }),
      batchSize: this.batchSize.child({ transport }),
    }
  }
}
