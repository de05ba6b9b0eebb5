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
 * A block's logs as geth's JSON, in log order, in one buffer of ASCII bytes: log i is
 * bytes[starts[i], ends[i]), and a comma separates each log from the next, so that a run of consecutive
 * logs is one slice of a JSON array's items.
 */
export interface EncodedLogs {
  bytes: Buffer
  starts: Uint32Array
  ends: Uint32Array
}

/**
 * Encodes a block's logs (`receiptsLogs[i]`: transaction i's, whose 0x hash is `txHashes[i]`): each is
 * JSON.stringify(formatLog(...)) with `removed: false`, written directly (every value is hex or a
 * boolean: nothing to escape), so that a block's thousands of logs cost no object each.
 */
export function encodeBlockLogs(receiptsLogs: readonly (readonly StoredLog[])[], txHashes: readonly string[], block: BlockLogContext): EncodedLogs {
  const blockPart = '"blockHash":"' + block.blockHash + '",' + (block.blockTimestamp === undefined ? '' : '"blockTimestamp":"' + quantity(block.blockTimestamp) + '",')
  const numberPart = '","blockNumber":"' + quantity(block.blockNumber) + '","transactionHash":"'
  const texts: string[] = []
  for (let txIndex = 0; txIndex < receiptsLogs.length; txIndex++) {
    const logs = receiptsLogs[txIndex]!
    if (logs.length === 0) continue
    const txPart = numberPart + txHashes[txIndex] + '","transactionIndex":"' + quantity(txIndex) + '",' + blockPart + '"logIndex":"'
    for (const [address, topics, data] of logs) {
      let text = '{"address":"' + bytesToHex(address) + '","topics":['
      for (let k = 0; k < topics.length; k++) text += (k === 0 ? '"' : ',"') + bytesToHex(topics[k]!) + '"'
      texts.push(text + '],"data":"' + bytesToHex(data) + txPart + quantity(texts.length) + '","removed":false}')
    }
  }
  const starts = new Uint32Array(texts.length)
  const ends = new Uint32Array(texts.length)
  let at = 0
  for (let i = 0; i < texts.length; i++) {
    starts[i] = at
    at += texts[i]!.length
    ends[i] = at
    at++ // the comma
  }
  const joined = texts.join(',')
  // not from Buffer's shared pool: a small block's bytes would keep a whole pool slab alive with the block
  const bytes = Buffer.allocUnsafeSlow(joined.length)
  bytes.write(joined, 0, 'latin1')
  return { bytes, starts, ends }
}

// Where an encoded log holds the values a filter compares, from the log's start: the address, then the
// topics (each a quoted 66-character hash and a separator), all lowercase hex.
const ADDRESS_AT = '{"address":"'.length
const TOPICS_AT = ADDRESS_AT + 42 + '","topics":['.length
const TOPIC_STRIDE = 66 + 3
const CLOSE_BRACKET = 0x5d
const COMMA = 0x2c

/** The number of topics of the encoded log starting at `start`. */
export function topicCountAt(bytes: Uint8Array, start: number): number {
  if (bytes[start + TOPICS_AT] === CLOSE_BRACKET) return 0
  let n = 1
  while (n < 5 && bytes[start + TOPICS_AT + n * TOPIC_STRIDE - 1] === COMMA) n++
  return n
}

/** Where the address (0x and 40 hex digits) of the encoded log starting at `start` begins. */
export const addressAt = (start: number): number => start + ADDRESS_AT

/** Where topic `position` (0x and 64 hex digits) of the encoded log starting at `start` begins (the position must exist). */
export const topicAt = (start: number, position: number): number => start + TOPICS_AT + 1 + position * TOPIC_STRIDE
