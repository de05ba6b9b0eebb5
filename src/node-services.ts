// Everything of a running node above the producer thread: the read view, the head state, the call pool,
// the RPC methods, subscriptions, the uWebSockets.js server, the admin socket and metrics. node.ts loads
// this module while the producer thread starts, so that the two threads load their code side by side.

import { join } from 'node:path'
import { startAdminSocket } from './admin/admin-socket.js'
import type { ProducerClient, ProducerReady } from './chain/producer-client.js'
import { openChainLevel } from './chain/store/level.js'
import { indexedFrom } from './indexes/progress.js'
import { EIP7825_TX_GAS_CAP } from './chain/tx-intake.js'
import { startIntakeWarmUp } from './chain/intake-warm-up.js'
import { ChainView } from './chain/view.js'
import type { KeelConfig } from './config/types.js'
import { createChainCommon } from './evm/common.js'
import type { GethGenesis } from './evm/geth-genesis.js'
import { loadFastCrypto } from './evm/crypto.js'
import { ExecPool } from './exec/pool.js'
import { StateReader } from './exec/state-reader.js'
import type { Logger } from './logging/logger.js'
import { ThreadHeaps } from './util/thread-heap.js'
import { Dispatcher } from './rpc/dispatch.js'
import { LocalFilters } from './rpc/filters.js'
import type { FilterStore } from './rpc/filters.js'
import { FILTER_REDIS_TIMEOUT_MS, SharedFilters } from './rpc/shared-filters.js'
import { RedisFilterStore } from './shared/redis-filters.js'
import { defaultTransportLimits } from './rpc/limits.js'
import type { TransportLimits } from './rpc/limits.js'
import { blockMethods } from './rpc/methods/eth-blocks.js'
import { execMethods } from './rpc/methods/eth-exec.js'
import { traceMethods } from './rpc/methods/debug-trace.js'
import { otsMethods } from './rpc/methods/ots.js'
import { storageRangeMethods } from './rpc/methods/debug-storage.js'
import { debugRawMethods } from './rpc/methods/debug-raw.js'
import { feeMethods } from './rpc/methods/eth-fees.js'
import { fillMethods } from './rpc/methods/eth-fill.js'
import { TipOracle } from './rpc/methods/tip-oracle.js'
import { logMethods } from './rpc/methods/eth-logs.js'
import { sendMethods } from './rpc/methods/eth-send.js'
import { stateMethods } from './rpc/methods/eth-state.js'
import type { MethodDeps } from './rpc/methods/deps.js'
import { txpoolMethods } from './rpc/methods/txpool.js'
import { rpcModulesMethod } from './rpc/methods/rpc-modules.js'
import { web3NetMethods } from './rpc/methods/web3-net.js'
import { RpcServer } from './rpc/server.js'
import type { AccessSetup } from './rpc/access.js'
import { SharedRateLimiter } from './rpc/shared-ratelimit.js'
import type { WsTransportStats } from './rpc/server.js'
import { subscribeMethods } from './rpc/methods/eth-subscribe.js'
import { pendingTransactionJson } from './rpc/pending-tx-json.js'
import { PENDING_AWARE, pendingForwarder } from './rpc/pending-forward.js'
import { SubscriptionManager } from './rpc/subscriptions.js'
import { createMetrics } from './metrics/metrics.js'
import { observedEnvelope } from './metrics/metered-envelope.js'
import { MetricsServer } from './metrics/server.js'
import { bindNodeSources } from './metrics/sources.js'
import type { SubscriptionStats } from './rpc/subscriptions.js'

export interface RunningNode {
  url: string
  port: number
  chainId: number
  /** WebSocket connection and subscription counts (metrics, leak tests). */
  wsStats(): { transport: WsTransportStats; subscriptions: SubscriptionStats }
  close(): Promise<void>
}

/** What node.ts has set up before this module's part of the start. */
export interface ChainStart {
  config: KeelConfig
  genesis: GethGenesis
  producer: ProducerClient
  ready: ProducerReady
  access: AccessSetup
  /** the health checks read the head from here; set as soon as the view exists */
  headSource: { view?: ChainView }
  version: string
  /** one human line on stdout */
  log(line: string): void
  /** a replica: the snapshots it restored since the process started */
  bootstraps?: number
  logger: Logger
}

const ETHER = 10n ** 18n

export async function serveChain(start: ChainStart): Promise<RunningNode> {
  const { config, genesis, producer, ready, access, log, logger } = start
  const crypto = await loadFastCrypto()
  const common = createChainCommon(genesis, crypto.customCrypto)
  // the fork rules of the head's successor decode submitted transactions (a chain whose forks come by
  // block or time after genesis, an imported one)
  const followHead = (head: { number: bigint; timestamp: bigint }): void => {
    common.setHardforkBy({ blockNumber: head.number + 1n, timestamp: head.timestamp + 1n })
  }
  followHead(ready.head)
  producer.onBlock((event) => followHead(event.head))
  const level = await openChainLevel(join(config.dataDir, 'chain'), { createIfMissing: false })
  const view = new ChainView(level, common, crypto.keccak256, ready.head, ready.genesisHash, config.stateHistory)
  producer.onBlock((event) => view.applyBlock(event))
  start.headSource.view = view
  access.health.followStorage(() => producer.storageStatus)
  // logged once when writes stop and once when they resume, never once a block
  producer.onStorageStatus((status) => {
    if (!status.writable) logger.error('database cannot be written: sealing stopped, transactions refused until it can', { reason: status.reason })
    else logger.info('database writable again: sealing resumed')
  })
  if (config.replica) access.health.followReplica({ status: () => producer.streamStatus, maxBlocksBehind: config.readyMaxBlocksBehind })
  // 'latest' stays warm: the block's state diff goes to the main thread's reader and every call worker
  const headState = new StateReader(common, level, { nodeCacheBytes: 16 << 20, slots: 32_000 })
  const filters = await openFilters(config, logger)
  producer.onPendingTx((hashes) => filters.onPendingTransactions(hashes))
  const executor = new ExecPool(
    { dataDir: config.dataDir, genesis, limits: { gasCap: config.rpcGasCap, timeoutMs: config.rpcEvmTimeoutMs } },
    // the operator's allow-listed services get no lane (heavy-clients.ts)
    { workers: config.callWorkers, burstWorkers: config.callBurstWorkers, laneExempt: (client) => client.startsWith('key:') || access.rateLimiter.allowListed(client) },
  )
  producer.onBlock((event) => {
    if (event.stateDiff === undefined) return
    headState.applyDiff(event.stateDiff)
    executor.publishStateDiff(event.stateDiff)
  })

  const deps: MethodDeps = {
    config,
    common,
    view,
    producer,
    executor,
    filters,
    keccak: crypto.keccak256,
    clientVersion: `Keel/v${start.version}/${process.platform}-${process.arch}/node${process.versions.node}`,
    intake: {
      common,
      chainId: BigInt(config.chainId),
      blockGasLimit: ready.head.gasLimit,
      txGasCap: EIP7825_TX_GAS_CAP,
      maxTxSize: config.txMaxSize,
      txFeeCapWei: BigInt(Math.round(config.rpcTxFeeCap * 1e6)) * (ETHER / 1_000_000n),
      allowUnprotectedTxs: config.rpcAllowUnprotectedTxs,
    },
    // an allow-listed API key is one client wherever it connects from, as for the rate limiter
    callClientOf: (ctx) => (access.rateLimiter.allowListedKey(ctx.apiKey) ? `key:${ctx.apiKey}` : ctx.clientIp),
  }
  producer.onBlock((event) => {
    deps.intake.blockGasLimit = event.head.gasLimit
  })

  const dispatcher = new Dispatcher()
  const metrics = config.metrics
    ? createMetrics({ isKnownMethod: (method) => dispatcher.has(method), version: start.version, chainId: config.chainId })
    : null
  if (metrics !== null) {
    if (start.bootstraps !== undefined) metrics.stream.bootstraps.inc(start.bootstraps)
    producer.onStreamStatus((status) => metrics.stream.status(status))
    producer.onStorageStatus((status) => metrics.storage.storageStatus(status))
    if (producer.streamStatus !== undefined) metrics.stream.status(producer.streamStatus)
  }
  producer.onBlock((event) => {
    metrics?.chain.onBlock(event)
    if (event.replicated !== undefined) metrics?.stream.applied(event.replicated)
    if (logger.isEnabled('debug')) {
      logger.debug('block sealed', { number: event.head.number, hash: event.head.hash, txs: event.txHashes.length, gasUsed: event.head.gasUsed, ...event.stats })
    }
  })
  dispatcher.registerAll(web3NetMethods(deps))
  dispatcher.registerAll(stateMethods(deps, headState))
  const tips = new TipOracle(view)
  dispatcher.registerAll(feeMethods(deps, tips))
  const blocks = blockMethods(deps)
  dispatcher.registerAll(blocks)
  dispatcher.registerAll(debugRawMethods(deps, blocks.eth_getRawTransactionByHash))
  dispatcher.registerAll(execMethods(deps))
  dispatcher.registerAll(traceMethods(deps))
  dispatcher.registerAll(otsMethods(deps, headState))
  dispatcher.registerAll(storageRangeMethods(deps))
  dispatcher.registerAll(fillMethods(deps, tips))
  dispatcher.registerAll(metrics === null ? sendMethods(deps) : metrics.txpool.instrument(sendMethods(deps)))
  dispatcher.registerAll(logMethods(deps))
  dispatcher.registerAll(txpoolMethods(deps))
  const subscriptions = new SubscriptionManager({
    keccak: crypto.keccak256,
    maxPerConnection: config.wsMaxSubscriptions,
    pendingByteLimit: config.wsSendBufferLimit,
    pendingTransactionJson: (hash) => pendingTransactionJson(producer, view, common, hash),
    onError: (err) => logger.error('subscription fan-out failed', { err }),
    onNotified: metrics === null ? undefined : (kind, count) => metrics.ws.notified(kind, count),
  })
  dispatcher.registerAll(subscribeMethods(subscriptions))
  dispatcher.registerAll(rpcModulesMethod(dispatcher))
  if (config.replica) {
    const forward = pendingForwarder(config.producerUrl!)
    for (const name of Object.keys(PENDING_AWARE)) dispatcher.wrap(name, (inner) => forward(name, inner))
  }
  view.onHead((block) => subscriptions.publishBlock(block))
  producer.onPendingTx((hashes) => subscriptions.publishPendingTransactions(hashes))
  // the view, caches, call workers and metrics listen from here: blocks the thread reported meanwhile reach them now
  producer.deliverBlocks()

  const limits: TransportLimits = {
    ...defaultTransportLimits,
    httpBodyLimit: config.httpBodyLimit,
    batchRequestLimit: config.batchRequestLimit,
    batchResponseMaxSize: config.batchResponseMaxSize,
    wsMessageLimit: config.wsMessageLimit,
    wsSendBufferLimit: config.wsSendBufferLimit,
  }
  if (access.rateLimiter instanceof SharedRateLimiter) {
    // once per outage, not per call: a down Redis would otherwise flood the log
    access.rateLimiter.on({
      fallback: (active, error) => {
        if (active) logger.warn('rate limits: Redis unavailable, limiting locally at rate / --rate-limit-nodes until it answers', { error: String((error as Error)?.message ?? error) })
        else logger.info('rate limits: Redis answers again, limits shared')
      },
    })
  }
  const server = new RpcServer(observedEnvelope(dispatcher, limits, { rateLimiter: access.rateLimiter }, metrics, logger), {
    ...access.serverOptions,
    httpClientIp: access.rateLimiter.active || logger.isEnabled('debug'),
    host: config.host,
    port: config.port,
    limits,
    wsMaxConnectionsPerIp: config.wsMaxConnectionsPerIp,
    wsMaxConnections: config.wsMaxConnections,
    httpMaxInFlight: config.httpMaxInFlight,
    wsIdleTimeoutSeconds: config.wsIdleTimeoutSeconds,
    onWsClose: (session) => subscriptions.closeSession(session),
  })
  await access.rateLimiter.start?.()
  const port = await server.listen()
  const admin = await startAdminSocket(level, config.dataDir, (message) => logger.warn(message))
  const host = config.host.includes(':') ? `[${config.host}]` : config.host
  const url = `${access.scheme}://${host}:${port}`
  let metricsServer: MetricsServer | undefined
  const threadHeaps = new ThreadHeaps()
  if (metrics !== null) {
    bindNodeSources(metrics, {
      head: () => view.head,
      txpoolStatus: () => producer.query({ q: 'status' }),
      producerSubmits: producer.submits,
      callPool: executor,
      ws: { transport: () => server.wsStats(), subscriptions: () => subscriptions.stats() },
      http: { stats: () => server.httpStats() },
      threadHeaps: () => threadHeaps.current(),
      databaseFolder: join(config.dataDir, 'chain'),
      // every thread's handle shares one LevelDB instance (multithreading): this one's figure is the process's
      databaseMemory: () => Number(level.getProperty('leveldb.approximate-memory-usage')),
      indexedFrom: () => indexedFrom(level),
    })
    if (access.rateLimiter !== undefined) metrics.rateLimit.observe(access.rateLimiter)
    metrics.filters.observe(filters)
    metricsServer = await MetricsServer.start(metrics.register, config.metricsHost, config.metricsPort, logger)
    log(`metrics on ${metricsServer.url}`)
  }
  logger.info('chain ready', { chainId: config.chainId, head: ready.head.number, hardfork: ready.hardfork, genesis: ready.genesisHash })
  logger.info('listening', { url, metrics: metricsServer?.url })
  log(`listening on ${url}`)
  const intakeWarmUp = startIntakeWarmUp(deps.intake, crypto.secp256k1.ecdsaSign)

  let closing: Promise<void> | undefined
  const close = (): Promise<void> => {
    closing ??= (async () => {
      // Readiness fails first, so a load balancer stops sending while in-flight requests are answered.
      access.health.startDraining()
      intakeWarmUp.stop()
      await server.drain(config.shutdownGraceSeconds * 1000)
      logger.info('shutting down')
      await server.close()
      await access.rateLimiter.close?.()
      await metricsServer?.close()
      threadHeaps.close()
      await admin?.close()
      await filters.close()
      await producer.shutdown()
      await executor.close()
      await level.close()
      logger.info('stopped')
    })()
    return closing
  }
  const wsStats = () => ({ transport: server.wsStats(), subscriptions: subscriptions.stats() })
  return { url, port, chainId: config.chainId, wsStats, close }
}

/** This node's filters, or with --redis-url the filters every node behind the load balancer shares. */
async function openFilters(config: KeelConfig, logger: Logger): Promise<(LocalFilters | SharedFilters) & FilterStore> {
  const timeoutMs = config.filterTimeoutSeconds * 1000
  const local = new LocalFilters(timeoutMs)
  if (config.redisUrl === undefined) return local
  const store = new RedisFilterStore(config.redisUrl, config.chainId, FILTER_REDIS_TIMEOUT_MS)
  // the producer's node admits every transaction: it alone feeds the shared pending-transaction filters
  const shared = new SharedFilters({ store, local, timeoutMs, publishPending: !config.replica })
  shared.on({
    // once per outage, not per call
    unavailable: (active, error) => {
      if (active) logger.warn('filters: Redis unavailable, shared filters answer "filter not found" and new filters are kept on this node until it answers', { error: String((error as Error)?.message ?? error) })
      else logger.info('filters: Redis answers again, new filters shared')
    },
  })
  await store.connect(1000)
  return shared
}
