// On a replica, an answer at the 'pending' block depends on the producer's pool, which only the producer
// has: such calls go to the producer (--producer-url) and its answer, or its error, comes back as given.
// Every other block parameter is answered from the replica's own chain. Pending nonces go the same way
// through the chain thread (chain/producer-client.ts pendingNonce).

import { ErrorCode, RpcError } from '../errors.js'
import { ProducerForwarder, ProducerUnreachable } from '../replication/forwarder.js'
import type { MethodHandler } from './context.js'

/** The methods with a block parameter, and its position. */
export const PENDING_AWARE: Readonly<Record<string, number>> = {
  eth_getBalance: 1,
  eth_getCode: 1,
  eth_getStorageAt: 2,
  eth_getProof: 2,
  eth_call: 1,
  eth_estimateGas: 1,
  eth_createAccessList: 1,
  eth_getBlockByNumber: 0,
  eth_getBlockTransactionCountByNumber: 0,
  eth_getTransactionByBlockNumberAndIndex: 0,
  eth_getBlockReceipts: 0,
}

const FORWARD_TIMEOUT_MS = 10_000

export function pendingForwarder(producerUrl: string): (name: string, inner: MethodHandler) => MethodHandler {
  const forwarder = new ProducerForwarder(producerUrl, FORWARD_TIMEOUT_MS)
  return (name, inner) => {
    const at = PENDING_AWARE[name]
    return async (params, ctx) => {
      if (params[at] !== 'pending') return inner(params, ctx)
      let outcome
      try {
        outcome = await forwarder.call(name, [...params])
      } catch (err) {
        throw new RpcError(ErrorCode.Server, err instanceof ProducerUnreachable ? err.message : String(err))
      }
      if (outcome.ok) return outcome.result as never
      throw new RpcError(outcome.error.code, outcome.error.message, outcome.error.data)
    }
  }
}
