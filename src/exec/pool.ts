// The call pool: eth_call, eth_estimateGas and eth_createAccessList run in piscina worker threads so the
// event loop never waits on the EVM.
//
// The pool keeps its own queue and hands piscina at most two tasks per worker, so that
//  - everything waiting when a worker frees up (a JSON-RPC batch, or calls from many clients that
//    arrived in the same tick) travels as ONE piscina task: one structured clone, one round trip;
//  - a worker finds its next task waiting when it posts a result, instead of idling until the main
//    thread has answered that result's requests and dispatched again (it runs its two tasks one after
//    the other; unique eth_call +10%: measured in commit b5c9d3a, bench/README.md there);
//  - the queue bound is ours and answers a clear error.
// Each call's wall-clock limit runs from its own start: the worker marks which call it runs, on which
// thread and since when (progress.ts), and a watchdog checks the running tasks. A call past the limit
// is stopped by terminating its worker thread (piscina starts a new one): the runaway call gets geth's
// timeout error; the calls of its task that had not finished, and the task waiting behind it in that
// worker, go back to the queue. (piscina's own abort signal would do the termination, but piscina
// never gives a second task to a worker running an abortable one.)
// A call that runs long (a heavy view function, or one sent to stall the node) would make every call
// queued behind it wait as long: once one has run LONG_CALL_MS while others wait, the pool grows by
// `burstWorkers` threads and withdraws the calls waiting behind it that no worker has started (the rest
// of its own task, which may hold other clients' calls, and the task queued after it in its worker), so
// that they run on the new thread; the pool's balancer (balancer.ts) gives no task to a worker running a
// long call or holding a lane's task.
// An extra thread leaves after piscina's idle timeout. A client whose call ran long gets a lane of its own
// (heavy-clients.ts): its calls go out one task at a time, and the lanes leave the others a thread.

import { CALL_WORKER_HEAP_LIMITS } from '../util/worker-heap.js'
import { goDuration } from '../util/go-duration.js'
import { randomUUID } from 'node:crypto'
import { BroadcastChannel } from 'node:worker_threads'
import type { StateDiff } from '../chain/state-diff.js'
import { availableParallelism } from 'node:os'
import { Piscina, queueOptionsSymbol } from 'piscina'
import type { GethGenesis } from '../evm/geth-genesis.js'
import { limitExceeded, serverError } from '../errors.js'
import type { RpcError } from '../errors.js'
import { chooseWorker, runsLong } from './balancer.js'
import { HeavyClients } from './heavy-clients.js'
import type { Lane } from './heavy-clients.js'
import { CallProgress } from './progress.js'
import { fromWire } from './result-wire.js'
import type { WireResult } from './result-wire.js'
import type { ExecLimits, ExecResult, ExecTask } from './types.js'

/** What one piscina task carries. */
export interface ExecBatch {
  tasks: ExecTask[]
  progress: SharedArrayBuffer
}

/** What a worker answers for one piscina task. */
export interface ExecBatchResult {
  results: WireResult[]
  /** trie nodes the worker fetched from LevelDB while running the batch (misses of its caches) */
  trieNodeReads: number
}

interface Running {
  items: Pending[]
  progress: CallProgress
  /** the index of the call that ran past the limit, once the watchdog fired */
  runaway: number
  /** the calls its worker runs: the first `kept` (the others were taken back and queued again); 0: the
   * whole task was taken back, and its outcome is ignored */
  kept: number
  /** the first `early` calls, done before a long call of the task, were queued again too (their results wait for it) */
  early: number
  /** the lane of the client whose calls this task alone carries, while it runs */
  lane: Lane<Pending> | undefined
  /** the thread piscina's balancer gave it to, 0 until then (balancer.ts) */
  worker: number
}

export interface ExecPoolInit {
  dataDir: string
  genesis: GethGenesis
  limits: ExecLimits
  /** BroadcastChannel the workers take state diffs from (set by the pool) */
  stateDiffChannel?: string
}

export interface Executor {
  /** `client`: the caller's address (or `key:NAME`, an allow-listed API key), '' when unknown (a client whose calls run long gets a lane of its own) */
  run(task: ExecTask, client?: string): Promise<ExecResult>
  /** Another client (`client`) waits for the call `run` answered with `running` too. */
  share?(running: Promise<ExecResult>, client: string): void
  close(): Promise<void>
}

export interface ExecPoolOptions {
  /** worker threads; 0 = derive from the core count */
  workers?: number
  /** threads added while a call runs long and others wait (default 1; 0 = never) */
  burstWorkers?: number
  /** calls waiting for a worker before new ones are refused */
  maxQueue?: number
  /** most calls carried by one piscina task */
  maxBatch?: number
  /** clients never given a lane (see heavy-clients.ts) */
  laneExempt?: (client: string) => boolean
}

interface Pending {
  task: ExecTask
  /** the caller's address (or `key:NAME`), '' when unknown */
  client: string
  /** what run() answered for it */
  promise: Promise<ExecResult> | undefined
  resolve: (result: ExecResult) => void
  reject: (err: unknown) => void
  /** performance.now() when it entered the queue (metrics) */
  queuedAt: number
}

export interface ExecPoolStats {
  workers: number
  queued: number
  /** workers running a task */
  running: number
  piscinaTasks: number
  calls: number
  timeouts: number
  /** trie nodes the workers fetched from LevelDB: stays flat while calls at the head are warm */
  trieNodeReads: number
  /** times a long call made the pool add burst workers */
  bursts: number
  /** clients whose calls ran long in the last HEAVY_FOR_MS and run in a lane of their own */
  heavyClients: number
}

/** Told how work moves through the pool (metrics); durations in milliseconds. */
export interface ExecPoolObserver {
  /** A call left the queue for a worker after waiting `waitMs`. */
  onCallStarted(waitMs: number): void
  /** A piscina task carrying `calls` calls settled after running `runMs`. */
  onTaskFinished(calls: number, runMs: number): void
  /** A call was refused because the queue was full. */
  onQueueFull(): void
}

/**
 * One worker per core but one: the main thread spends about as much CPU on a call (HTTP, params, the
 * hand-off) as the worker running it, so it needs a core of its own under load. Measured on 2 cores
 * (5 alternating runs, measured in commit b5c9d3a, bench/README.md there): 1 worker against 2, unique
 * eth_call balanceOf 6,749 vs 6,570 calls/s, eth_estimateGas 4,906 vs 4,196/s, peak RSS 226 vs 270 MiB.
 */
export function defaultCallWorkers(cores = availableParallelism()): number {
  return Math.max(1, cores - 1)
}

export const executionTimedOut = (ms: number): RpcError => serverError(`execution aborted (timeout = ${goDuration(ms)})`)

const TASKS_PER_WORKER = 2
/** An idle burst worker leaves after this long. */
const BURST_IDLE_MS = 30_000

/** how piscina fails the tasks of a worker thread that exited */
const WORKER_EXITED = 'worker exited with code'

export class ExecPool implements Executor {
  private readonly stateDiffs: BroadcastChannel
  private readonly piscina: Piscina<ExecBatch, ExecBatchResult>
  readonly workers: number
  private readonly burstWorkers: number
  /** the workers tasks are dispatched for: `workers`, plus `burstWorkers` while a call runs long */
  private activeWorkers: number
  private bursts = 0
  private readonly maxQueue: number
  private readonly maxBatch: number
  private readonly timeoutMs: number
  private queue: Pending[] = []
  private queueHead = 0
  private readonly runningTasks = new Set<Running>()
  private readonly heavy: HeavyClients<Pending>
  private watchdog: NodeJS.Timeout | undefined
  private scheduled = false
  private closed = false
  private piscinaTasks = 0
  private calls = 0
  private timeouts = 0
  private trieNodeReads = 0
  private readonly spareProgress: CallProgress[] = []
  /** threads the watchdog terminated (thread ids are never reused within a process) */
  private readonly recycledThreads = new Set<number>()
  observer: ExecPoolObserver | undefined

  constructor(init: ExecPoolInit, opts: ExecPoolOptions = {}) {
    this.workers = opts.workers !== undefined && opts.workers > 0 ? opts.workers : defaultCallWorkers()
    this.burstWorkers = opts.burstWorkers ?? 1
    this.activeWorkers = this.workers
    this.heavy = new HeavyClients(Math.max(1, this.workers + this.burstWorkers - 1), opts.laneExempt)
    this.maxQueue = opts.maxQueue ?? 4096
    this.maxBatch = opts.maxBatch ?? 64
    this.timeoutMs = init.limits.timeoutMs
    const channelName = `keel-state-diff-${process.pid}-${randomUUID()}`
    this.stateDiffs = new BroadcastChannel(channelName)
    this.stateDiffs.unref()
    this.piscina = new Piscina({
      filename: new URL('./worker.js', import.meta.url).href,
      minThreads: this.workers,
      maxThreads: this.workers + this.burstWorkers,
      idleTimeout: BURST_IDLE_MS,
      // piscina's default ('sync') parks an idle worker in Atomics.wait and runs a task without turning
      // its event loop, so the state diffs broadcast after each block were never delivered to a worker
      // and every call at a new head walked the trie again
      atomics: 'disabled',
      concurrentTasksPerWorker: TASKS_PER_WORKER,
      // the task's Running rides under piscina's queue-options key (see dispatch)
      loadBalancer: (task, workers) => chooseWorker(task[queueOptionsSymbol] as Running | null, workers, this.runningTasks, TASKS_PER_WORKER),
      resourceLimits: CALL_WORKER_HEAP_LIMITS,
      workerData: { ...init, stateDiffChannel: channelName },
    })
  }

  get stats(): ExecPoolStats {
    // burst workers included while they live
    const workers = Math.max(this.workers, this.piscina.threads.length)
    return {
      workers,
      queued: this.queue.length - this.queueHead + this.heavy.waiting,
      // piscina gives a task to an idle worker before it doubles one up
      running: Math.min(workers, this.runningTasks.size),
      piscinaTasks: this.piscinaTasks,
      calls: this.calls,
      timeouts: this.timeouts,
      trieNodeReads: this.trieNodeReads,
      bursts: this.bursts,
      heavyClients: this.heavy.size,
    }
  }

  run(task: ExecTask, client = ''): Promise<ExecResult> {
    if (this.closed) return Promise.reject(serverError('call pool is closed'))
    if (this.queue.length - this.queueHead >= this.maxQueue) {
      this.observer?.onQueueFull()
      return Promise.reject(limitExceeded('call pool queue is full, retry later'))
    }
    let item!: Pending
    const promise = new Promise<ExecResult>((resolve, reject) => {
      item = { task, client, promise: undefined, resolve, reject, queuedAt: performance.now() }
    })
    item.promise = promise
    this.queue.push(item)
    this.schedule()
    return promise
  }

  /**
   * An identical request of another client joined a call (the result cache shares it): if the call waits
   * in its client's lane, it leaves the lane for the queue, so that one client's long calls do not hold
   * up the answer others wait for.
   */
  share(running: Promise<ExecResult>, client: string): void {
    if (this.heavy.waiting === 0) return
    const item = this.heavy.remove((call) => call.promise === running && call.client !== client)
    if (item === undefined) return
    // no one's call in particular now: it never goes back to a lane
    item.client = ''
    this.queue.splice(this.queueHead, 0, item)
    this.schedule()
  }

  /** Dispatch on the next turn: calls that arrive during this one ride in the same piscina task. */
  private schedule(): void {
    if (this.scheduled) return
    this.scheduled = true
    setImmediate(() => {
      this.scheduled = false
      this.pump()
    })
  }

  private pump(): void {
    const maxTasks = this.activeWorkers * TASKS_PER_WORKER
    if (this.heavy.size > 0) this.pumpLanes(maxTasks)
    while (this.runningTasks.size < maxTasks && this.queueHead < this.queue.length) {
      const waiting = this.queue.length - this.queueHead
      const free = maxTasks - this.runningTasks.size
      const size = Math.min(this.maxBatch, Math.ceil(waiting / free))
      const items = this.queue.slice(this.queueHead, this.queueHead + size)
      this.queueHead += items.length
      if (this.queueHead === this.queue.length) {
        this.queue = []
        this.queueHead = 0
      } else if (this.queueHead > 1024) {
        this.queue = this.queue.slice(this.queueHead)
        this.queueHead = 0
      }
      this.dispatch(items)
    }
  }

  /**
   * Moves the queued calls of clients with a lane to their lanes, and sends the lanes' next calls, a
   * task for each lane (first: the lanes' share of the pool is bounded, the rest is everyone else's).
   */
  private pumpLanes(maxTasks: number): void {
    let kept = this.queueHead
    for (let i = this.queueHead; i < this.queue.length; i++) {
      const item = this.queue[i]
      if (item.client === '' || !this.heavy.has(item.client)) this.queue[kept++] = item
      else if (!this.heavy.add(item)) item.reject(limitExceeded('too many calls waiting from this address, retry later'))
    }
    this.queue.length = kept
    while (this.runningTasks.size < maxTasks) {
      const next = this.heavy.next(this.maxBatch)
      if (next === undefined) break
      this.dispatch(next.calls, next.lane)
    }
  }

  /**
   * Notes which clients have a call running long now (they get a lane); true when any call does, or a
   * lane's call runs (it may well run long: a task queued behind it would wait).
   */
  private lookForLongCalls(now: number): boolean {
    let longCall = false
    this.heavy.beginLook()
    for (const running of this.runningTasks) {
      if (running.lane !== undefined && running.runaway < 0) longCall = true
      if (!runsLong(running.progress, now)) continue
      // a runaway call's thread is being terminated: nothing waits behind it, but its client gets a lane
      if (running.runaway < 0) longCall = true
      const client = running.items[running.progress.current]?.client
      if (client !== undefined && client !== '') this.heavy.sawLong(client, now)
    }
    this.heavy.endLook(now)
    return longCall
  }

  /** The task no longer holds its client's lane. */
  private leaveLane(running: Running): void {
    if (running.lane === undefined) return
    running.lane.running = false
    running.lane = undefined
  }

  private dispatch(items: Pending[], lane?: Lane<Pending>): void {
    // progress buffers are reused: a SharedArrayBuffer per task showed in the main thread's profile
    const progress = this.spareProgress.pop() ?? new CallProgress()
    progress.reset()
    const running: Running = { items, progress, runaway: -1, kept: items.length, early: 0, lane, worker: 0 }
    this.runningTasks.add(running)
    this.piscinaTasks++
    this.calls += items.length
    const startedAt = performance.now()
    const observer = this.observer
    if (observer !== undefined) for (const item of items) observer.onCallStarted(startedAt - item.queuedAt)
    this.armWatchdog()
    // pushed, not mapped: map() makes a holey array, which structured clone writes and reads as sparse
    const tasks: ExecTask[] = []
    for (const item of items) tasks.push(item.task)
    // the balancer finds the task's Running under piscina's queue-options key (a symbol key: not cloned to the worker)
    const batch: ExecBatch & { [queueOptionsSymbol]: Running } = { tasks, progress: running.progress.buffer, [queueOptionsSymbol]: running }
    this.piscina
      .run(batch)
      .then(
        ({ results, trieNodeReads }) => {
          if (running.kept === 0) return
          this.trieNodeReads += trieNodeReads
          for (let i = 0; i < running.kept; i++) items[i].resolve(fromWire(results[i]))
        },
        (err: unknown) => {
          if (running.kept === 0) return
          // the calls taken back (before `early`, from `kept` on) are queued again already
          const own = items.slice(running.early, running.kept)
          if (running.runaway < 0 && !this.closed && this.diedWithRecycledWorker(running, err)) {
            // it waited behind (or ran beside) a runaway call in the worker that was terminated
            this.queue.splice(this.queueHead, 0, ...own)
            return
          }
          if (running.runaway < 0 || this.closed) {
            for (const item of own) item.reject(err)
            return
          }
          this.timeouts++
          items[running.runaway].reject(executionTimedOut(this.timeoutMs))
          // the others' results died with the worker: run them again (ahead of newer calls)
          const others = own.filter((item) => item !== items[running.runaway])
          if (others.length > 0) this.queue.splice(this.queueHead, 0, ...others)
        },
      )
      .finally(() => {
        if (running.kept > 0) observer?.onTaskFinished(items.length, performance.now() - startedAt)
        this.runningTasks.delete(running)
        this.leaveLane(running)
        this.spareProgress.push(running.progress)
        // with nothing running, no task can still fail with a terminated worker
        if (this.runningTasks.size === 0) this.recycledThreads.clear()
        // a lane whose long call just ended may run its next one
        if (this.heavy.size > 0) this.lookForLongCalls(Date.now())
        this.pump()
      })
  }

  private diedWithRecycledWorker(running: Running, err: unknown): boolean {
    if (!(err instanceof Error) || !err.message.startsWith(WORKER_EXITED)) return false
    const thread = running.progress.thread
    // a task the worker had not started yet has no thread: it was queued in the terminated worker
    return thread === 0 ? this.recycledThreads.size > 0 : this.recycledThreads.has(thread)
  }

  private armWatchdog(): void {
    if (this.watchdog !== undefined) return
    const every = Math.max(5, Math.min(100, Math.floor(this.timeoutMs / 10)))
    this.watchdog = setInterval(() => this.checkTimeouts(), every)
    this.watchdog.unref()
  }

  private checkTimeouts(): void {
    const now = Date.now()
    if (this.runningTasks.size === 0) {
      clearInterval(this.watchdog)
      this.watchdog = undefined
      this.activeWorkers = this.workers
      // lanes age out; any calls they hold can run now
      if (this.heavy.size > 0) {
        this.lookForLongCalls(now)
        this.pump()
      }
      return
    }
    for (const running of this.runningTasks) {
      if (running.runaway >= 0) continue
      const index = running.progress.current
      if (index < 0 || now - running.progress.currentSince < this.timeoutMs) continue
      running.runaway = index
      this.recycle(running.progress.thread)
    }
    const longCall = this.lookForLongCalls(now)
    if (!longCall) this.activeWorkers = this.workers
    else if (this.burstWorkers > 0) this.burst(this.activeWorkers === this.workers)
  }

  /**
   * Calls run long: queue again, ahead of newer calls, what would wait for them: the calls of their tasks
   * no worker has started, and those their tasks ran before them (their results go out with the task's;
   * the first answer of a call settles it); when the pool `grows` to dispatch for the burst workers too,
   * also the tasks no worker has claimed (they may wait in a busy worker's queue).
   */
  private burst(grows: boolean): void {
    const withdrawn: Pending[] = []
    const now = Date.now()
    for (const running of this.runningTasks) {
      const { items, progress } = running
      const current = progress.current
      // a lane's task holds only its client's calls: they would go back to the lane, to wait for it
      if (running.lane !== undefined) continue
      const long = runsLong(progress, now)
      // a claimed task on a worker not held up by a long call runs on as it is; a task no worker has
      // claimed yet is taken back once, as the pool grows (later it waits for the new thread)
      if (!long && (progress.thread !== 0 || !grows)) continue
      if (long && current > running.early) {
        for (let i = running.early; i < current; i++) withdrawn.push(items[i])
        this.calls -= current - running.early
        running.early = current
      }
      const kept = progress.withdraw(running.kept)
      if (kept === running.kept) continue
      for (let i = kept; i < running.kept; i++) withdrawn.push(items[i])
      // counted again when dispatched anew
      this.calls -= running.kept - kept
      running.kept = kept
      if (kept === 0) this.runningTasks.delete(running)
    }
    if (withdrawn.length === 0 && (!grows || this.queueHead === this.queue.length)) return
    if (grows) {
      this.bursts++
      this.activeWorkers = this.workers + this.burstWorkers
    }
    if (withdrawn.length > 0) this.queue.splice(this.queueHead, 0, ...withdrawn)
    this.pump()
  }

  /** Terminates a worker thread; piscina fails its tasks with WORKER_EXITED and starts a new one. */
  private recycle(threadId: number): void {
    this.recycledThreads.add(threadId)
    const thread = this.piscina.threads.find((t) => t.threadId === threadId)
    if (thread !== undefined) void thread.terminate()
  }

  /** Hands a new head's state diff to every worker (see StateReader.applyDiff). */
  publishStateDiff(diff: StateDiff): void {
    if (!this.closed) this.stateDiffs.postMessage(diff)
  }

  async close(): Promise<void> {
    this.closed = true
    this.stateDiffs.close()
    if (this.watchdog !== undefined) clearInterval(this.watchdog)
    for (let i = this.queueHead; i < this.queue.length; i++) this.queue[i].reject(serverError('call pool is closed'))
    for (const item of this.heavy.drain()) item.reject(serverError('call pool is closed'))
    this.queue = []
    this.queueHead = 0
    await this.piscina.close({ force: true })
  }
}
