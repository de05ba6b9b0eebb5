// The call pool's load balancer (piscina's `loadBalancer`): which worker thread gets a task. An idle one,
// else the least busy one that holds no lane's task and runs no long call: a task given to that worker
// would wait behind it. A lane's task counts from the moment it is given to a worker, before that worker
// has started it (then its progress does not name the thread yet).

import type { CallProgress } from './progress.js'

/** How long a call runs before the calls waiting behind it move to a burst worker (a call at the head takes well under 1 ms). */
export const LONG_CALL_MS = 250

/** Whether the task's running call (if one runs) has run LONG_CALL_MS by `now`. */
export function runsLong(progress: CallProgress, now: number): boolean {
  return progress.current >= 0 && now - progress.currentSince >= LONG_CALL_MS
}

/** A task the pool has handed piscina, as the balancer sees it. */
export interface HandedTask {
  readonly progress: CallProgress
  /** set when the task carries a client's lane (its calls may well run long) */
  readonly lane: unknown
  /** the thread the balancer gave it to; 0 until then */
  worker: number
}

/** piscina's view of a worker thread. */
export interface WorkerView {
  readonly id: number
  readonly currentUsage: number
}

/**
 * The worker for `task` (recorded in it), or null: piscina then keeps the task until a worker frees up,
 * and starts a thread while it has fewer than its maximum. `maxUsage`: tasks a worker holds at most.
 */
export function chooseWorker<W extends WorkerView>(task: HandedTask | null, workers: readonly W[], handed: Iterable<HandedTask>, maxUsage: number): W | null {
  const picked = leastBusy(workers, handed, maxUsage)
  if (picked !== null && task !== null) task.worker = picked.id
  return picked
}

function leastBusy<W extends WorkerView>(workers: readonly W[], handed: Iterable<HandedTask>, maxUsage: number): W | null {
  let candidate: W | null = null
  let usage = maxUsage
  let now = 0
  for (const worker of workers) {
    const busy = worker.currentUsage
    if (busy === 0) return worker
    if (busy >= usage) continue
    if (now === 0) now = Date.now()
    if (holdsUp(worker.id, handed, now)) continue
    candidate = worker
    usage = busy
  }
  return candidate
}

/** Whether the thread holds a lane's task (running or not started yet) or runs a long call. */
function holdsUp(threadId: number, handed: Iterable<HandedTask>, now: number): boolean {
  for (const task of handed) {
    if (task.worker === threadId && (task.lane !== undefined || runsLong(task.progress, now))) return true
  }
  return false
}
