// The resolved configuration every component receives. Defaults, parsing and validation live in
// options.ts; this file is only the shape, so that low layers can import it without the loader.

export interface KeelConfig {
  /** Folder holding the LevelDB chain, the operator key and the persisted txpool. */
  dataDir: string
  host: string
  port: number
  /** Path of a geth-format genesis.json; undefined = the embedded default (or --dev). */
  genesis: string | undefined
  /** Seconds between sealed blocks; 0 = seal one block per arriving batch (automine). */
  blockTime: number
  /** When idle, seal empty blocks only every this many seconds (0 = never seal empty blocks). */
  emptyBlockPeriod: number
  /** Gas limit the producer's blocks move toward, 1/1024 of the parent's at most a block (0 = keep the parent's). */
  blockGasLimit: bigint
  /** Serve without sealing blocks; the pool still takes transactions. */
  noSeal: boolean
  dev: boolean
  chainId: number
  /** Blocks whose state stays readable behind the head (0 = archive: keep the state of every block). */
  stateHistory: number
  /** MiB of free space the data folder's file system keeps; below it the node stops writing (0 = no check). */
  minFreeDisk: number

  // Txpool
  txpoolMaxSlots: number
  txpoolMaxQueuedPerAccount: number
  txpoolMaxPendingPerAccount: number
  txpoolPriceBumpPercent: number
  txpoolLifetimeSeconds: number
  /** Transaction fee cap of eth_sendRawTransaction in ether (0 = no cap). */
  rpcTxFeeCap: number
  rpcAllowUnprotectedTxs: boolean
  /** Max encoded transaction size in bytes (geth: 128 KiB). */
  txMaxSize: number

  /** V8 old-generation growth past the live size before a full collection, in percent (0 = V8's own). */
  heapGrowthPercent: number
  /** Whether V8's memory reducer may shrink the producer thread's heap when it goes idle. */
  idleHeapShrink: boolean

  // Execution
  rpcGasCap: bigint
  rpcEvmTimeoutMs: number
  /** Workers in the eth_call pool (0 = derive from core count). */
  callWorkers: number
  callBurstWorkers: number

  // Transport limits
  httpBodyLimit: number
  batchRequestLimit: number
  batchResponseMaxSize: number

  // Logs and filters
  logsMaxBlockRange: number
  logsMaxResults: number
  filterTimeoutSeconds: number

  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent'

  // WebSocket
  wsMaxSubscriptions: number
  wsMaxConnectionsPerIp: number
  /** Open WebSocket connections in all; more are refused with HTTP 503 (0 = unlimited). */
  wsMaxConnections: number
  /** HTTP requests being read or answered at once; more get HTTP 503 (0 = unlimited). */
  httpMaxInFlight: number
  wsMessageLimit: number
  /** A subscriber whose unsent buffer passes this many bytes is closed (slow consumer). */
  wsSendBufferLimit: number
  wsIdleTimeoutSeconds: number

  // Access: rate limits, client addresses, TLS, CORS, shutdown
  /** Cost units per second per client IP (0 = off); undefined = 100, or off with --dev. */
  rateLimit: number | undefined
  /** Bucket size per client IP; undefined = 2 x rateLimit. */
  rateBurst: number | undefined
  /** Comma-separated CIDRs or API keys with their own limit, e.g. "10.0.0.0/8=1000,key:abc=5000". */
  rateLimitAllowList: string | undefined
  /** Comma-separated METHOD=COST overrides of the per-method rate limit costs. */
  rateLimitCosts: string | undefined
  /** Redis holding the rate limit buckets shared by the nodes behind one load balancer; undefined = local buckets. */
  redisUrl: string | undefined
  /** How many nodes share the rate limit: each admits 1/N of it while Redis is unavailable. */
  rateLimitNodes: number
  /** A Redis command slower than this counts as Redis unavailable (the local fallback decides). */
  redisTimeoutMs: number
  /** Comma-separated CIDRs of load balancers whose X-Forwarded-For / Forwarded headers are trusted. */
  trustedProxies: string | undefined
  proxyProtocol: boolean
  maxConnectionsPerIp: number
  tlsCert: string | undefined
  tlsKey: string | undefined
  /** Comma-separated allowed origins, or * */
  corsOrigins: string
  shutdownGraceSeconds: number
  readyMaxSecondsBehind: number

  // Replication
  /** NATS server of the block stream; undefined = no stream. */
  streamUrl: string | undefined
  streamMaxAgeSeconds: number
  /** Follow the block stream instead of producing blocks. */
  replica: boolean
  /** The producer a replica forwards writes and pending-state questions to. */
  producerUrl: string | undefined
  /** What a replica checks before a block is visible. */
  replicaVerify: 'checks' | 'execute'
  readyMaxBlocksBehind: number

  // Metrics
  metrics: boolean
  metricsHost: string
  metricsPort: number
}
