// txpool_status, txpool_content, txpool_contentFrom, txpool_inspect: geth's txpool namespace, answered
// by the producer thread that owns the pool.

import type { MethodHandler } from '../context.js'
import { quantity } from '../../util/hex.js'
import * as p from '../params.js'
import type { MethodDeps } from './deps.js'

export function txpoolMethods(deps: MethodDeps): Record<string, MethodHandler> {
  return {
    txpool_status: async (params) => {
      p.expectParams(params, 0, 0)
      const status = await deps.producer.query<{ pending: number; queued: number }>({ q: 'status' })
      return { pending: quantity(status.pending), queued: quantity(status.queued) }
    },
    txpool_content: async (params) => {
      p.expectParams(params, 0, 0)
      return deps.producer.query({ q: 'content' })
    },
    txpool_contentFrom: async (params) => {
      p.expectParams(params, 1, 1)
      return deps.producer.query({ q: 'contentFrom', address: p.address(params[0], 0) })
    },
    txpool_inspect: async (params) => {
      p.expectParams(params, 0, 0)
      return deps.producer.query({ q: 'inspect' })
    },
  }
}
