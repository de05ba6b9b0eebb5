// The one table of every setting: its KeelConfig field, CLI flag, environment variable, type, default,
// accepted range and help line. The loader, the validator and `keel --help` are all driven by it.
// Naming rule: flag = the field in kebab-case (--block-time), variable = KEEL_ + SCREAMING_SNAKE (KEEL_BLOCK_TIME).

import type { KeelConfig } from './types.js'
import { MAX_GAS_LIMIT } from '../chain/gas-limit.js'

export type OptionKey = keyof KeelConfig

export type OptionType = 'string' | 'path' | 'host' | 'int' | 'number' | 'bigint' | 'bool' | 'enum'

export type OptionGroup =
  | 'Node'
  | 'Block production'
  | 'Transaction pool'
  | 'Execution'
  | 'Transport limits'
  | 'Logs and filters'
  | 'WebSocket'
  | 'Access'
  | 'Replication'
  | 'Metrics'

interface OptionBase<K extends OptionKey> {
  /** Flag name without the leading dashes, e.g. 'data-dir' for --data-dir. */
  flag: string
  /** Environment variable, e.g. KEEL_DATA_DIR. */
  env: string
  group: OptionGroup
  /** Placeholder shown in the help after the flag, e.g. DIR, N, SECONDS. */
  metavar: string
  help: string
  default: KeelConfig[K]
  /** Help text for the default when the value alone would mislead (e.g. a derived default). */
  defaultText?: string
}

interface NumericOption<K extends OptionKey> extends OptionBase<K> {
  type: 'int' | 'number'
  min: number
  max: number
}

interface BigintOption<K extends OptionKey> extends OptionBase<K> {
  type: 'bigint'
  min: bigint
  max: bigint
}

interface EnumOption<K extends OptionKey> extends OptionBase<K> {
  type: 'enum'
  values: readonly string[]
}

interface PlainOption<K extends OptionKey> extends OptionBase<K> {
  type: 'string' | 'path' | 'host' | 'bool'
  /** The option may be left unset (its default is undefined). */
  optional?: true
}

export type OptionSpec<K extends OptionKey = OptionKey> =
  | NumericOption<K>
  | BigintOption<K>
  | EnumOption<K>
  | PlainOption<K>

/** An option definition together with the KeelConfig field it fills. */
export type Option = { [K in OptionKey]: OptionSpec<K> & { key: K } }[OptionKey]

const UINT64_MAX = (1n << 64n) - 1n
const DAY = 86_400
const MiB = 1024 * 1024

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const

// A mapped type over KeelConfig makes the compiler reject a field without an entry here.
const TABLE: { [K in OptionKey]: OptionSpec<K> } = {
  dataDir: {
    flag: 'data-dir', env: 'KEEL_DATA_DIR', group: 'Node', type: 'path', metavar: 'DIR',
    default: './data', help: 'folder holding the chain database, the operator key and the persisted txpool',
  },
  host: {
    flag: 'host', env: 'KEEL_HOST', group: 'Node', type: 'host', metavar: 'ADDR',
    default: '127.0.0.1', help: 'interface the HTTP + WebSocket server listens on (0.0.0.0 = all)',
  },
  port: {
    flag: 'port', env: 'KEEL_PORT', group: 'Node', type: 'int', metavar: 'N', min: 0, max: 65_535,
    default: 8545, help: 'TCP port of the HTTP + WebSocket server (0 = any free port)',
  },
  genesis: {
    flag: 'genesis', env: 'KEEL_GENESIS', group: 'Node', type: 'path', metavar: 'FILE', optional: true,
    default: undefined, defaultText: 'built-in', help: 'geth-format genesis.json used when the data folder is new',
  },
  dev: {
    flag: 'dev', env: 'KEEL_DEV', group: 'Node', type: 'bool', metavar: '',
    default: false, help: 'development mode: prefunded well-known test accounts',
  },
  chainId: {
    flag: 'chain-id', env: 'KEEL_CHAIN_ID', group: 'Node', type: 'int', metavar: 'N',
    min: 1, max: Number.MAX_SAFE_INTEGER, default: 24_589, help: 'chain id (EIP-155) of the chain',
  },
  logLevel: {
    flag: 'log-level', env: 'KEEL_LOG_LEVEL', group: 'Node', type: 'enum', metavar: 'LEVEL', values: LOG_LEVELS,
    default: 'info', help: `log verbosity: ${LOG_LEVELS.join(', ')}`,
  },

  heapGrowthPercent: {
    flag: 'heap-growth-percent', env: 'KEEL_HEAP_GROWTH_PERCENT', group: 'Node', type: 'int', metavar: 'PERCENT',
    min: 0, max: 1000, default: 50,
    help: 'growth of a thread\'s V8 old generation past its live size before a full collection (0 = V8\'s own: up to 300%)',
  },
  idleHeapShrink: {
    flag: 'idle-heap-shrink', env: 'KEEL_IDLE_HEAP_SHRINK', group: 'Node', type: 'bool', metavar: '',
    default: false, help: 'let V8 shrink the block producer\'s heap when it goes idle (less memory at rest; its next burst compiles its code again)',
  },

  stateHistory: {
    flag: 'state-history', env: 'KEEL_STATE_HISTORY', group: 'Node', type: 'int', metavar: 'BLOCKS',
    min: 0, max: Number.MAX_SAFE_INTEGER, default: 0, defaultText: '0 (archive)',
    help: 'keep the state of only this many recent blocks and delete older trie nodes (0 = archive; else at least 128)',
  },

  minFreeDisk: {
    flag: 'min-free-disk', env: 'KEEL_MIN_FREE_DISK', group: 'Node', type: 'int', metavar: 'MIB',
    min: 0, max: 1_048_576, default: 256,
    help: 'free space (MiB) kept on the data folder\'s disk: below it sealing stops and transactions are refused until space returns (0 = no check)',
  },

  blockTime: {
    flag: 'block-time', env: 'KEEL_BLOCK_TIME', group: 'Block production', type: 'number', metavar: 'SECONDS',
    min: 0, max: DAY, default: 1,
    help: 'seconds between sealed blocks, fractions allowed (0 = seal a block for each arriving batch)',
  },
  emptyBlockPeriod: {
    flag: 'empty-block-period', env: 'KEEL_EMPTY_BLOCK_PERIOD', group: 'Block production', type: 'number',
    metavar: 'SECONDS', min: 0, max: DAY, default: 1, defaultText: 'same as --block-time',
    help: 'when idle, seal an empty block only every this many seconds (0 = never seal empty blocks)',
  },

  blockGasLimit: {
    flag: 'block-gas-limit', env: 'KEEL_BLOCK_GAS_LIMIT', group: 'Block production', type: 'bigint', metavar: 'GAS',
    min: 0n, max: MAX_GAS_LIMIT, default: 0n, defaultText: "0 (keep the chain's: the genesis gas limit)",
    help: "gas limit the producer moves its blocks toward, by at most 1/1024 of the parent's a block, as geth's --miner.gaslimit (0 = keep the parent's)",
  },

  noSeal: {
    flag: 'no-seal', env: 'KEEL_NO_SEAL', group: 'Block production', type: 'bool', metavar: '',
    default: false,
    help: 'serve the chain without sealing blocks: submitted transactions are checked and pooled, none is mined (an imported chain under inspection, a conformance run)',
  },

  txpoolMaxSlots: {
    flag: 'txpool-max-slots', env: 'KEEL_TXPOOL_MAX_SLOTS', group: 'Transaction pool', type: 'int', metavar: 'N',
    min: 1, max: 10_000_000, default: 5120, help: 'most transactions the pool holds in total',
  },
  txpoolMaxQueuedPerAccount: {
    flag: 'txpool-max-queued-per-account', env: 'KEEL_TXPOOL_MAX_QUEUED_PER_ACCOUNT', group: 'Transaction pool',
    type: 'int', metavar: 'N', min: 1, max: 10_000_000, default: 64,
    help: 'most future-nonce (queued) transactions per sender',
  },
  txpoolMaxPendingPerAccount: {
    flag: 'txpool-max-pending-per-account', env: 'KEEL_TXPOOL_MAX_PENDING_PER_ACCOUNT', group: 'Transaction pool',
    type: 'int', metavar: 'N', min: 1, max: 10_000_000, default: 1024,
    help: 'most executable (pending) transactions per sender',
  },
  txpoolPriceBumpPercent: {
    flag: 'txpool-price-bump-percent', env: 'KEEL_TXPOOL_PRICE_BUMP_PERCENT', group: 'Transaction pool', type: 'int',
    metavar: 'PERCENT', min: 1, max: 1000, default: 10,
    help: 'fee increase, in percent, a replacement transaction needs over the one it replaces',
  },
  txpoolLifetimeSeconds: {
    flag: 'txpool-lifetime-seconds', env: 'KEEL_TXPOOL_LIFETIME_SECONDS', group: 'Transaction pool', type: 'int', metavar: 'SECONDS',
    min: 1, max: 365 * DAY, default: 10_800, help: 'how long a queued transaction may wait before it is dropped',
  },
  rpcTxFeeCap: {
    flag: 'rpc-tx-fee-cap', env: 'KEEL_RPC_TX_FEE_CAP', group: 'Transaction pool', type: 'number', metavar: 'ETHER',
    min: 0, max: 1e12, default: 1,
    help: 'highest fee (gas limit x fee cap, in ether) eth_sendRawTransaction accepts (0 = no cap)',
  },
  rpcAllowUnprotectedTxs: {
    flag: 'rpc-allow-unprotected-txs', env: 'KEEL_RPC_ALLOW_UNPROTECTED_TXS', group: 'Transaction pool', type: 'bool', metavar: '',
    default: false,
    help: 'accept pre-EIP-155 legacy transactions (no chain id: replayable anywhere), for keyless deployments',
  },
  txMaxSize: {
    flag: 'tx-max-size', env: 'KEEL_TX_MAX_SIZE', group: 'Transaction pool', type: 'int', metavar: 'BYTES',
    min: 1024, max: 64 * MiB, default: 131_072, help: 'largest encoded transaction accepted',
  },

  rpcGasCap: {
    flag: 'rpc-gas-cap', env: 'KEEL_RPC_GAS_CAP', group: 'Execution', type: 'bigint', metavar: 'GAS',
    min: 21_000n, max: UINT64_MAX, default: 50_000_000n, help: 'gas limit of eth_call and eth_estimateGas',
  },
  rpcEvmTimeoutMs: {
    flag: 'rpc-evm-timeout-ms', env: 'KEEL_RPC_EVM_TIMEOUT_MS', group: 'Execution', type: 'int', metavar: 'MS',
    min: 1, max: 3_600_000, default: 5000, help: 'time limit of one eth_call / eth_estimateGas, in milliseconds',
  },
  callWorkers: {
    flag: 'call-workers', env: 'KEEL_CALL_WORKERS', group: 'Execution', type: 'int', metavar: 'N',
    min: 0, max: 256, default: 0, defaultText: '0 (one per core but one)', help: 'threads running eth_call, eth_estimateGas and eth_createAccessList (0 = one per core but one, at least one)',
  },
  callBurstWorkers: {
    flag: 'call-burst-workers', env: 'KEEL_CALL_BURST_WORKERS', group: 'Execution', type: 'int', metavar: 'N',
    min: 0, max: 256, default: 1, help: 'threads added while a call has run 250 ms and others wait behind it; each leaves after 30 s idle (0 = never)',
  },

  httpBodyLimit: {
    flag: 'http-body-limit', env: 'KEEL_HTTP_BODY_LIMIT', group: 'Transport limits', type: 'int', metavar: 'BYTES',
    min: 1024, max: 1024 * MiB, default: 5 * MiB, help: 'largest HTTP request body (larger: HTTP 413)',
  },
  httpMaxInFlight: {
    flag: 'http-max-in-flight', env: 'KEEL_HTTP_MAX_IN_FLIGHT', group: 'Transport limits', type: 'int', metavar: 'N',
    min: 0, max: 10_000_000, default: 2048,
    help: 'HTTP requests being read or answered at once, from every address (more: HTTP 503; 0 = unlimited)',
  },
  batchRequestLimit: {
    flag: 'batch-request-limit', env: 'KEEL_BATCH_REQUEST_LIMIT', group: 'Transport limits', type: 'int',
    metavar: 'N', min: 1, max: 1_000_000, default: 1000, help: 'most requests in one JSON-RPC batch',
  },
  batchResponseMaxSize: {
    flag: 'batch-response-max-size', env: 'KEEL_BATCH_RESPONSE_MAX_SIZE', group: 'Transport limits', type: 'int',
    metavar: 'BYTES', min: 1024, max: 2 ** 31 - 1, default: 25_000_000, help: 'largest JSON-RPC batch response',
  },

  logsMaxBlockRange: {
    flag: 'logs-max-block-range', env: 'KEEL_LOGS_MAX_BLOCK_RANGE', group: 'Logs and filters', type: 'int',
    metavar: 'BLOCKS', min: 1, max: Number.MAX_SAFE_INTEGER, default: 10_000,
    help: 'widest block range of one eth_getLogs query',
  },
  logsMaxResults: {
    flag: 'logs-max-results', env: 'KEEL_LOGS_MAX_RESULTS', group: 'Logs and filters', type: 'int', metavar: 'N',
    min: 1, max: 10_000_000, default: 10_000, help: 'most logs one eth_getLogs query returns',
  },
  filterTimeoutSeconds: {
    flag: 'filter-timeout-seconds', env: 'KEEL_FILTER_TIMEOUT_SECONDS', group: 'Logs and filters', type: 'int', metavar: 'SECONDS',
    min: 1, max: DAY, default: 300, help: 'a polled filter not polled for this long is removed',
  },

  wsMaxSubscriptions: {
    flag: 'ws-max-subscriptions', env: 'KEEL_WS_MAX_SUBSCRIPTIONS', group: 'WebSocket', type: 'int', metavar: 'N',
    min: 1, max: 1_000_000, default: 1024, help: 'subscriptions one WebSocket connection may hold (reth: 1024)',
  },
  wsMaxConnectionsPerIp: {
    flag: 'ws-max-connections-per-ip', env: 'KEEL_WS_MAX_CONNECTIONS_PER_IP', group: 'WebSocket', type: 'int', metavar: 'N',
    min: 0, max: 1_000_000, default: 256, help: 'open WebSocket connections per client IP (0 = unlimited)',
  },
  wsMaxConnections: {
    flag: 'ws-max-connections', env: 'KEEL_WS_MAX_CONNECTIONS', group: 'WebSocket', type: 'int', metavar: 'N',
    min: 0, max: 10_000_000, default: 10_000,
    help: 'open WebSocket connections in all, from every address (more: HTTP 503 at the upgrade; 0 = unlimited)',
  },
  wsMessageLimit: {
    flag: 'ws-message-limit', env: 'KEEL_WS_MESSAGE_LIMIT', group: 'WebSocket', type: 'int', metavar: 'BYTES',
    min: 1024, max: 1024 * MiB, default: 32 * MiB, help: 'largest WebSocket message accepted (geth: 32 MiB)',
  },
  wsSendBufferLimit: {
    flag: 'ws-send-buffer-limit', env: 'KEEL_WS_SEND_BUFFER_LIMIT', group: 'WebSocket', type: 'int', metavar: 'BYTES',
    min: 64 * 1024, max: 1024 * MiB, default: 16 * MiB,
    help: 'a client whose unsent data passes this is closed as a slow consumer',
  },
  wsIdleTimeoutSeconds: {
    flag: 'ws-idle-timeout-seconds', env: 'KEEL_WS_IDLE_TIMEOUT_SECONDS', group: 'WebSocket', type: 'int', metavar: 'SECONDS',
    min: 8, max: DAY, default: 120, help: 'a WebSocket silent this long (pings unanswered) is closed',
  },

  rateLimit: {
    flag: 'rate-limit', env: 'KEEL_RATE_LIMIT', group: 'Access', type: 'number', metavar: 'N', min: 0, max: 1e9,
    default: undefined, defaultText: '100 (off with --dev)', help: 'cost units per second per client IP (0 = no limit)',
  },
  rateBurst: {
    flag: 'rate-burst', env: 'KEEL_RATE_BURST', group: 'Access', type: 'number', metavar: 'N', min: 1, max: 1e9,
    default: undefined, defaultText: '2 x rate limit', help: 'cost units a client IP may spend at once',
  },
  rateLimitAllowList: {
    flag: 'rate-limit-allow-list', env: 'KEEL_RATE_LIMIT_ALLOW_LIST', group: 'Access', type: 'string', metavar: 'LIST', optional: true,
    default: undefined, help: 'CIDRs or key:NAME entries with their own limit, e.g. "10.0.0.0/8=1000,key:abc=5000"',
  },
  rateLimitCosts: {
    flag: 'rate-limit-costs', env: 'KEEL_RATE_LIMIT_COSTS', group: 'Access', type: 'string', metavar: 'LIST', optional: true,
    default: undefined, defaultText: 'built-in weights', help: 'per-method costs, e.g. "eth_call=8,eth_getLogs=20" (others keep their weight)',
  },
  redisUrl: {
    flag: 'redis-url', env: 'KEEL_REDIS_URL', group: 'Access', type: 'string', metavar: 'URL', optional: true,
    default: undefined, defaultText: 'none (buckets local to this node)', help: 'Redis (redis://HOST:6379) holding the rate limit buckets, one budget per client across the nodes behind one load balancer',
  },
  rateLimitNodes: {
    flag: 'rate-limit-nodes', env: 'KEEL_RATE_LIMIT_NODES', group: 'Access', type: 'int', metavar: 'N', min: 1, max: 10_000,
    default: 1, help: 'nodes sharing the rate limit through --redis-url: while Redis is unavailable each admits 1/N of it',
  },
  redisTimeoutMs: {
    flag: 'redis-timeout-ms', env: 'KEEL_REDIS_TIMEOUT_MS', group: 'Access', type: 'int', metavar: 'MS', min: 1, max: 10_000,
    default: 50, help: 'with --redis-url: a Redis answer slower than this puts the node on its local fallback limit until Redis answers in time',
  },
  trustedProxies: {
    flag: 'trusted-proxies', env: 'KEEL_TRUSTED_PROXIES', group: 'Access', type: 'string', metavar: 'CIDRS', optional: true,
    default: undefined, defaultText: 'none', help: 'load balancers (CIDRs) whose X-Forwarded-For / Forwarded headers are trusted',
  },
  proxyProtocol: {
    flag: 'proxy-protocol', env: 'KEEL_PROXY_PROTOCOL', group: 'Access', type: 'bool', metavar: '',
    default: false, help: 'accept the PROXY protocol v2 header from trusted proxies',
  },
  maxConnectionsPerIp: {
    flag: 'max-connections-per-ip', env: 'KEEL_MAX_CONNECTIONS_PER_IP', group: 'Access', type: 'int', metavar: 'N',
    min: 0, max: 1_000_000, default: 0, help: 'open HTTP connections per client IP (0 = unlimited)',
  },
  tlsCert: {
    flag: 'tls-cert', env: 'KEEL_TLS_CERT', group: 'Access', type: 'path', metavar: 'FILE', optional: true,
    default: undefined, help: 'PEM certificate: serve HTTPS and WSS (with --tls-key)',
  },
  tlsKey: {
    flag: 'tls-key', env: 'KEEL_TLS_KEY', group: 'Access', type: 'path', metavar: 'FILE', optional: true,
    default: undefined, help: 'PEM private key of --tls-cert',
  },
  corsOrigins: {
    flag: 'cors-origins', env: 'KEEL_CORS_ORIGINS', group: 'Access', type: 'string', metavar: 'LIST',
    default: '*', help: 'origins browsers may call from (comma-separated, * = any)',
  },
  shutdownGraceSeconds: {
    flag: 'shutdown-grace-seconds', env: 'KEEL_SHUTDOWN_GRACE_SECONDS', group: 'Access', type: 'number', metavar: 'SECONDS',
    min: 0, max: 600, default: 5, help: 'on SIGTERM, how long in-flight requests and WebSockets get before closing',
  },
  readyMaxSecondsBehind: {
    flag: 'ready-max-seconds-behind', env: 'KEEL_READY_MAX_SECONDS_BEHIND', group: 'Access', type: 'number', metavar: 'SECONDS',
    min: 1, max: DAY, default: 60, help: 'GET /ready fails when the head block is older than this',
  },

  streamUrl: {
    flag: 'stream-url', env: 'KEEL_STREAM_URL', group: 'Replication', type: 'string', metavar: 'URL', optional: true,
    default: undefined, defaultText: 'none', help: 'NATS server (nats://HOST:4222) of the block stream: the producer publishes each block to JetStream, a replica follows it',
  },
  streamMaxAgeSeconds: {
    flag: 'stream-max-age-seconds', env: 'KEEL_STREAM_MAX_AGE_SECONDS', group: 'Replication', type: 'int', metavar: 'SECONDS',
    min: 60, max: 3650 * DAY, default: 7 * DAY, defaultText: '604800 (7 days)', help: 'how long the block stream keeps a block, when the producer creates the stream (a replica further behind takes a new snapshot)',
  },
  replica: {
    flag: 'replica', env: 'KEEL_REPLICA', group: 'Replication', type: 'bool', metavar: '',
    default: false, help: 'serve reads from a copy of the chain that follows the block stream; writes and pending state go to --producer-url',
  },
  producerUrl: {
    flag: 'producer-url', env: 'KEEL_PRODUCER_URL', group: 'Replication', type: 'string', metavar: 'URL', optional: true,
    default: undefined, defaultText: 'none', help: 'JSON-RPC address (http:// or https://) of the producer a replica forwards transactions and pending-state questions to',
  },
  replicaVerify: {
    flag: 'replica-verify', env: 'KEEL_REPLICA_VERIFY', group: 'Replication', type: 'enum', metavar: 'MODE',
    values: ['checks', 'execute'], default: 'checks',
    help: 'what a replica checks before a block is visible: checks (hashes, roots, trie nodes) or execute (also runs the block and compares the state root and receipts)',
  },
  readyMaxBlocksBehind: {
    flag: 'ready-max-blocks-behind', env: 'KEEL_READY_MAX_BLOCKS_BEHIND', group: 'Replication', type: 'int', metavar: 'BLOCKS',
    min: 0, max: 1_000_000, default: 8, help: 'a replica\'s GET /ready fails when it is more than this many blocks behind the stream (or the producer, while the stream is unreachable)',
  },

  metrics: {
    flag: 'metrics', env: 'KEEL_METRICS', group: 'Metrics', type: 'bool', metavar: '',
    default: true, help: 'serve Prometheus metrics on the metrics listener',
  },
  metricsHost: {
    flag: 'metrics-host', env: 'KEEL_METRICS_HOST', group: 'Metrics', type: 'host', metavar: 'ADDR',
    default: '127.0.0.1', help: 'interface of the metrics listener (keep it private)',
  },
  metricsPort: {
    flag: 'metrics-port', env: 'KEEL_METRICS_PORT', group: 'Metrics', type: 'int', metavar: 'N', min: 0, max: 65_535,
    default: 9545, help: 'port of the metrics listener (0 = any free port)',
  },
}

export const OPTIONS: readonly Option[] = (Object.keys(TABLE) as OptionKey[]).map(
  (key) => ({ ...TABLE[key], key }) as Option,
)

export const OPTIONS_BY_FLAG: ReadonlyMap<string, Option> = new Map(OPTIONS.map((o) => [o.flag, o]))
export const OPTIONS_BY_ENV: ReadonlyMap<string, Option> = new Map(OPTIONS.map((o) => [o.env, o]))
export const OPTIONS_BY_KEY: ReadonlyMap<OptionKey, Option> = new Map(OPTIONS.map((o) => [o.key, o]))

/** Flags that are not settings: they choose the config file or what the CLI does. */
export const CONFIG_FLAG = 'config'
export const CONFIG_ENV = 'KEEL_CONFIG'

export function defaultConfig(): KeelConfig {
  const config: Record<string, unknown> = {}
  for (const option of OPTIONS) config[option.key] = option.default
  return config as unknown as KeelConfig
}

/** What a valid value looks like, in the words of the error messages and the help. */
export function expectedText(option: Option): string {
  switch (option.type) {
    case 'int':
      return `an integer from ${option.min} to ${option.max}`
    case 'number':
      return `a number from ${option.min} to ${option.max}`
    case 'bigint':
      return `an integer from ${option.min} to ${option.max} (decimal or 0x-hex)`
    case 'bool':
      return 'true or false'
    case 'enum':
      return `one of ${option.values.join(', ')}`
    case 'host':
      return 'an IP address or a host name'
    case 'string':
    case 'path':
      return 'a non-empty string'
  }
}

/** The default as shown in the help. */
export function defaultText(option: Option): string {
  if (option.defaultText !== undefined) return option.defaultText
  return String(option.default)
}
