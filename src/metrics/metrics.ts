// The node's metrics, declared once. `createMetrics` builds every metric on one prom-client Registry and
// returns a typed object that components receive as `metrics` (call sites: metrics.chain.blocks.inc()).
// A node started with --metrics=false gets `null` instead and records nothing.

import { collectDefaultMetrics, Registry } from 'prom-client'
import { CallPoolMetrics } from './call-pool.js'
import { HttpMetrics } from './http.js'
import { ChainMetrics } from './chain.js'
import { FilterMetrics } from './filters.js'
import { RateLimitMetrics } from './ratelimit.js'
import { MetricsRegistry } from './registry.js'
import { RpcMetrics } from './rpc.js'
import { StorageMetrics } from './storage.js'
import { IndexMetrics } from './indexes.js'
import { StreamMetrics } from './stream.js'
import { TxPoolMetrics } from './txpool.js'
import { WsMetrics } from './ws.js'

export const METRIC_PREFIX = 'keel_'

export interface MetricsInit {
  /** True for registered JSON-RPC methods; anything else is labelled "other". */
  isKnownMethod(method: string): boolean
  version: string
  chainId: number
  /** Node.js process metrics (event loop lag, GC, heap, RSS, handles); default true. */
  processMetrics?: boolean
}

export function createMetrics(init: MetricsInit, registry: Registry = new Registry()) {
  const register = new MetricsRegistry(registry)
  if (init.processMetrics !== false) collectDefaultMetrics({ register: registry, prefix: METRIC_PREFIX })
  register
    .gauge<'version' | 'chain_id'>({
      name: 'keel_build_info',
      help: 'Always 1; labels carry the Keel version and chain id',
      labelNames: ['version', 'chain_id'],
    })
    .set({ version: init.version, chain_id: String(init.chainId) }, 1)
  const rpc = new RpcMetrics(register, init.isKnownMethod)
  return {
    register,
    rpc,
    ws: new WsMetrics(register),
    http: new HttpMetrics(register),
    threads: {
      heapUsed: register.gauge<'thread'>({ name: 'keel_thread_heap_used_bytes', help: 'V8 heap in use, per thread (main, producer, call-N), reported every 5 s', labelNames: ['thread'] }),
      heapTotal: register.gauge<'thread'>({ name: 'keel_thread_heap_total_bytes', help: 'V8 heap reserved, per thread (main, producer, call-N), reported every 5 s', labelNames: ['thread'] }),
      heapLive: register.gauge<'thread'>({ name: 'keel_thread_heap_live_bytes', help: 'V8 heap in use just after the thread\'s last full collection (its live objects then; garbage awaiting collection does not count), per thread, reported every 5 s', labelNames: ['thread'] }),
      external: register.gauge<'thread'>({ name: 'keel_thread_external_bytes', help: 'memory outside the V8 heap held by a thread\'s objects (ArrayBuffers), per thread, reported every 5 s', labelNames: ['thread'] }),
    },
    rateLimit: new RateLimitMetrics(register),
    filters: new FilterMetrics(register),
    chain: new ChainMetrics(register),
    txpool: new TxPoolMetrics(register),
    callPool: new CallPoolMetrics(register),
    storage: new StorageMetrics(register),
    indexes: new IndexMetrics(register),
    stream: new StreamMetrics(register),
  }
}

export type Metrics = ReturnType<typeof createMetrics>
