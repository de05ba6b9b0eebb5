// Starts a node: the access options, the producer thread, the genesis of the data folder, then the rest
// (node-services.ts). The threads load their code side by side: the producer thread loads its modules
// while the main thread resolves the genesis, then opens the chain while the main thread loads the RPC
// modules. `keel start` calls startNode.

import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ProducerClient } from './chain/producer-client.js'
import type { ChainGenesis } from './chain/chain-genesis.js'
import type { ChainView } from './chain/view.js'
import type { KeelConfig } from './config/types.js'
import { createLogger } from './logging/logger.js'
import type { Logger } from './logging/logger.js'
import type { RunningNode } from './node-services.js'
import { accessSetup } from './rpc/access.js'
import { applyHeapGrowthPercent } from './util/heap-growth.js'
import { releaseSemiSpaceFlag } from './util/worker-heap.js'
import { memoryReducerAtStart, setMemoryReducer } from './util/memory-reducer.js'

export type { RunningNode } from './node-services.js'

function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
    return pkg.version
  } catch {
    return '0.0.0'
  }
}

export async function startNode(input: KeelConfig): Promise<RunningNode> {
  applyHeapGrowthPercent(input.heapGrowthPercent)
  releaseSemiSpaceFlag()
  const logger = createLogger(input.logLevel)
  return input.replica ? startReplica(input, logger) : startChain(input, logger)
}

/**
 * A replica: the producer's snapshot first when the data folder has no chain; and when its next block is
 * no longer in the stream, the node restarts in place (same port) on a new snapshot.
 */
async function startReplica(input: KeelConfig, logger: Logger): Promise<RunningNode> {
  const { bootstrapReplica, hasChain } = await import('./replication/bootstrap.js')
  // validated before the wait for a snapshot, so a bad access option fails the start at once
  accessSetup(input, { head: () => undefined })
  // with --genesis, a new replica starts from the genesis block instead (a stream that holds the whole chain)
  // snapshots restored since the process started (keel_replica_bootstraps_total)
  let bootstraps = 0
  if (input.genesis === undefined && !(await hasChain(input.dataDir))) {
    await bootstrapReplica(input, logger)
    bootstraps++
  }
  let current!: RunningNode
  let starting: Promise<RunningNode>
  let restarting: Promise<void> | undefined
  const rebootstrap = (reason: string): void => {
    restarting ??= (async () => {
      logger.warn('replica re-bootstrapping from a new snapshot: its next block is no longer in the block stream', { reason })
      // the follower can find the gap while the node is still starting
      const node = await starting
      await node.close()
      await bootstrapReplica(input, logger, { replace: true })
      bootstraps++
      starting = startChain({ ...input, port: node.port }, logger, { rebootstrap, bootstraps })
      current = await starting
    })().then(
      () => {
        restarting = undefined
      },
      (err: unknown) => {
        logger.error('replica could not re-bootstrap', { err })
        process.exit(1)
      },
    )
  }
  starting = startChain(input, logger, { rebootstrap, bootstraps })
  current = await starting
  return {
    get url() {
      return current.url
    },
    get port() {
      return current.port
    },
    get chainId() {
      return current.chainId
    },
    wsStats: () => current.wsStats(),
    close: async () => {
      await restarting
      await current.close()
    },
  }
}

interface ReplicaStart {
  /** restarts the node on a new snapshot */
  rebootstrap(reason: string): void
  bootstraps: number
}

async function startChain(input: KeelConfig, logger: Logger, replica?: ReplicaStart): Promise<RunningNode> {
  const headSource: { view?: ChainView } = {}
  // Validated before any thread starts, so a bad access option fails the start cleanly.
  const access = accessSetup(input, { head: () => headSource.view?.head })
  let fatal: ((message: string) => void) | undefined
  // The producer keeps the code its bursts compiled through idle periods: its heap is set up without V8's
  // memory reducer; the threads started after it (the call workers) get the process's own setting back.
  const reducerAtStart = memoryReducerAtStart()
  if (!input.idleHeapShrink) setMemoryReducer(false)
  // a replica's chain thread follows the block stream in place of producing blocks
  const thread = input.replica ? new URL('./replication/replica-thread.js', import.meta.url) : undefined
  const producer = new ProducerClient((message, needsSnapshot) => {
    if (needsSnapshot && replica !== undefined) return replica.rebootstrap(message)
    logger.error(input.replica ? 'replica failed' : 'producer failed', { message })
    fatal?.(message)
  }, thread)
  if (!input.idleHeapShrink) void producer.online.then(() => setMemoryReducer(reducerAtStart))
  let chain: ChainGenesis
  try {
    // imported after the spawn: the genesis code loads @ethereumjs/util and LevelDB
    const { chainGenesis } = await import('./chain/chain-genesis.js')
    chain = await chainGenesis(input)
  } catch (err) {
    await producer.discard()
    throw err
  }
  const { genesis, operatorAddress, created } = chain
  const config: KeelConfig = { ...input, chainId: genesis.config.chainId }
  producer.start({ config, genesis })
  // stdout: the few human lines scripts and tests parse; everything else is a JSON line on stderr.
  const log = (line: string) => {
    if (config.logLevel !== 'silent') process.stdout.write(`keel: ${line}\n`)
  }
  if (operatorAddress !== undefined) log(`operator address ${operatorAddress}${created ? ` (new key saved in ${join(config.dataDir, 'operator.key')})` : ''}`)

  const [{ serveChain }, ready] = await Promise.all([import('./node-services.js'), producer.ready])
  const node = await serveChain({ config, genesis, producer, ready, access, headSource, version: packageVersion(), log, logger, bootstraps: replica?.bootstraps })
  fatal = () => {
    void node.close().finally(() => process.exit(1))
  }
  return node
}
