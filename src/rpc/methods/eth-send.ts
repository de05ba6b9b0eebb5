// eth_sendRawTransaction: stateless checks and the one sender recovery happen here on the main thread;
// the producer thread then applies the stateful pool rules and answers.

import { decodeRawTransaction } from '../../chain/tx-intake.js'
import type { MethodHandler } from '../context.js'
import * as p from '../params.js'
import type { MethodDeps } from './deps.js'

export function sendMethods(deps: MethodDeps): Record<string, MethodHandler> {
  return {
    eth_sendRawTransaction: async (params) => {
      p.expectParams(params, 1, 1)
      if (typeof params[0] !== 'string') p.data(params[0], 0)
      const ptx = decodeRawTransaction(params[0] as string, deps.intake)
      const { hash } = await deps.producer.submit({
        raw: ptx.raw,
        hash: ptx.hash,
        sender: ptx.sender,
        senderPubKey: ptx.senderPubKey,
        arrivedAt: ptx.arrivedAt,
      })
      return hash
    },
  }
}
