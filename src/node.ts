// Assembles a running node: genesis, the producer thread, the read view, the call pool, the RPC
// methods and the uWebSockets.js server. `keel start` calls startNode.

import { readFileSync } from 'node:fs'
import { join } from 'node:path'
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
import { Envelope } from './rpc/envelope.js'
import { FilterRegistry } from './rpc/filters.js'
import { defaultTransportLimits } from './rpc/limits.js'
import type { TransportLimits } from './rpc/limits.js'
import { blockMethods } from './rpc/methods/eth-blocks.js'
import { execMethods } from './rpc/methods/eth-exec.js'
import { feeMethods } from './rpc/methods/eth-fees.js'
import { logMethods } from './rpc/methods/eth-logs.js'
import { sendMethods } from './rpc/methods/eth-send.js'
import { stateMethods } from './rpc/methods/eth-state.js'
import type { MethodDeps } from './rpc/methods/deps.js'
import { txpoolMethods } from './rpc/methods/txpool.js'
import { web3NetMethods } from './rpc/methods/web3-net.js'
import { RpcServer } from './rpc/server.js'

export interface RunningNode {
  url: string
  port: number
  chainId: number
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
  const { genesis, operatorAddress, created } = await chainGenesis(input)
  const config: KeelConfig = { ...input, chainId: genesis.config.chainId }
  const log = (line: string) => {
    if (config.logLevel !== 'silent') process.stdout.write(`keel: ${line}\n`)
  }
  if (operatorAddress !== undefined) log(`operator address ${operatorAddress}${created ? ` (new key saved in ${join(config.dataDir, 'operator.key')})` : ''}`)

  const crypto = await loadFastCrypto()
  const common = createChainCommon(genesis, crypto.customCrypto)

  let fatal: ((message: string) => void) | undefined
  const producer = new ProducerClient(config, genesis, (message) => {
    process.stderr.write(`keel: ${message}\n`)
    fatal?.(message)
  })
  const ready = await producer.ready
  const level = await openChainLevel(join(config.dataDir, 'chain'), { createIfMissing: false })
  const view = new ChainView(level, common, crypto.keccak256, ready.head, ready.genesisHash)
  producer.onBlock((event) => view.applyBlock(event))
  const filters = new FilterRegistry(config.filterTimeoutSeconds * 1000)
  producer.onPendingTx((hashes) => filters.onPendingTransactions(hashes))
  const executor = new ExecPool(
    { dataDir: config.dataDir, genesis, limits: { gasCap: config.rpcGasCap, timeoutMs: config.rpcEvmTimeoutMs } },
    config.callWorkers,
  )

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
  dispatcher.registerAll(web3NetMethods(deps))
  dispatcher.registerAll(stateMethods(deps, new StateReader(common, level)))
  dispatcher.registerAll(feeMethods(deps))
  dispatcher.registerAll(blockMethods(deps))
  dispatcher.registerAll(execMethods(deps))
  dispatcher.registerAll(sendMethods(deps))
  dispatcher.registerAll(logMethods(deps))
  dispatcher.registerAll(txpoolMethods(deps))

  const limits: TransportLimits = {
    ...defaultTransportLimits,
    httpBodyLimit: config.httpBodyLimit,
    batchRequestLimit: config.batchRequestLimit,
    batchResponseMaxSize: config.batchResponseMaxSize,
  }
  const server = new RpcServer(new Envelope(dispatcher, limits), { host: config.host, port: config.port, limits })
  const port = await server.listen()
  const host = config.host.includes(':') ? `[${config.host}]` : config.host
  const url = `http://${host}:${port}`
  log(`chain id ${config.chainId}, head ${ready.head.number}, hardfork ${ready.hardfork}, genesis ${ready.genesisHash}`)
  log(`listening on ${url}`)

  let closing: Promise<void> | undefined
  const close = (): Promise<void> => {
    closing ??= (async () => {
      await server.close()
      filters.close()
      await producer.shutdown()
      await executor.close()
      await level.close()
    })()
    return closing
  }
  fatal = () => {
    void close().finally(() => process.exit(1))
  }
  return { url, port, chainId: config.chainId, close }
}
