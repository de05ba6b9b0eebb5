// The V8 heap of each thread of the process (main, producer, call workers), for the metrics: a thread's
// heap can only be read from inside it, so every worker posts its own figures on a broadcast channel
// every few seconds and the main thread keeps the latest of each. A thread that ended (a burst worker)
// drops out once its figures are stale.
//
// The heap in use rises between collections with garbage not yet collected, up to --heap-growth-percent
// past the live size before a full collection: a sawtooth that hides a slow leak. The heap in use read
// just after the thread's last full (mark-compact) collection is its live size then, which only a leak
// or a filling cache raises.

import { constants, PerformanceObserver } from 'node:perf_hooks'
import { getHeapStatistics } from 'node:v8'
import { BroadcastChannel, isMainThread, threadId } from 'node:worker_threads'

export interface ThreadHeap {
  /** main, producer, call-<threadId> */
  thread: string
  usedBytes: number
  totalBytes: number
  /** memory outside the V8 heap that this isolate's objects hold (ArrayBuffers' bytes, chiefly) */
  externalBytes: number
  /** heap in use just after the last full collection (undefined before the first) */
  liveBytes: number | undefined
  at: number
}

const CHANNEL = 'keel-thread-heap'
const REPORT_MS = 5_000
const STALE_MS = 3 * REPORT_MS

let liveBytes: number | undefined
let gcObserver: PerformanceObserver | undefined

/** Keeps liveBytes: the observer runs on the thread's event loop soon after each collection ends. */
function observeFullCollections(): void {
  if (gcObserver !== undefined) return
  gcObserver = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      // detail: on gc entries since Node 16, missing from @types/node 20's PerformanceEntry
      if ((entry as unknown as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) {
        liveBytes = getHeapStatistics().used_heap_size
        return
      }
    }
  })
  gcObserver.observe({ entryTypes: ['gc'] })
}

function own(thread: string): ThreadHeap {
  const stats = getHeapStatistics()
  // external_memory: in Node 20's getHeapStatistics, missing from @types/node 20
  const external = (stats as { external_memory?: number }).external_memory ?? 0
  return { thread, usedBytes: stats.used_heap_size, totalBytes: stats.total_heap_size, externalBytes: external, liveBytes, at: Date.now() }
}

/** In a worker thread: posts this thread's heap every REPORT_MS, without keeping the thread alive. */
export function reportThreadHeap(thread: string): void {
  observeFullCollections()
  const channel = new BroadcastChannel(CHANNEL)
  channel.unref()
  const timer = setInterval(() => channel.postMessage(own(thread)), REPORT_MS)
  timer.unref()
}

/** On the main thread: the latest heap figures of every thread, its own read at once. */
export class ThreadHeaps {
  private readonly latest = new Map<string, ThreadHeap>()
  private readonly channel = new BroadcastChannel(CHANNEL)

  constructor() {
    observeFullCollections()
    this.channel.unref()
    this.channel.onmessage = (event) => {
      const heap = (event as { data: ThreadHeap }).data
      this.latest.set(heap.thread, heap)
    }
  }

  current(): ThreadHeap[] {
    const now = Date.now()
    const out = [own(isMainThread ? 'main' : `thread-${threadId}`)]
    for (const [thread, heap] of this.latest) {
      if (now - heap.at > STALE_MS) this.latest.delete(thread)
      else out.push(heap)
    }
    return out
  }

  close(): void {
    this.channel.close()
  }
}
