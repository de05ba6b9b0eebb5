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

/**
 * What the logs of one block share in their JSON: the block's fields, encoded once for all its logs.
 * `removed` is false (a sealed block's logs; Keel never reorganises).
 */
export interface BlockLogContext {
  blockHash: string
  blockNumber: bigint
  blockTimestamp?: bigint
}

/**
 * The logs of one block as JSON texts, in log order: each is JSON.stringify(formatLog(...)) with
 * `removed: false`, written directly (every value is hex or a boolean: nothing to escape), so that a
 * block's thousands of logs cost no object each. `txHashes[i]` is transaction i's 0x hash.
 */
export function blockLogTexts(receiptsLogs: readonly (readonly StoredLog[])[], txHashes: readonly string[], block: BlockLogContext): string[] {
  const blockPart = '"blockHash":"' + block.blockHash + '",' + (block.blockTimestamp === undefined ? '' : '"blockTimestamp":"' + quantity(block.blockTimestamp) + '",')
  const numberPart = '","blockNumber":"' + quantity(block.blockNumber) + '","transactionHash":"'
  const out: string[] = []
  for (let txIndex = 0; txIndex < receiptsLogs.length; txIndex++) {
    const logs = receiptsLogs[txIndex]!
    if (logs.length === 0) continue
    const txPart = numberPart + txHashes[txIndex] + '","transactionIndex":"' + quantity(txIndex) + '",' + blockPart + '"logIndex":"'
    for (const [address, topics, data] of logs) {
      let text = '{"address":"' + bytesToHex(address) + '","topics":['
      for (let k = 0; k < topics.length; k++) text += (k === 0 ? '"' : ',"') + bytesToHex(topics[k]!) + '"'
      text += '],"data":"' + bytesToHex(data) + txPart + quantity(out.length) + '","removed":false}'
      // a flat string: a rope of the parts above would be kept with the block
      Number(text)
      out.push(text)
    }
  }
  return out
}

// Where blockLogTexts' text holds the values a filter compares: the address, then the topics (each a
// quoted 66-character hash and a separator), all lowercase hex.
const ADDRESS_AT = '{"address":"'.length
const TOPICS_AT = ADDRESS_AT + 42 + '","topics":['.length
const TOPIC_STRIDE = 66 + 3

/** The number of topics of a log in blockLogTexts' form. */
export function topicCountOfText(text: string): number {
  if (text.charCodeAt(TOPICS_AT) === 0x5d /* ] */) return 0
  let n = 1
  while (n < 5 && text.charCodeAt(TOPICS_AT + n * TOPIC_STRIDE - 1) === 0x2c /* , */) n++
  return n
}

/** Whether the log in blockLogTexts' form was emitted by `address` (lowercase 0x). */
export const textHasAddress = (text: string, address: string): boolean => text.startsWith(address, ADDRESS_AT)

/** Whether topic `position` of the log in blockLogTexts' form is `topic` (lowercase 0x; the position must exist). */
export const textHasTopic = (text: string, position: number, topic: string): boolean => text.startsWith(topic, TOPICS_AT + 1 + position * TOPIC_STRIDE)

/** The address of a log in blockLogTexts' form. */
export const addressOfText = (text: string): string => text.slice(ADDRESS_AT, ADDRESS_AT + 42)

/** Topic `position` of a log in blockLogTexts' form (the position must exist). */
export const topicOfText = (text: string, position: number): string => text.slice(TOPICS_AT + 1 + position * TOPIC_STRIDE, TOPICS_AT + 67 + position * TOPIC_STRIDE)
