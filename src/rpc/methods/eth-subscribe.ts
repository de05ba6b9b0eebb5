// eth_subscribe and eth_unsubscribe (geth's eth namespace subscriptions), over WebSocket only.

import type { MethodHandler } from '../context.js'
import { invalidParams } from '../../errors.js'
import { isWsContext } from '../server.js'
import * as p from '../params.js'
import {
  notificationsUnsupported,
  subscriptionNameExpected,
  subscriptionNotFound,
  unknownSubscriptionKind,
} from '../subscription-errors.js'
import type { SubscriptionManager, SubscriptionRequest } from '../subscriptions.js'

/** The subscription request named by eth_subscribe's parameters (the kind first). */
export function subscriptionRequest(params: readonly unknown[]): SubscriptionRequest {
  const kind = params[0]
  if (typeof kind !== 'string') throw subscriptionNameExpected()
  switch (kind) {
    case 'newHeads':
    case 'syncing':
      // geth takes no argument; an empty options object, as some clients send, is tolerated.
      p.expectParams(params, 1, 2)
      return { kind }
    case 'logs': {
      p.expectParams(params, 1, 2)
      const filter = p.logFilter(params[1] ?? null, 1)
      return { kind, criteria: { addresses: filter.addresses, topics: filter.topics } }
    }
    case 'newPendingTransactions': {
      p.expectParams(params, 1, 2)
      const full = params[1]
      return { kind, fullTransactions: full === undefined || full === null ? false : p.bool(full, 1) }
    }
    default:
      throw unknownSubscriptionKind(kind)
  }
}

export function subscribeMethods(subscriptions: SubscriptionManager): Record<string, MethodHandler> {
  return {
    eth_subscribe: (params, ctx) => {
      if (!isWsContext(ctx)) throw notificationsUnsupported()
      if (params.length === 0) throw subscriptionNameExpected()
      return subscriptions.subscribe(ctx, subscriptionRequest(params))
    },
    eth_unsubscribe: (params, ctx) => {
      p.expectParams(params, 1, 1)
      const id = params[0]
      if (typeof id !== 'string') throw invalidParams('invalid argument 0: subscription id must be a string')
      if (!isWsContext(ctx) || !subscriptions.unsubscribe(ctx.session, id)) throw subscriptionNotFound()
      return true
    },
  }
}
