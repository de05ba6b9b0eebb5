// Assembles a running node: genesis, the producer thread, the read view, the call pool, the RPC
// methods and the uWebSockets.js server. `keel start` calls startNode.

import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { startAdminSocket } from './admin/admin-socket.js'
import { ProducerClient } from './chain/producer-client.js'
import { resolveGenesis, validateGenesis } from './chain/genesis.js'
import { openChainLevel } from './chain/store/level.js'
import { Keys } from './chain/store/schema.js'
import { EIP7825_TX_GAS_CAP } from './chain/tx-intake.js'
import { ChainView } from './chain/view.js'
import type { KeelConfig } from './config/types.js'
import { createChainCommon } from './evm/common.js'
import type { GethGenesis } from './evm/common.js'
import { loadFastCrypto } from './evm/crypto.js'
import { ExecPool } from './exec/pool.js'
import { StateReader } from './exec/state-reader.js'
import { Dispatcher } from './rpc/dispatch.js'
import { FilterRegistry } from './rpc/filters.js'
import { defaultTransportLimits } from './rpc/limits.js'
import type { TransportLimits } from './rpc/limits.js'
import { blockMethods } from './rpc/methods/eth-blocks.js'
import { execMethods } from './rpc/methods/eth-exec.js'
import { feeMethods } from './rpc/methods/eth-fees.js'
import { fillMethods } from './rpc/methods/eth-fill.js'
import { TipOracle } from './rpc/methods/tip-oracle.js'
import { logMethods } from './rpc/methods/eth-logs.js'
import { sendMethods } from './rpc/methods/eth-send.js'
import { stateMethods } from './rpc/methods/eth-state.js'
import type { MethodDeps } from './rpc/methods/deps.js'
import { txpoolMethods } from './rpc/methods/txpool.js'
import { web3NetMethods } from './rpc/methods/web3-net.js'
import { RpcServer } from './rpc/server.js'
import { accessSetup } from './rpc/access.js'
import type { WsTransportStats } from './rpc/server.js'
import { subscribeMethods } from './rpc/methods/eth-subscribe.js'
import { pendingTransactionJson } from './rpc/pending-tx-json.js'
import { SubscriptionManager } from './rpc/subscriptions.js'
import { createLogger } from './logging/logger.js'
import { applyHeapGrowthPercent } from './util/heap-growth.js'
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

const ETHER = 10n ** 18n

function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
    return pkg.version
  } catch {
    return '0.0.0'
  }
}

/** The genesis of this data folder: the one stored with the chain wins over anything passed again. */
async function chainGenesis(config: KeelConfig): Promise<{ genesis: GethGenesis; operatorAddress?: string; created: boolean }> {
  const level = await openChainLevel(join(config.dataDir, 'chain'))
  try {
    const stored = await level.get(Keys.meta('config'))
    if (stored !== undefined) {
      const genesis = validateGenesis(JSON.parse(new TextDecoder().decode(stored)), `stored in ${config.dataDir}`)
      if (config.genesis !== undefined) {
        const given = resolveGenesis({ dataDir: config.dataDir, genesisFile: config.genesis, dev: false, chainId: config.chainId }).genesis
        if (JSON.stringify(given.config) !== JSON.stringify(genesis.config) || JSON.stringify(given.alloc) !== JSON.stringify(genesis.alloc)) {
          throw new Error(`${config.dataDir} already holds a chain with a different genesis; use a new --data-dir to start another chain`)
        }
      }
      return { genesis, created: false }
    }
  } finally {
    await level.close()
  }
  const resolved = resolveGenesis({ dataDir: config.dataDir, genesisFile: config.genesis, dev: config.dev, chainId: config.chainId })
  return { genesis: resolved.genesis, operatorAddress: resolved.operatorAddress, created: resolved.createdOperatorKey }
}

export async function startNode(input: KeelConfig): Promise<RunningNode> {
  applyHeapGrowthPercent(input.heapGrowthPercent)
  const { genesis, operatorAddress, created } = await chainGenesis(input)
  const config: KeelConfig = { ...input, chainId: genesis.config.chainId }
  // Validated before any thread starts, so a bad access option fails the start cleanly.
  const access = accessSetup(config, { head: () => view.head })
  // stdout: the few human lines scripts and tests parse; everything else is a JSON line on stderr.
  const log = (line: string) => {
    if (config.logLevel !== 'silent') process.stdout.write(`keel: ${line}\n`)
  }
  const logger = createLogger(config.logLevel)
  if (operatorAddress !== undefined) log(`operator address ${operatorAddress}${created ? ` (new key saved in ${join(config.dataDir, 'operator.key')})` : ''}`)

  const crypto = await loadFastCrypto()
  const common = createChainCommon(genesis, crypto.customCrypto)

  let fatal: ((message: string) => void) | undefined
  const producer = new ProducerClient(config, genesis, (message) => {
    logger.error('producer failed', { message })
    fatal?.(message)
  })
  const ready = await producer.ready
  const level = await openChainLevel(join(config.dataDir, 'chain'), { createIfMissing: false })
  const view = new ChainView(level, common, crypto.keccak256, ready.head, ready.genesisHash, config.stateHistory)
  producer.onBlock((event) => view.applyBlock(event))
  // 'latest' stays warm: the block's state diff goes to the main thread's reader and every call worker
  const headState = new StateReader(common, level, { nodeCacheBytes: 16 << 20, slots: 32_000 })
  const filters = new FilterRegistry(config.filterTimeoutSeconds * 1000)
  producer.onPendingTx((hashes) => filters.onPendingTransactions(hashes))
  const executor = new ExecPool(
    { dataDir: config.dataDir, genesis, limits: { gasCap: config.rpcGasCap, timeoutMs: config.rpcEvmTimeoutMs } },
    { workers: config.callWorkers },
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
    clientVersion: `Keel/v${packageVersion()}/${process.platform}-${process.arch}/node${process.versions.node}`,
    intake: {
      common,
      chainId: BigInt(config.chainId),
      blockGasLimit: ready.head.gasLimit,
      txGasCap: EIP7825_TX_GAS_CAP,
      maxTxSize: config.txMaxSize,
      txFeeCapWei: BigInt(Math.round(config.rpcTxFeeCap * 1e6)) * (ETHER / 1_000_000n),
    },
  }
  producer.onBlock((event) => {
    deps.intake.blockGasLimit = event.head.gasLimit
  })

  const dispatcher = new Dispatcher()
  const metrics = config.metrics
    ? createMetrics({ isKnownMethod: (method) => dispatcher.has(method), version: packageVersion(), chainId: config.chainId })
    : null
  producer.onBlock((event) => {
    metrics?.chain.onBlock(event)
    if (logger.isEnabled('debug')) {
      logger.debug('block sealed', { number: event.head.number, hash: event.head.hash, txs: event.txHashes.length, gasUsed: event.head.gasUsed, ...event.stats })
    }
  })
  dispatcher.registerAll(web3NetMethods(deps))
  dispatcher.registerAll(stateMethods(deps, headState))
  const tips = new TipOracle(view)
  dispatcher.registerAll(feeMethods(deps, tips))
  dispatcher.registerAll(blockMethods(deps))
  dispatcher.registerAll(execMethods(deps))
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
  view.onHead((block) => subscriptions.publishBlock(block))
  producer.onPendingTx((hashes) => subscriptions.publishPendingTransactions(hashes))

  const limits: TransportLimits = {
    ...defaultTransportLimits,
    httpBodyLimit: config.httpBodyLimit,
    batchRequestLimit: config.batchRequestLimit,
    batchResponseMaxSize: config.batchResponseMaxSize,
    wsMessageLimit: config.wsMessageLimit,
    wsSendBufferLimit: config.wsSendBufferLimit,
  }
  const server = new RpcServer(observedEnvelope(dispatcher, limits, { rateLimiter: access.rateLimiter }, metrics, logger), {
    ...access.serverOptions,
    httpClientIp: access.rateLimiter.active || logger.isEnabled('debug'),
    host: config.host,
    port: config.port,
    limits,
    wsMaxConnectionsPerIp: config.wsMaxConnectionsPerIp,
    wsIdleTimeoutSeconds: config.wsIdleTimeoutSeconds,
    onWsClose: (session) => subscriptions.closeSession(session),
  })
  const port = await server.listen()
  const admin = await startAdminSocket(level, config.dataDir, (message) => logger.warn(message))
  const host = config.host.includes(':') ? `[${config.host}]` : config.host
  const url = `${access.scheme}://${host}:${port}`
  let metricsServer: MetricsServer | undefined
  if (metrics !== null) {
    bindNodeSources(metrics, {
      head: () => view.head,
      txpoolStatus: () => producer.query({ q: 'status' }),
      callPool: executor,
      ws: { transport: () => server.wsStats(), subscriptions: () => subscriptions.stats() },
      databaseFolder: join(config.dataDir, 'chain'),
    })
    if (access.rateLimiter !== undefined) metrics.rateLimit.observe(access.rateLimiter)
    metricsServer = await MetricsServer.start(metrics.register, config.metricsHost, config.metricsPort, logger)
    log(`metrics on ${metricsServer.url}`)
  }
  logger.info('chain ready', { chainId: config.chainId, head: ready.head.number, hardfork: ready.hardfork, genesis: ready.genesisHash })
  logger.info('listening', { url, metrics: metricsServer?.url })
  log(`listening on ${url}`)

  let closing: Promise<void> | undefined
  const close = (): Promise<void> => {
    closing ??= (async () => {
      // Readiness fails first, so a load balancer stops sending while in-flight requests are answered.
      access.health.startDraining()
      await server.drain(config.shutdownGraceSeconds * 1000)
      logger.info('shutting down')
      await server.close()
      await metricsServer?.close()
      await admin?.close()
      filters.close()
      await producer.shutdown()
      await executor.close()
      await level.close()
      logger.info('stopped')
    })()
    return closing
  }
  fatal = () => {
    void close().finally(() => process.exit(1))
  }
  const wsStats = () => ({ transport: server.wsStats(), subscriptions: subscriptions.stats() })
  return { url, port, chainId: config.chainId, wsStats, close }
}
