// Errors of eth_subscribe / eth_unsubscribe, worded as geth's rpc package words them
// (rpc/errors.go, rpc/handler.go). Only the WebSocket transport raises them, so they live in rpc/ rather
// than in src/errors.ts beside the errors every layer throws.

import { ErrorCode, RpcError, invalidParams, serverError } from '../errors.js'

/** geth rpc.ErrNotificationsUnsupported: eth_subscribe over HTTP. */
export const notificationsUnsupported = (): RpcError => new RpcError(ErrorCode.MethodNotFound, 'notifications not supported')

/** geth subscriptionNotFoundError: an unknown kind for eth_subscribe. */
export const unknownSubscriptionKind = (kind: string): RpcError =>
  new RpcError(ErrorCode.MethodNotFound, `no ${JSON.stringify(kind)} subscription in eth namespace`)

/** geth rpc.ErrSubscriptionNotFound: eth_unsubscribe of an id this connection does not hold. */
export const subscriptionNotFound = (): RpcError => serverError('subscription not found')

/** geth parseSubscriptionName. */
export const subscriptionNameExpected = (): RpcError => invalidParams('expected subscription name as first argument')

export const tooManySubscriptions = (limit: number): RpcError =>
  serverError(`too many subscriptions on this connection (limit ${limit}); unsubscribe some first`)
