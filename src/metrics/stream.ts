// Block stream metrics (--stream-url): on the producer, what the stream has acknowledged and what waits
// for it; on a replica, how far it is behind, how late blocks arrive and what applying them costs. The
// thread that talks to NATS reports its state to the main thread (StreamStatus), and a replica's blocks
// carry their replication figures (NewBlockEvent.replicated).

import type { ReplicatedStats, StreamStatus } from '../chain/messages.js'
import type { MetricsRegistry } from './registry.js'

const LAG_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
const APPLY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1]

/** Refusal codes a replica stops on (replication/errors.ts), as the verify-failure label. */
export const VERIFY_FAILURE_CODES = ['malformed', 'not-next', 'bad-block', 'bad-write-set', 'missing-state-root', 'state-root-mismatch'] as const

export class StreamMetrics {
  readonly connected
  readonly block
  readonly backlog
  readonly stopped
  readonly replicaLag
  readonly replicaApply
  readonly replicaBytes
  readonly verifyFailures
  readonly bootstraps
  private stoppedCounted = false

  constructor(register: MetricsRegistry) {
    this.connected = register.gauge<'role'>({
      name: 'keel_stream_connected',
      help: 'Whether the node reaches the block stream (1) or not (0); role: producer or replica',
      labelNames: ['role'],
    })
    this.block = register.gauge<'role'>({
      name: 'keel_stream_block',
      help: 'Producer: the newest block the stream acknowledged; replica: the newest block applied from it',
      labelNames: ['role'],
    })
    this.backlog = register.gauge<'role'>({
      name: 'keel_stream_backlog_blocks',
      help: 'Producer: blocks sealed and not yet published; replica: blocks the chain has beyond the replica head',
      labelNames: ['role'],
    })
    this.stopped = register.gauge<'role'>({
      name: 'keel_stream_stopped',
      help: 'Whether the node stopped using the stream for good (1): a producer fenced out, a replica that refused a block',
      labelNames: ['role'],
    })
    this.replicaLag = register.histogram({
      name: 'keel_replica_lag_seconds',
      help: "Time from the producer's commit of a block to the replica's commit of it",
      buckets: LAG_BUCKETS,
    })
    this.replicaApply = register.histogram({
      name: 'keel_replica_apply_seconds',
      help: 'Time a replica spends on a block: reassembly, checks and the write batch',
      buckets: APPLY_BUCKETS,
    })
    this.replicaBytes = register.counter({ name: 'keel_replica_applied_bytes_total', help: 'Bytes (keys and values) replicas wrote from the stream' })
    this.verifyFailures = register.counter<'code'>({
      name: 'keel_replica_verify_failures_total',
      help: 'Blocks a replica refused, by the check that failed',
      labelNames: ['code'],
    })
    this.bootstraps = register.counter({
      name: 'keel_replica_bootstraps_total',
      help: "Snapshots of the producer's chain a replica restored since its process started (a new data folder, a retention gap)",
    })
  }

  status(s: StreamStatus): void {
    this.connected.set({ role: s.role }, s.connected ? 1 : 0)
    this.block.set({ role: s.role }, Number(s.block))
    this.backlog.set({ role: s.role }, s.backlog)
    this.stopped.set({ role: s.role }, s.stopped === undefined ? 0 : 1)
    if (s.role === 'replica' && s.stopped !== undefined && !this.stoppedCounted && (VERIFY_FAILURE_CODES as readonly string[]).includes(s.stopped.code)) {
      this.stoppedCounted = true
      this.verifyFailures.inc({ code: s.stopped.code })
    }
  }

  applied(r: ReplicatedStats): void {
    if (r.lagMs !== undefined) this.replicaLag.observe(r.lagMs / 1000)
    this.replicaApply.observe(r.applyMs / 1000)
    this.replicaBytes.inc(r.bytes)
  }
}
