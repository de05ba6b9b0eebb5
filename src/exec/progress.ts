// Which call of a piscina task a worker is running, and since when, shared through a SharedArrayBuffer:
// the worker writes, the pool's watchdog on the main thread reads. No messages, no locks.

const INDEX = 0
const STARTED_AT = 1

export class CallProgress {
  private readonly index: Int32Array
  private readonly startedAt: Float64Array

  constructor(readonly buffer: SharedArrayBuffer = new SharedArrayBuffer(16)) {
    this.index = new Int32Array(buffer, 0, 1)
    this.startedAt = new Float64Array(buffer, 8, 1)
  }

  /** Main side: before the buffer carries another task (no call picked up yet). */
  reset(): void {
    Atomics.store(this.index, INDEX, 0)
  }

  /** Worker side: call `i` starts now. */
  start(i: number): void {
    this.startedAt[0] = Date.now()
    Atomics.store(this.index, INDEX, i + 1)
  }

  /** Main side: the index of the running call, or -1 before the worker picked the task up. */
  get current(): number {
    return Atomics.load(this.index, INDEX) - 1
  }

  /** Main side: when the running call started (ms since the epoch). */
  get currentSince(): number {
    return this.startedAt[STARTED_AT - 1]
  }
}
