// Which call of a piscina task a worker is running, on which thread, and since when, shared through a
// SharedArrayBuffer: the worker writes, the pool's watchdog on the main thread reads. No messages, no
// locks. The calls of a task a worker has not started yet can be withdrawn by the pool (they go to
// another worker): the worker claims the task, then each call, before running it, and whichever side
// swaps the slot first wins.

const INDEX = 0
const THREAD = 1
/** calls the worker has claimed so far; -1 once the pool withdrew the rest */
const CLAIMED = 2
const WITHDRAWN = -1

export class CallProgress {
  private readonly ints: Int32Array
  private readonly startedAt: Float64Array

  constructor(readonly buffer: SharedArrayBuffer = new SharedArrayBuffer(24)) {
    this.ints = new Int32Array(buffer, 0, 3)
    this.startedAt = new Float64Array(buffer, 16, 1)
  }

  /** Main side: before the buffer carries another task (no call picked up yet). */
  reset(): void {
    Atomics.store(this.ints, THREAD, 0)
    Atomics.store(this.ints, INDEX, 0)
    Atomics.store(this.ints, CLAIMED, 0)
  }

  /** Worker side: takes the task on thread `threadId`; false when the pool withdrew it (skip its calls). */
  claim(threadId: number): boolean {
    return Atomics.compareExchange(this.ints, THREAD, 0, threadId) === 0
  }

  /** Worker side: claims call `i` and marks it running; false when the pool withdrew it and the calls after it. */
  start(i: number): boolean {
    if (Atomics.compareExchange(this.ints, CLAIMED, i, i + 1) !== i) return false
    this.startedAt[0] = Date.now()
    Atomics.store(this.ints, INDEX, i + 1)
    return true
  }

  /** Worker side: no call of the task runs any more (before its result is posted: the pool's balancer reads it). */
  finish(): void {
    Atomics.store(this.ints, INDEX, 0)
  }

  /**
   * Main side: takes back the calls of a task of `total` calls that no worker has started; returns how
   * many the worker keeps (`total`: none taken back; 0: the whole task).
   */
  withdraw(total: number): number {
    if (Atomics.compareExchange(this.ints, THREAD, 0, WITHDRAWN) === 0) return 0
    for (;;) {
      const started = Atomics.load(this.ints, CLAIMED)
      if (started < 0 || started >= total) return total
      if (Atomics.compareExchange(this.ints, CLAIMED, started, WITHDRAWN) === started) return started
    }
  }

  /** Main side: the worker thread running the task (its threadId), 0 before one claimed it, -1 withdrawn. */
  get thread(): number {
    return Atomics.load(this.ints, THREAD)
  }

  /** Main side: the index of the running call, or -1 before the worker picked the task up and once it is done. */
  get current(): number {
    return Atomics.load(this.ints, INDEX) - 1
  }

  /** Main side: when the running call started (ms since the epoch). */
  get currentSince(): number {
    return this.startedAt[0]
  }
}
