// The Envelope hooks of observability: RPC metrics, request lines at debug level, handler bugs at error
// level. With metrics off and the log level above debug, onCall stays undefined and the envelope skips
// even its clock reads.

import type { Logger } from '../logging/logger.js'
import type { EnvelopeHooks } from '../rpc/envelope.js'
import type { RpcMetrics } from './rpc.js'

export type ObservabilityHooks = Required<Pick<EnvelopeHooks, 'onInternalError'>> &
  Pick<EnvelopeHooks, 'onCall' | 'onRejected' | 'onBatch'>

export function observabilityHooks(rpc: RpcMetrics | null, logger: Logger): ObservabilityHooks {
  const debug = logger.isEnabled('debug')
  const hooks: ObservabilityHooks = {
    onInternalError: (err, method) => logger.error('rpc method failed with an unexpected error', { method, err }),
  }
  if (rpc !== null && debug) {
    hooks.onCall = (method, ctx, code, durationMs) => {
      rpc.recordCall(method, ctx.transport, code, durationMs)
      logger.debug('rpc call', { method, transport: ctx.transport, client: ctx.clientIp, code, ms: round(durationMs) })
    }
  } else if (rpc !== null) {
    hooks.onCall = (method, ctx, code, durationMs) => rpc.recordCall(method, ctx.transport, code, durationMs)
  } else if (debug) {
    hooks.onCall = (method, ctx, code, durationMs) =>
      logger.debug('rpc call', { method, transport: ctx.transport, client: ctx.clientIp, code, ms: round(durationMs) })
  }
  if (rpc !== null) {
    hooks.onRejected = (ctx, code) => rpc.recordRejected(ctx.transport, code)
    hooks.onBatch = (ctx, size) => rpc.recordBatch(ctx.transport, size)
  }
  return hooks
}

const round = (ms: number): number => Math.round(ms * 1000) / 1000
