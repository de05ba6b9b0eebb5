import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync, rmSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ConfigError, loadConfig } from '../../dist/config/load.js'
import { OPTIONS, defaultConfig } from '../../dist/config/options.js'

const CWD = '/srv/keel'
const load = (input) => loadConfig({ flags: {}, env: {}, cwd: CWD, ...input })

function withConfigFile(content, fn) {
  const dir = mkdtempSync(join(tmpdir(), 'keel-config-'))
  try {
    const path = join(dir, 'keel.json')
    writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content))
    return fn(path, dir)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

function assertConfigError(fn, message) {
  assert.throws(fn, (err) => {
    assert.ok(err instanceof ConfigError, `expected a ConfigError, got ${err}`)
    assert.equal(err.message, message)
    return true
  })
}

test('defaults', () => {
  assert.deepEqual(load({}), {
    dataDir: '/srv/keel/data',
    host: '127.0.0.1',
    port: 8545,
    genesis: undefined,
    blockTime: 1,
    emptyBlockPeriod: 1,
    blockGasLimit: 0n,
    noSeal: false,
    dev: false,
    chainId: 24589,
    heapGrowthPercent: 50,
    idleHeapShrink: false,
    stateHistory: 0,
    minFreeDisk: 256,
    txpoolMaxSlots: 5120,
    txpoolMaxQueuedPerAccount: 64,
    txpoolMaxPendingPerAccount: 1024,
    txpoolPriceBumpPercent: 10,
    txpoolLifetimeSeconds: 10800,
    rpcTxFeeCap: 1,
    rpcAllowUnprotectedTxs: false,
    txMaxSize: 131072,
    rpcGasCap: 50_000_000n,
    rpcEvmTimeoutMs: 5000,
    callWorkers: 0,
    callBurstWorkers: 1,
    httpBodyLimit: 5242880,
    batchRequestLimit: 1000,
    httpMaxInFlight: 2048,
    batchResponseMaxSize: 25000000,
    logsMaxBlockRange: 10000,
    logsMaxResults: 10000,
    filterTimeoutSeconds: 300,
    logLevel: 'info',
    wsMaxSubscriptions: 1024,
    wsMaxConnectionsPerIp: 256,
    wsMaxConnections: 10_000,
    wsMessageLimit: 32 * 1024 * 1024,
    wsSendBufferLimit: 16 * 1024 * 1024,
    wsIdleTimeoutSeconds: 120,
    rateLimit: undefined,
    rateBurst: undefined,
    rateLimitAllowList: undefined,
    rateLimitCosts: undefined,
    redisUrl: undefined,
    rateLimitNodes: 1,
    redisTimeoutMs: 50,
    trustedProxies: undefined,
    proxyProtocol: false,
    maxConnectionsPerIp: 0,
    tlsCert: undefined,
    tlsKey: undefined,
    corsOrigins: '*',
    shutdownGraceSeconds: 5,
    readyMaxSecondsBehind: 60,
    streamUrl: undefined,
    streamMaxAgeSeconds: 604800,
    replica: false,
    producerUrl: undefined,
    replicaVerify: 'checks',
    readyMaxBlocksBehind: 8,
    metrics: true,
    metricsHost: '127.0.0.1',
    metricsPort: 9545,
  })
})

test('every option follows the naming rule and its default passes its own validation', () => {
  for (const option of OPTIONS) {
    const kebab = option.key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)
    assert.equal(option.flag, kebab, option.key)
    assert.equal(option.env, `KEEL_${kebab.replace(/-/g, '_').toUpperCase()}`, option.key)
  }
  assert.equal(Object.keys(defaultConfig()).length, OPTIONS.length)
  // Feeding each default back as a flag must be accepted and give the same value.
  const flags = {}
  for (const option of OPTIONS) if (option.default !== undefined) flags[option.flag] = String(option.default)
  const config = load({ flags })
  for (const option of OPTIONS) {
    if (option.type !== 'path' && option.default !== undefined) assert.equal(config[option.key], option.default, option.key)
  }
})

test('config file overrides defaults, and accepts field names and flag names', () => {
  withConfigFile({ $schema: 'ignored', port: 9000, 'block-time': 0.5, rpcGasCap: '0x2faf080', dev: true }, (path) => {
    const config = load({ configFile: path })
    assert.equal(config.port, 9000)
    assert.equal(config.blockTime, 0.5)
    assert.equal(config.rpcGasCap, 50_000_000n)
    assert.equal(config.dev, true)
    assert.equal(config.host, '127.0.0.1')
  })
})

test('environment overrides the config file', () => {
  withConfigFile({ port: 9000, logLevel: 'warn' }, (path) => {
    const config = load({ configFile: path, env: { KEEL_PORT: '9001' } })
    assert.equal(config.port, 9001)
    assert.equal(config.logLevel, 'warn')
  })
})

test('command-line flags override the environment', () => {
  withConfigFile({ port: 9000 }, (path) => {
    const config = load({ configFile: path, env: { KEEL_PORT: '9001', KEEL_DEV: '1' }, flags: { port: '9002', dev: 'false' } })
    assert.equal(config.port, 9002)
    assert.equal(config.dev, false)
  })
})

test('the config file is found through --config or KEEL_CONFIG, the flag winning', () => {
  withConfigFile({ port: 7000 }, (path, dir) => {
    assert.equal(load({ env: { KEEL_CONFIG: path } }).port, 7000)
    const other = join(dir, 'other.json')
    writeFileSync(other, JSON.stringify({ port: 7001 }))
    assert.equal(load({ env: { KEEL_CONFIG: path }, flags: { config: other } }).port, 7001)
    // A relative --config resolves against the working directory.
    assert.equal(loadConfig({ flags: { config: 'keel.json' }, env: {}, cwd: dir }).port, 7000)
  })
})

test('relative paths resolve against the working directory, or the config file folder for file values', () => {
  assert.equal(load({ flags: { 'data-dir': 'chain', genesis: '../g.json' } }).dataDir, '/srv/keel/chain')
  assert.equal(load({ flags: { genesis: '../g.json' } }).genesis, '/srv/g.json')
  assert.equal(load({ env: { KEEL_DATA_DIR: '/abs/dir' } }).dataDir, '/abs/dir')
  withConfigFile({ dataDir: 'db', genesis: 'genesis.json' }, (path, dir) => {
    const config = load({ configFile: path })
    assert.equal(config.dataDir, join(dir, 'db'))
    assert.equal(config.genesis, join(dir, 'genesis.json'))
  })
  withConfigFile({ genesis: null }, (path) => assert.equal(load({ configFile: path }).genesis, undefined))
})

test('empty environment variables count as unset; unknown KEEL_ variables only warn', () => {
  const warnings = []
  const config = load({ env: { KEEL_PORT: '', KEEL_PROT: '1', KEEL_CONFIG: '', PATH: '/bin' }, onWarning: (m) => warnings.push(m) })
  assert.equal(config.port, 8545)
  assert.deepEqual(warnings, ['ignoring unknown environment variable KEEL_PROT'])
})

test('integer validation names the option and its source', () => {
  assertConfigError(() => load({ flags: { port: 'abc' } }),
    'invalid value "abc" for --port (from command line): expected an integer from 0 to 65535')
  assertConfigError(() => load({ env: { KEEL_PORT: '65536' } }),
    'invalid value "65536" for KEEL_PORT (from environment): expected an integer from 0 to 65535')
  assertConfigError(() => load({ flags: { port: '80.5' } }),
    'invalid value "80.5" for --port (from command line): expected an integer from 0 to 65535')
  withConfigFile({ port: -1 }, (path) => assertConfigError(() => load({ configFile: path }),
    `invalid value -1 for port (from config file ${path}): expected an integer from 0 to 65535`))
  withConfigFile({ 'txpool-max-slots': true }, (path) => assertConfigError(() => load({ configFile: path }),
    `invalid value true for txpool-max-slots (from config file ${path}): expected an integer from 1 to 10000000`))
  assert.equal(load({ flags: { port: '0' } }).port, 0)
})

test('number validation and float parsing', () => {
  assertConfigError(() => load({ env: { KEEL_BLOCK_TIME: 'abc' } }),
    'invalid value "abc" for KEEL_BLOCK_TIME (from environment): expected a number from 0 to 86400')
  assertConfigError(() => load({ flags: { 'block-time': '-1' } }),
    'invalid value "-1" for --block-time (from command line): expected a number from 0 to 86400')
  assertConfigError(() => load({ flags: { 'rpc-tx-fee-cap': 'Infinity' } }),
    'invalid value "Infinity" for --rpc-tx-fee-cap (from command line): expected a number from 0 to 1000000000000')
  assert.equal(load({ flags: { 'block-time': '0.5' } }).blockTime, 0.5)
  assert.equal(load({ flags: { 'block-time': '.25' } }).blockTime, 0.25)
  assert.equal(load({ flags: { 'rpc-tx-fee-cap': '1e-3' } }).rpcTxFeeCap, 0.001)
  assert.equal(load({ env: { KEEL_RPC_TX_FEE_CAP: '0' } }).rpcTxFeeCap, 0)
})

test('bigint validation and parsing', () => {
  assert.equal(load({ flags: { 'rpc-gas-cap': '100000000' } }).rpcGasCap, 100_000_000n)
  assert.equal(load({ env: { KEEL_RPC_GAS_CAP: '0xFFFFFFFFFFFFFFFF' } }).rpcGasCap, 2n ** 64n - 1n)
  withConfigFile({ rpcGasCap: 30000000 }, (path) => assert.equal(load({ configFile: path }).rpcGasCap, 30_000_000n))
  const expected = 'expected an integer from 21000 to 18446744073709551615 (decimal or 0x-hex)'
  assertConfigError(() => load({ flags: { 'rpc-gas-cap': '1.5' } }),
    `invalid value "1.5" for --rpc-gas-cap (from command line): ${expected}`)
  assertConfigError(() => load({ flags: { 'rpc-gas-cap': '0x10000000000000000' } }),
    `invalid value "0x10000000000000000" for --rpc-gas-cap (from command line): ${expected}`)
  assertConfigError(() => load({ env: { KEEL_RPC_GAS_CAP: '20999' } }),
    `invalid value "20999" for KEEL_RPC_GAS_CAP (from environment): ${expected}`)
})

test('boolean validation and parsing', () => {
  assert.equal(load({ flags: { dev: true } }).dev, true)
  assert.equal(load({ env: { KEEL_DEV: 'yes' } }).dev, true)
  assert.equal(load({ env: { KEEL_DEV: 'FALSE' } }).dev, false)
  assertConfigError(() => load({ env: { KEEL_DEV: 'maybe' } }),
    'invalid value "maybe" for KEEL_DEV (from environment): expected true or false')
  withConfigFile({ dev: 1 }, (path) => assertConfigError(() => load({ configFile: path }),
    `invalid value 1 for dev (from config file ${path}): expected true or false`))
})

test('--idle-heap-shrink: off unless asked for, by flag, environment or config file', () => {
  assert.equal(load({}).idleHeapShrink, false)
  assert.equal(load({ flags: { 'idle-heap-shrink': true } }).idleHeapShrink, true)
  assert.equal(load({ env: { KEEL_IDLE_HEAP_SHRINK: 'true' } }).idleHeapShrink, true)
  withConfigFile({ 'idle-heap-shrink': true }, (path) => assert.equal(load({ configFile: path }).idleHeapShrink, true))
  assertConfigError(() => load({ flags: { 'idle-heap-shrink': 'sometimes' } }),
    'invalid value "sometimes" for --idle-heap-shrink (from command line): expected true or false')
})

test('enum, host and path validation', () => {
  assert.equal(load({ flags: { 'log-level': 'DEBUG' } }).logLevel, 'debug')
  assertConfigError(() => load({ flags: { 'log-level': 'loud' } }),
    'invalid value "loud" for --log-level (from command line): expected one of debug, info, warn, error, silent')
  assert.equal(load({ flags: { host: '0.0.0.0' } }).host, '0.0.0.0')
  assert.equal(load({ flags: { host: '::1' } }).host, '::1')
  assert.equal(load({ env: { KEEL_HOST: 'rpc-1.internal' } }).host, 'rpc-1.internal')
  assertConfigError(() => load({ flags: { host: 'bad host' } }),
    'invalid value "bad host" for --host (from command line): expected an IP address or a host name')
  withConfigFile({ dataDir: '' }, (path) => assertConfigError(() => load({ configFile: path }),
    `invalid value "" for dataDir (from config file ${path}): expected a non-empty string`))
})

test('empty-block period follows the block time unless set, and may not be shorter than it', () => {
  assert.equal(load({ flags: { 'block-time': '2' } }).emptyBlockPeriod, 2)
  assert.equal(load({ flags: { 'block-time': '0' } }).emptyBlockPeriod, 0)
  assert.equal(load({ flags: { 'block-time': '2', 'empty-block-period': '0' } }).emptyBlockPeriod, 0)
  assert.equal(load({ flags: { 'block-time': '0', 'empty-block-period': '5' } }).emptyBlockPeriod, 5)
  assert.equal(load({ flags: { 'block-time': '0.5', 'empty-block-period': '30' } }).emptyBlockPeriod, 30)
  assertConfigError(() => load({ flags: { 'block-time': '2' }, env: { KEEL_EMPTY_BLOCK_PERIOD: '1' } }),
    'invalid value 1 for KEEL_EMPTY_BLOCK_PERIOD (from environment): expected 0 or at least the block time (2)')
})

test('block gas limit: 0 keeps the parent\'s, else at least geth\'s minimum of 5,000 gas', () => {
  assert.equal(load({ flags: { 'block-gas-limit': '120000000' } }).blockGasLimit, 120_000_000n)
  assert.equal(load({ env: { KEEL_BLOCK_GAS_LIMIT: '0' } }).blockGasLimit, 0n)
  assert.equal(load({ flags: { 'block-gas-limit': '5000' } }).blockGasLimit, 5000n)
  assertConfigError(() => load({ flags: { 'block-gas-limit': '4999' } }),
    "invalid value 4999 for --block-gas-limit (from command line): expected 0 (keep the parent's) or at least 5000")
  assertConfigError(() => load({ flags: { 'block-gas-limit': '0x8000000000000000' } }),
    'invalid value "0x8000000000000000" for --block-gas-limit (from command line): expected an integer from 0 to 9223372036854775807 (decimal or 0x-hex)')
})

test('unknown options, missing values and broken config files', () => {
  assertConfigError(() => load({ flags: { frobnicate: 'x' } }), 'unknown option --frobnicate; see keel --help')
  assertConfigError(() => load({ flags: { port: true } }), 'missing value for --port')
  assertConfigError(() => load({ flags: { config: true } }), 'missing value for --config')
  withConfigFile({ port: 1, fooBar: 2 }, (path) =>
    assertConfigError(() => load({ configFile: path }), `unknown option "fooBar" in config file ${path}`))
  withConfigFile({ port: 1, '--port': 2 }, (path) =>
    assertConfigError(() => load({ configFile: path }), `unknown option "--port" in config file ${path}`))
  withConfigFile({ dataDir: 'a', 'data-dir': 'b' }, (path) =>
    assertConfigError(() => load({ configFile: path }), `option "data-dir" repeats "dataDir" in config file ${path}`))
  withConfigFile('[1, 2]', (path) =>
    assertConfigError(() => load({ configFile: path }), `config file ${path} must hold a JSON object of options`))
  withConfigFile('{ "port": ', (path) => assert.throws(() => load({ configFile: path }),
    (err) => err instanceof ConfigError && err.message.startsWith(`config file ${path} is not valid JSON: `)))
  withConfigFile({}, (path, dir) => {
    const missing = join(dir, 'nope.json')
    assertConfigError(() => load({ configFile: missing }), `cannot read config file ${missing}: no such file`)
    mkdirSync(join(dir, 'sub'))
    assert.throws(() => load({ configFile: join(dir, 'sub') }),
      (err) => err instanceof ConfigError && err.message.startsWith(`cannot read config file ${join(dir, 'sub')}: `))
  })
})

test('replication: a replica needs the stream and the producer; URLs are checked', () => {
  const replica = load({ flags: { replica: true, 'stream-url': 'nats://10.0.0.5:4222', 'producer-url': 'http://producer:8545' } })
  assert.equal(replica.replica, true)
  assert.equal(replica.streamUrl, 'nats://10.0.0.5:4222')
  assert.equal(replica.producerUrl, 'http://producer:8545')
  assert.equal(load({ flags: { 'stream-url': 'nats://a:4222,nats://b:4222' } }).streamUrl, 'nats://a:4222,nats://b:4222')
  assertConfigError(() => load({ flags: { replica: true, 'producer-url': 'http://p:8545' } }), '--replica (from command line) needs --stream-url: the block stream it follows')
  assertConfigError(() => load({ flags: { replica: true, 'stream-url': 'nats://n:4222' } }), '--replica (from command line) needs --producer-url: where its transactions go')
  assertConfigError(() => load({ flags: { 'producer-url': 'http://p:8545' } }), '--producer-url (from command line) is for a replica: add --replica, or leave it out on the producer')
  assertConfigError(() => load({ flags: { 'stream-url': 'http://n:4222' } }), 'invalid value "http://n:4222" for --stream-url (from command line): expected nats://HOST:PORT (or tls://), comma-separated for a cluster')
  assertConfigError(() => load({ env: { KEEL_REPLICA: 'true', KEEL_STREAM_URL: 'nats://n:4222', KEEL_PRODUCER_URL: 'p:8545' } }), 'invalid value "p:8545" for KEEL_PRODUCER_URL (from environment): expected http://HOST:PORT or https://HOST:PORT')
})

test('shared rate limits: --redis-url is a redis:// URL, --rate-limit-nodes at least 1', () => {
  const shared = load({ flags: { 'redis-url': 'redis://10.0.0.7:6379', 'rate-limit-nodes': '3' } })
  assert.equal(shared.redisUrl, 'redis://10.0.0.7:6379')
  assert.equal(shared.rateLimitNodes, 3)
  assert.equal(load({ env: { KEEL_REDIS_URL: 'rediss://r:6380' } }).redisUrl, 'rediss://r:6380')
  assertConfigError(() => load({ flags: { 'redis-url': 'http://r:6379' } }), 'invalid value "http://r:6379" for --redis-url (from command line): expected redis://HOST:PORT (or rediss://)')
  assert.throws(() => load({ flags: { 'rate-limit-nodes': '0' } }), (err) => err instanceof ConfigError && /--rate-limit-nodes/.test(err.message))
})
