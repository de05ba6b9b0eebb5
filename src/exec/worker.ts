// Entry of a call-pool worker (piscina): opens the chain DB read-only-by-discipline (multithreading
// handle; the trie adapter refuses writes) and runs tasks with an ExecEngine.

import { join } from 'node:path'
import { workerData } from 'piscina'
import { createChainCommon } from '../evm/common.js'
import { loadFastCrypto } from '../evm/crypto.js'
import { openChainLevel } from '../chain/store/level.js'
import { ExecEngine } from './engine.js'
import type { ExecResult, ExecTask } from './types.js'
import type { ExecPoolInit } from './pool.js'

let engine: Promise<ExecEngine> | undefined

async function createEngine(): Promise<ExecEngine> {
  const init = workerData as ExecPoolInit
  const crypto = await loadFastCrypto()
  const common = createChainCommon(init.genesis, crypto.customCrypto)
  const level = await openChainLevel(join(init.dataDir, 'chain'), { createIfMissing: false, cacheSize: 16 << 20 })
  return new ExecEngine(common, level, init.limits)
}

/** One task is a batch of calls: a JSON-RPC batch of eth_calls costs one round trip to the pool. */
export default async function run(tasks: ExecTask[]): Promise<ExecResult[]> {
  engine ??= createEngine()
  const e = await engine
  const results: ExecResult[] = []
  for (const task of tasks) results.push(await e.run(task))
  return results
}
