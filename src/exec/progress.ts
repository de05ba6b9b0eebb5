// Which call of a piscina task a worker is running, on which thread, and since when, shared through a
// SharedArrayBuffer: the worker writes, the pool's watchdog on the main thread reads. No messages, no
// locks.

const INDEX = 0
const THREAD = 1

export class CallProgress {
  private readonly ints: Int32Array
  private readonly startedAt: Float64Array

  constructor(readonly buffer: SharedArrayBuffer = new SharedArrayBuffer(16)) {
    this.ints = new Int32Array(buffer, 0, 2)
    this.startedAt = new Float64Array(buffer, 8, 1)
  }

  /** Main side: before the buffer carries another task (no call picked up yet). */
  reset(): void {
    Atomics.store(this.ints, THREAD, 0)
    Atomics.store(this.ints, INDEX, 0)
  }

  /** Worker side: call `i` starts now, on worker thread `threadId`. */
  start(i: number, threadId: number): void {
    this.startedAt[0] = Date.now()
    Atomics.store(this.ints, THREAD, threadId)
    Atomics.store(this.ints, INDEX, i + 1)
  }

  /** Main side: the worker thread running the task (its threadId), or 0 before one picked it up. */
  get thread(): number {
    return Atomics.load(this.ints, THREAD)
  }

  /** Main side: the index of the running call, or -1 before the worker picked the task up. */
  get current(): number {
    return Atomics.load(this.ints, INDEX) - 1
  }

  /** Main side: when the running call started (ms since the epoch). */
  get currentSince(): number {
    return this.startedAt[0]
  }
}
