// Group commit for small writes (the txpool journal): writes arriving in the same turn of the event
// loop share one LevelDB batch, and each caller resumes once its write is on disk.

import type { ChainLevel } from './level.js'
import type { LevelOp } from './state-db.js'

interface Waiter {
  resolve(): void
  reject(err: unknown): void
}

export class GroupCommit {
  private ops: LevelOp[] = []
  private waiters: Waiter[] = []
  private scheduled = false
  private inFlight: Promise<void> = Promise.resolve()

  /** `onError`: told of a failed batch before any waiter resumes (the producer stops writing at once). */
  constructor(
    private readonly level: ChainLevel,
    private readonly onError: (err: unknown) => void = () => {},
  ) {}

  write(ops: LevelOp[]): Promise<void> {
    for (const op of ops) this.ops.push(op)
    const done = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }))
    if (!this.scheduled) {
      this.scheduled = true
      setImmediate(() => void this.flush())
    }
    return done
  }

  /** Writes whatever is waiting; resolves when everything written so far is on disk. */
  flush(): Promise<void> {
    this.scheduled = false
    if (this.ops.length === 0) return this.inFlight
    const ops = this.ops
    const waiters = this.waiters
    this.ops = []
    this.waiters = []
    this.inFlight = this.inFlight
      .then(() => this.level.batch(ops))
      .then(
        () => {
          for (const w of waiters) w.resolve()
        },
        (err: unknown) => {
          this.onError(err)
          for (const w of waiters) w.reject(err)
        },
      )
    return this.inFlight
  }
}
