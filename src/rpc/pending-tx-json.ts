// The JSON of a transaction announced as new to the pool, for newPendingTransactions with full objects.

import type { Common } from '@ethereumjs/common'
import type { TxWire } from '../chain/messages.js'
import type { ProducerClient } from '../chain/producer-client.js'
import type { ChainView } from '../chain/view.js'
import { rawTransactionJson, transactionJson } from './methods/chain-json.js'

/**
 * The pending form (blockHash null) while the pool holds it. A transaction already sealed (automine
 * seals before the lookup arrives) is sent in its mined form; one dropped meanwhile gives null.
 */
export async function pendingTransactionJson(
  producer: ProducerClient,
  view: ChainView,
  common: Common,
  hash: string,
): Promise<string | null> {
  const wire = await producer.query<TxWire | null>({ q: 'get', hash })
  if (wire !== null) return JSON.stringify(rawTransactionJson(wire.raw, wire.hash, wire.sender, null, common))
  const location = await view.txLocation(hash)
  if (location === undefined) return null
  const block = await view.blockByNumber(location.number)
  return block === undefined ? null : (transactionJson(block, location.index)?.json ?? null)
}
