// Ties the scrape-time metrics to the running node's components: each gauge reads its value from the
// component that owns it when Prometheus scrapes, so none of them costs anything between scrapes.

import type { HeadInfo } from '../chain/messages.js'
import type { ExecPoolObserver } from '../exec/pool.js'
import type { CallPoolStats } from './call-pool.js'
import type { Metrics } from './metrics.js'
import type { WsSources } from './ws.js'
import type { HttpSources } from './http.js'
import type { ThreadHeap } from '../util/thread-heap.js'

export interface NodeSources {
  head(): HeadInfo
  txpoolStatus(): Promise<{ pending: number; queued: number }>
  /** Structurally ProducerClient.submits: totals kept by the client, read at scrape time. */
  producerSubmits: { readonly batches: number; readonly items: number }
  /** Structurally ExecPool: its stats are read at scrape time, its observer is set to the metrics. */
  callPool: { readonly stats: CallPoolStats; observer: ExecPoolObserver | undefined }
  ws?: WsSources
  http?: HttpSources
  /** each thread's V8 heap (util/thread-heap.ts) */
  threadHeaps?: () => ThreadHeap[]
  /** The LevelDB folder of the chain. */
  databaseFolder: string
  /** LevelDB's own estimate of the memory it holds (memtables and block cache) */
  databaseMemory?: () => number
  /** the lowest block from which the explorer's indexes are complete (indexes/progress.ts) */
  indexedFrom?: () => Promise<bigint | undefined>
}

/** A scrape asks the producer thread once for both txpool gauges, and gives up after this long. */
const TXPOOL_STATUS_TIMEOUT_MS = 2_000
const SAME_SCRAPE_MS = 250

export function bindNodeSources(metrics: Metrics, sources: NodeSources): void {
  metrics.chain.headNumber.addCollect((g) => g.set(Number(sources.head().number)))
  metrics.chain.headAge.addCollect((g) => g.set(Date.now() / 1000 - Number(sources.head().timestamp)))

  let last: { at: number; status: Promise<{ pending: number; queued: number }> } | undefined
  const txpoolStatus = () => {
    const now = Date.now()
    if (last === undefined || now - last.at > SAME_SCRAPE_MS) last = { at: now, status: withTimeout(sources.txpoolStatus()) }
    return last.status
  }
  metrics.txpool.pending.addCollect(async (g) => g.set((await txpoolStatus()).pending))
  metrics.txpool.queued.addCollect(async (g) => g.set((await txpoolStatus()).queued))
  metrics.txpool.bindSubmits(sources.producerSubmits)

  const pool = sources.callPool
  pool.observer = metrics.callPool
  metrics.callPool.bind(() => pool.stats)
  if (sources.ws !== undefined) metrics.ws.bind(sources.ws)
  if (sources.http !== undefined) metrics.http.bind(sources.http)
  const heaps = sources.threadHeaps
  if (heaps !== undefined) {
    const { heapUsed, heapTotal, heapLive, external } = metrics.threads
    for (const [gauge, figure] of [[heapUsed, 'usedBytes'], [heapTotal, 'totalBytes'], [heapLive, 'liveBytes'], [external, 'externalBytes']] as const) {
      gauge.addCollect((g) => {
        g.reset()
        for (const h of heaps()) {
          const value = h[figure]
          // no full collection yet: no live size to report
          if (value !== undefined) g.set({ thread: h.thread }, value)
        }
      })
    }
  }
  metrics.storage.bindDatabaseFolder(sources.databaseFolder)
  if (sources.databaseMemory !== undefined) metrics.storage.bindDatabaseMemory(sources.databaseMemory)
  if (sources.indexedFrom !== undefined) metrics.indexes.bindCompleteFrom(sources.indexedFrom)
}

function withTimeout<T>(promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('producer did not answer in time')), TXPOOL_STATUS_TIMEOUT_MS)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}
