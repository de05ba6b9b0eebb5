// Entry of a call-pool worker (piscina): opens the chain DB read-only-by-discipline (multithreading
// handle; the trie adapter refuses writes) and runs tasks with an ExecEngine.

import { join } from 'node:path'
import { paramsVM } from '@ethereumjs/vm'
import { BroadcastChannel, threadId } from 'node:worker_threads'
import { workerData } from 'piscina'
import type { StateDiff } from '../chain/state-diff.js'
import { createChainCommon } from '../evm/common.js'
import { loadFastCrypto } from '../evm/crypto.js'
import { installEvmSpeedups } from '../evm/speedups.js'
import { openChainLevel } from '../chain/store/level.js'
import { ExecEngine } from './engine.js'
import type { ExecBatch, ExecBatchResult, ExecPoolInit } from './pool.js'
import { CallProgress } from './progress.js'
import { toWire } from './result-wire.js'
import type { WireResult } from './result-wire.js'
import type { ExecBlock } from './types.js'
import { headExecBlock, IDLE_WARM_UP_CALLS, warmUpOnce, warmUpWhileIdle } from './warm-up.js'
import { reportThreadHeap } from '../util/thread-heap.js'
import { IDLE_COLLECTION_MS, IdleCollection } from '../util/idle-collection.js'

async function createEngine(): Promise<{ engine: ExecEngine; head: ExecBlock | undefined }> {
  const init = workerData as ExecPoolInit
  const crypto = await loadFastCrypto()
  await installEvmSpeedups()
  const common = createChainCommon(init.genesis, crypto.customCrypto, paramsVM)
  const level = await openChainLevel(join(init.dataDir, 'chain'), { createIfMissing: false, cacheSize: 8 << 20 })
  // a pool worker runs one call at a time and nothing else: it may block on LevelDB reads
  const engine = new ExecEngine(common, level, init.limits, { syncReads: true })
  const head = await headExecBlock(common, level)
  if (head !== undefined) await warmUpOnce(engine, head)
  return { engine, head }
}

// Top-level await: piscina reports a worker ready only once its module has loaded, so opening the
// database and loading the crypto never counts against the first call's time limit.
const { engine, head } = await createEngine()
reportThreadHeap(`call-${threadId}`)
const idleCollection = new IdleCollection(IDLE_COLLECTION_MS)

const diffs = new BroadcastChannel((workerData as ExecPoolInit).stateDiffChannel ?? 'keel-state-diff')
diffs.onmessage = (event) => engine.applyStateDiff((event as { data: StateDiff }).data)
diffs.unref()

/**
 * One piscina task is a batch of calls: a JSON-RPC batch of eth_calls costs one round trip to the pool.
 * Before each call the worker marks in `progress` which call is running and since when, so the pool's
 * watchdog can time each call from its own start and knows which one ran away.
 */
export default function run(batch: ExecBatch): Promise<ExecBatchResult> {
  batchesOpen++
  idleCollection.begin()
  // the pool hands a worker its next task while one runs (two per worker): they run one after the other
  const next = previous.then(() => runBatch(batch)).finally(() => {
    batchesOpen--
    idleCollection.end()
  })
  previous = next.catch(() => undefined)
  return next
}

let previous: Promise<unknown> = Promise.resolve()
/** batches handed to this worker and not finished: the idle warm-up waits while there are any */
let batchesOpen = 0

/** clients' calls this worker ran: as many as the warm-up's make it needless */
let clientCalls = 0

/** Resolves once no batch is open (the idle warm-up's calls never run beside a client's); false once clients' calls warmed the worker. */
async function idleAndStillCold(): Promise<boolean> {
  while (batchesOpen > 0) await previous
  return clientCalls < IDLE_WARM_UP_CALLS
}
if (head !== undefined) void warmUpWhileIdle(engine, head, idleAndStillCold)

async function runBatch(batch: ExecBatch): Promise<ExecBatchResult> {
  const progress = new CallProgress(batch.progress)
  // withdrawn while it waited behind a long call: another worker runs its calls (pool.ts)
  if (!progress.claim(threadId)) return { results: [], trieNodeReads: 0 }
  const readsBefore = engine.trieNodeReads
  const results: WireResult[] = []
  try {
    // the pool may take back the calls not started yet (a call before them ran long): the results stop there
    for (let i = 0; i < batch.tasks.length && progress.start(i); i++) {
      results.push(toWire(await engine.run(batch.tasks[i])))
      clientCalls++
    }
  } finally {
    progress.finish()
  }
  return { results, trieNodeReads: engine.trieNodeReads - readsBefore }
}
