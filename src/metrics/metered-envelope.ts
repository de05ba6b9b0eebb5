// An Envelope that also counts, per transport, the messages in flight and the request and response
// sizes. Every HTTP body and WS message goes through Envelope.handle, so this sees all of them.

import type { RequestContext } from '../rpc/context.js'
import type { Dispatcher } from '../rpc/dispatch.js'
import { Envelope } from '../rpc/envelope.js'
import type { Answer, EnvelopeHooks } from '../rpc/envelope.js'
import type { TransportLimits } from '../rpc/limits.js'
import type { Logger } from '../logging/logger.js'
import { observabilityHooks } from './envelope-hooks.js'
import type { RpcMetrics } from './rpc.js'


export class MeteredEnvelope extends Envelope {
  private readonly rpc: RpcMetrics
  // One callback pair per transport, made once, so a request allocates no closure here.
  private readonly answeredHttp: (answer: Answer) => Answer
  private readonly answeredWs: (answer: Answer) => Answer
  private readonly failedHttp: (err: unknown) => never
  private readonly failedWs: (err: unknown) => never

  constructor(dispatcher: Dispatcher, limits: TransportLimits, hooks: EnvelopeHooks, rpc: RpcMetrics) {
    super(dispatcher, limits, hooks)
    this.answeredHttp = (answer) => {
      rpc.messageAnswered('http', answer === null ? 0 : answer.length)
      return answer
    }
    this.answeredWs = (answer) => {
      rpc.messageAnswered('ws', answer === null ? 0 : answer.length)
      return answer
    }
    this.failedHttp = (err) => {
      rpc.messageAnswered('http', 0)
      throw err
    }
    this.failedWs = (err) => {
      rpc.messageAnswered('ws', 0)
      throw err
    }
    this.rpc = rpc
  }

  override handle(body: string, ctx: RequestContext): Promise<Answer> {
    const ws = ctx.transport === 'ws'
    this.rpc.messageReceived(ctx.transport, body.length)
    return super.handle(body, ctx).then(ws ? this.answeredWs : this.answeredHttp, ws ? this.failedWs : this.failedHttp)
  }
}

/**
 * The node's envelope: `hooks` (e.g. the rate limiter) plus the observability hooks; metered when metrics
 * are on. With metrics off and logs above debug it is the plain Envelope with no per-call hook at all.
 */
export function observedEnvelope(
  dispatcher: Dispatcher,
  limits: TransportLimits,
  hooks: EnvelopeHooks,
  metrics: { rpc: RpcMetrics } | null,
  logger: Logger,
): Envelope {
  const all: EnvelopeHooks = { ...hooks, ...observabilityHooks(metrics?.rpc ?? null, logger) }
  return metrics === null ? new Envelope(dispatcher, limits, all) : new MeteredEnvelope(dispatcher, limits, all, metrics.rpc)
}
