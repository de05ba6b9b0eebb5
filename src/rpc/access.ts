// Turns the Access options (rate limits, proxies, PROXY protocol, TLS, CORS, readiness) into the pieces
// the envelope and the server take, failing at start with a clear message on a bad value.

import { accessSync, constants } from 'node:fs'
import { ConfigError } from '../config/load.js'
import type { KeelConfig } from '../config/types.js'
import { CidrSet } from './cidr.js'
import { createClientIpResolver } from './client-ip.js'
import { Health } from './health.js'
import type { HeadClock } from './health.js'
import { RedisBucketStore } from '../shared/redis-buckets.js'
import { AllowList, parseMethodCosts, RateLimiter, resolveRatePolicy } from './ratelimit.js'
import type { ClientRateLimiter } from './ratelimit.js'
import { SharedRateLimiter } from './shared-ratelimit.js'
import type { RpcServerOptions } from './server.js'

export interface AccessSetup {
  /** Local buckets, or with --redis-url the buckets shared by the nodes (close() ends its connection). */
  rateLimiter: ClientRateLimiter
  health: Health
  /** Spread into RpcServerOptions. */
  serverOptions: Pick<
    RpcServerOptions,
    'resolveClientIp' | 'proxyProtocolFrom' | 'tls' | 'corsOrigins' | 'health' | 'maxConcurrentRequestsPerIp'
  >
  /** 'https' when TLS is on. */
  scheme: 'http' | 'https'
}

type AccessConfig = Pick<
  KeelConfig,
  | 'dev'
  | 'rateLimit'
  | 'rateBurst'
  | 'rateLimitAllowList'
  | 'rateLimitCosts'
  | 'redisUrl'
  | 'rateLimitNodes'
  | 'redisTimeoutMs'
  | 'trustedProxies'
  | 'proxyProtocol'
  | 'maxConnectionsPerIp'
  | 'tlsCert'
  | 'tlsKey'
  | 'corsOrigins'
  | 'readyMaxSecondsBehind'
>

export function accessSetup(config: AccessConfig, chain: HeadClock): AccessSetup {
  const trusted = parseOption('--trusted-proxies', () => CidrSet.parse(config.trustedProxies))
  const allowList = parseOption('--rate-limit-allow-list', () => AllowList.parse(config.rateLimitAllowList))
  const methodCosts = parseOption('--rate-limit-costs', () => parseMethodCosts(config.rateLimitCosts))
  if (config.proxyProtocol && trusted.size === 0) {
    throw new ConfigError('--proxy-protocol needs --trusted-proxies: the PROXY header is only believed from those load balancers')
  }
  if ((config.tlsCert === undefined) !== (config.tlsKey === undefined)) {
    throw new ConfigError('--tls-cert and --tls-key go together: give both to serve HTTPS and WSS')
  }
  for (const [flag, file] of [['--tls-cert', config.tlsCert], ['--tls-key', config.tlsKey]] as const) {
    if (file === undefined) continue
    try {
      accessSync(file, constants.R_OK)
    } catch {
      throw new ConfigError(`${flag}: cannot read ${file}`)
    }
  }
  const health = new Health(chain, config.readyMaxSecondsBehind)
  const tls = config.tlsCert !== undefined && config.tlsKey !== undefined ? { certFile: config.tlsCert, keyFile: config.tlsKey } : undefined
  const limits = { policy: resolveRatePolicy(config), allowList, methodCosts }
  // The Redis connection opens on the first call charged, so a setup made only to validate opens none.
  const rateLimiter =
    config.redisUrl === undefined
      ? new RateLimiter(limits)
      : new SharedRateLimiter({ ...limits, store: new RedisBucketStore(config.redisUrl, config.redisTimeoutMs), nodes: config.rateLimitNodes })
  return {
    rateLimiter,
    health,
    serverOptions: {
      resolveClientIp: createClientIpResolver(trusted),
      proxyProtocolFrom: config.proxyProtocol ? trusted : undefined,
      tls,
      corsOrigins: config.corsOrigins,
      health,
      maxConcurrentRequestsPerIp: config.maxConnectionsPerIp,
    },
    scheme: tls === undefined ? 'http' : 'https',
  }
}

function parseOption<T>(flag: string, parse: () => T): T {
  try {
    return parse()
  } catch (err) {
    throw new ConfigError(`${flag}: ${(err as Error).message}`)
  }
}
