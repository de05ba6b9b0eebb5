// Call pool metrics. Sizes and totals are read from the pool at scrape time (ExecPool.stats); the
// per-call queue wait and per-task run time come from the pool's observer hook.

import type { HistogramChild } from './family.js'
import type { CollectableGauge, MetricsRegistry } from './registry.js'
import type { ExecPoolObserver, ExecPoolStats } from '../exec/pool.js'

/** What the metrics read from the pool. */
export type CallPoolStats = Pick<ExecPoolStats, 'workers' | 'queued' | 'running' | 'calls' | 'timeouts' | 'trieNodeReads' | 'bursts' | 'heavyClients'>

const SECONDS_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

export class CallPoolMetrics implements ExecPoolObserver {
  readonly queueLength: CollectableGauge
  readonly busyWorkers: CollectableGauge
  readonly workers: CollectableGauge
  readonly heavyClients: CollectableGauge
  /** observed once per call: a hot-path family, not prom-client's (which hashes labels per observe) */
  readonly waitTime: HistogramChild
  readonly runTime: HistogramChild
  readonly queueFull
  private bound = false

  constructor(private readonly register: MetricsRegistry) {
    this.queueLength = register.gauge({ name: 'keel_call_pool_queue_length', help: 'Calls waiting for a call pool worker' })
    this.busyWorkers = register.gauge({ name: 'keel_call_pool_busy_workers', help: 'Call pool workers running a task' })
    this.workers = register.gauge({ name: 'keel_call_pool_workers', help: 'Call pool worker threads (burst workers included while they live)' })
    this.heavyClients = register.gauge({
      name: 'keel_call_pool_heavy_clients',
      help: 'Clients whose calls ran long lately: their calls wait in a lane of their own and go out one task at a time',
    })
    this.waitTime = register
      .histogramFamily({
        name: 'keel_call_pool_wait_seconds',
        help: 'Time a call waited in the call pool queue before a worker took it',
        buckets: SECONDS_BUCKETS,
      })
      .child({})
    this.runTime = register
      .histogramFamily({
        name: 'keel_call_pool_run_seconds',
        help: 'Time a call pool task (one or more calls) ran on a worker',
        buckets: SECONDS_BUCKETS,
      })
      .child({})
    this.queueFull = register.counter({
      name: 'keel_call_pool_queue_full_total',
      help: 'Calls refused because the call pool queue was full',
    })
  }

  /** Reads sizes and totals from the pool at every scrape. */
  bind(stats: () => CallPoolStats): void {
    if (this.bound) return
    this.bound = true
    this.queueLength.addCollect((g) => g.set(stats().queued))
    this.busyWorkers.addCollect((g) => g.set(stats().running))
    this.workers.addCollect((g) => g.set(stats().workers))
    this.heavyClients.addCollect((g) => g.set(stats().heavyClients))
    this.register.externalCounter({
      name: 'keel_call_pool_calls_total',
      help: 'Calls (eth_call, eth_estimateGas, eth_createAccessList) handed to the call pool',
      read: () => stats().calls,
    })
    this.register.externalCounter({
      name: 'keel_call_pool_timeouts_total',
      help: 'Call pool tasks stopped by the EVM timeout (--rpc-evm-timeout-ms)',
      read: () => stats().timeouts,
    })
    this.register.externalCounter({
      name: 'keel_call_pool_bursts_total',
      help: 'Times a call ran long while others waited and the call pool added burst workers (--call-burst-workers)',
      read: () => stats().bursts,
    })
    this.register.externalCounter({
      name: 'keel_call_trie_node_reads_total',
      help: 'Trie nodes the call pool workers read from LevelDB (cache misses); stays flat while calls at the head are warm',
      read: () => stats().trieNodeReads,
    })
  }

  onCallStarted(waitMs: number): void {
    this.waitTime.observe(waitMs / 1000)
  }

  onTaskFinished(_calls: number, runMs: number): void {
    this.runTime.observe(runMs / 1000)
  }

  onQueueFull(): void {
    this.queueFull.inc()
  }
}
