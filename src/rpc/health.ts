// GET /health (liveness: the process answers) and GET /ready (readiness: the chain is open, the head is
// fresh, and the node is not shutting down). Both are answered straight from memory, never rate limited.
// Readiness semantics follow erigon's max_seconds_behind and Besu's /readiness (200 / 503).

import type { StorageStatus, StreamStatus } from '../chain/messages.js'

export interface HealthAnswer {
  status: '200 OK' | '503 Service Unavailable' | '400 Bad Request'
  body: string
}

export interface HeadClock {
  /** The head block's number and timestamp (seconds), or undefined while the chain is not open. */
  head(): { number: bigint; timestamp: bigint } | undefined
}

/** How far a replica is behind the chain's head, from the block stream (or the producer while it is down). */
export interface ReplicaLag {
  /** undefined until the replica has heard from the stream or the producer */
  status(): StreamStatus | undefined
  maxBlocksBehind: number
}

export class Health {
  private drainingSince: number | undefined
  private replica: ReplicaLag | undefined
  private storage: (() => StorageStatus) | undefined

  constructor(
    private readonly chain: HeadClock,
    private readonly maxSecondsBehind: number,
    private readonly nowSeconds: () => number = () => Date.now() / 1000,
  ) {}

  /**
   * A replica is ready while it is at most `maxBlocksBehind` blocks behind, counted in blocks, never in
   * seconds: a quiet chain seals no blocks, and wall-clock staleness would drain every replica at once.
   */
  followReplica(lag: ReplicaLag): void {
    this.replica = lag
  }

  /** Readiness fails while the database cannot be written (a full disk, a failed write): nothing is sealed. */
  followStorage(status: () => StorageStatus): void {
    this.storage = status
  }

  /** Readiness fails from now on: the first step of a graceful shutdown. */
  startDraining(): void {
    this.drainingSince ??= this.nowSeconds()
  }

  get draining(): boolean {
    return this.drainingSince !== undefined
  }

  liveness(): HealthAnswer {
    return { status: '200 OK', body: '{"status":"ok"}' }
  }

  /** `query` is the raw query string (without "?"), e.g. "maxSecondsBehind=30". */
  readiness(query: string | undefined): HealthAnswer {
    let maxBehind = this.maxSecondsBehind
    if (query) {
      const requested = new URLSearchParams(query).get('maxSecondsBehind')
      if (requested !== null) {
        const value = Number(requested)
        if (requested.trim() === '' || !Number.isFinite(value) || value < 0) {
          return { status: '400 Bad Request', body: '{"status":"error","reason":"maxSecondsBehind must be a number >= 0"}' }
        }
        maxBehind = value
      }
    }
    if (this.draining) return unready('shutting down')
    const head = this.chain.head()
    if (head === undefined) return unready('chain not open')
    const storage = this.storage?.()
    if (storage !== undefined && !storage.writable) return unready(`database cannot be written: ${storage.reason ?? 'unknown'}`)
    if (this.replica !== undefined) return this.replicaReadiness(head.number, this.replica)
    const behind = Math.max(0, Math.floor(this.nowSeconds() - Number(head.timestamp)))
    const detail = `"head":${head.number},"secondsBehind":${behind},"maxSecondsBehind":${maxBehind}`
    if (behind > maxBehind) return { status: '503 Service Unavailable', body: `{"status":"unready","reason":"head is stale",${detail}}` }
    return { status: '200 OK', body: `{"status":"ready",${detail}}` }
  }

  private replicaReadiness(headNumber: bigint, lag: ReplicaLag): HealthAnswer {
    const status = lag.status()
    if (status === undefined) return unready('replica has not reached the block stream or the producer yet')
    if (status.stopped !== undefined) return unready(`replica stopped following the block stream: ${status.stopped.reason}`)
    const detail = `"head":${headNumber},"blocksBehind":${status.backlog},"maxBlocksBehind":${lag.maxBlocksBehind},"stream":${status.connected ? '"connected"' : '"unreachable"'}`
    if (status.backlog > lag.maxBlocksBehind) return { status: '503 Service Unavailable', body: `{"status":"unready","reason":"replica is behind",${detail}}` }
    return { status: '200 OK', body: `{"status":"ready",${detail}}` }
  }
}

const unready = (reason: string): HealthAnswer => ({
  status: '503 Service Unavailable',
  body: `{"status":"unready","reason":${JSON.stringify(reason)}}`,
})
