// Which call of a piscina task a worker is running, on which thread, and since when, shared through a
// SharedArrayBuffer: the worker writes, the pool's watchdog on the main thread reads. No messages, no
// locks. A task not picked up yet can be withdrawn by the pool (its calls go to another worker): the
// worker claims a task before running it, and whichever side swaps the thread slot first wins.

const INDEX = 0
const THREAD = 1
const WITHDRAWN = -1

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

  /** Worker side: takes the task on thread `threadId`; false when the pool withdrew it (skip its calls). */
  claim(threadId: number): boolean {
    return Atomics.compareExchange(this.ints, THREAD, 0, threadId) === 0
  }

  /** Main side: takes back a task no worker has claimed; false when one already runs it. */
  withdraw(): boolean {
    return Atomics.compareExchange(this.ints, THREAD, 0, WITHDRAWN) === 0
  }

  /** Worker side: call `i` of the claimed task starts now. */
  start(i: number): void {
    this.startedAt[0] = Date.now()
    Atomics.store(this.ints, INDEX, i + 1)
  }

  /** Main side: the worker thread running the task (its threadId), 0 before one claimed it, -1 withdrawn. */
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
