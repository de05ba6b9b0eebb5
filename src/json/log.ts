// A stored log -> the JSON object geth 1.17 returns for it (types.Log, a Go struct: fields in declaration
// order). Shapes are checked against ethereum/execution-apis (test/json/format.test.js).

import type { StoredLog } from '../chain/receipts.js'
import { bytesToHex, quantity } from '../util/hex.js'

type Json = Record<string, unknown>

export interface LogContext {
  blockHash: string
  blockNumber: bigint
  /** geth 1.17 includes it (execution-apis Log.blockTimestamp); omitted when not given. */
  blockTimestamp?: bigint
  transactionHash: string
  transactionIndex: number
  logIndex: number
  removed: boolean
}

/** A log as geth's types.Log JSON. */
export function formatLog(log: StoredLog, ctx: LogContext): Json {
  const [address, topics, data] = log
  const topicHex: string[] = new Array(topics.length)
  for (let k = 0; k < topics.length; k++) topicHex[k] = bytesToHex(topics[k]!)
  const out: Json = {
    address: bytesToHex(address),
    topics: topicHex,
    data: bytesToHex(data),
    blockNumber: quantity(ctx.blockNumber),
    transactionHash: ctx.transactionHash,
    transactionIndex: quantity(ctx.transactionIndex),
    blockHash: ctx.blockHash,
  }
  if (ctx.blockTimestamp !== undefined) out.blockTimestamp = quantity(ctx.blockTimestamp)
  out.logIndex = quantity(ctx.logIndex)
  out.removed = ctx.removed
  return out
}
