// A stored log -> the JSON object geth 1.17 returns for it (types.Log, a Go struct: fields in declaration
// order). Shapes are checked against ethereum/execution-apis (test/json/format.test.js).

import { walkStoredReceipts } from '../chain/receipts.js'
import type { StoredLog } from '../chain/receipts.js'
import { bytesToHex, quantity } from '../util/hex.js'
import { RlpCursor } from '../util/rlp-cursor.js'

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

const ADDRESS_OPEN = latin1('{"address":"0x')
const TOPICS_OPEN = latin1('","topics":[')
const FIRST_TOPIC_OPEN = latin1('"0x')
const TOPIC_OPEN = latin1(',"0x')
const DATA_OPEN = latin1('],"data":"0x')
const TX_INDEX_OPEN = latin1('","transactionIndex":"')
const LOG_CLOSE = latin1('","removed":false}')
const HEX_DIGITS = latin1('0123456789abcdef')

function latin1(text: string): Uint8Array {
  return Buffer.from(text, 'latin1')
}

const malformed = (detail: string): Error => new Error(`malformed stored receipts: ${detail}`)

/**
 * Encodes a block's logs from its stored receipts (`receiptsRlp`, src/chain/receipts.ts: transaction i's
 * receipt, whose 0x hash is `txHashes[i]`, holds its logs): each is JSON.stringify(formatLog(...)) with
 * `removed: false`, written byte by byte from the receipts' RLP where it lies (every value is hex or a
 * boolean: nothing to escape), so that a block's thousands of logs cost no object or string each.
 */
export function encodeBlockLogs(receiptsRlp: Uint8Array, txHashes: readonly string[], block: BlockLogContext): EncodedLogs {
  const numberPart = latin1('","blockNumber":"' + quantity(block.blockNumber) + '","transactionHash":"')
  // from the transaction index's closing quote to the log index's opening one
  const blockPart = latin1('","blockHash":"' + block.blockHash + '",' + (block.blockTimestamp === undefined ? '' : '"blockTimestamp":"' + quantity(block.blockTimestamp) + '",') + '"logIndex":"')
  const c = new RlpCursor(malformed)
  // first pass: where each log's address, topics and data lie, and the text's length
  const logs: number[] = [] // per log: transaction, address start and end, topics' list start and end, data start and end
  let size = 0
  walkStoredReceipts(receiptsRlp, c, (txIndex, receipt) => {
    if (receipt.logsStart === receipt.logsEnd) return
    if (txIndex >= txHashes.length) throw malformed(`receipt ${txIndex} of a block of ${txHashes.length} transactions`)
    // what each log of this transaction writes after its data, but for its index
    const txLength = numberPart.length + txHashes[txIndex]!.length + TX_INDEX_OPEN.length + quantityLength(txIndex) + blockPart.length
    for (let logPos = receipt.logsStart; logPos < receipt.logsEnd; ) {
      c.read(receiptsRlp, logPos, receipt.logsEnd)
      if (!c.list) throw malformed(`a log of receipt ${txIndex} is not a list`)
      const logEnd = c.end
      logPos = c.end
      c.read(receiptsRlp, c.start, logEnd)
      if (c.list) throw malformed(`a log address of receipt ${txIndex} is a list`)
      const addressStart = c.start
      const addressEnd = c.end
      c.read(receiptsRlp, c.end, logEnd)
      if (!c.list) throw malformed(`a log's topics of receipt ${txIndex} are not a list`)
      const topicsStart = c.start
      const topicsEnd = c.end
      let topicsLength = 0
      for (let t = topicsStart, k = 0; t < topicsEnd; k++) {
        c.read(receiptsRlp, t, topicsEnd)
        if (c.list) throw malformed(`a log topic of receipt ${txIndex} is a list`)
        topicsLength += (k === 0 ? FIRST_TOPIC_OPEN.length : TOPIC_OPEN.length) + 2 * (c.end - c.start) + 1
        t = c.end
      }
      c.read(receiptsRlp, topicsEnd, logEnd)
      if (c.list) throw malformed(`a log's data of receipt ${txIndex} is a list`)
      logs.push(txIndex, addressStart, addressEnd, topicsStart, topicsEnd, c.start, c.end)
      size += ADDRESS_OPEN.length + 2 * (addressEnd - addressStart) + TOPICS_OPEN.length + topicsLength + DATA_OPEN.length + 2 * (c.end - c.start) +
        txLength + quantityLength(logs.length / 7 - 1) + LOG_CLOSE.length
    }
  })
  const count = logs.length / 7
  const starts = new Uint32Array(count)
  const ends = new Uint32Array(count)
  // not from Buffer's shared pool: a small block's bytes would keep a whole pool slab alive with the block
  const bytes = Buffer.allocUnsafeSlow(size + Math.max(0, count - 1))
  let at = 0
  for (let i = 0; i < count; i++) {
    const l = 7 * i
    if (i > 0) bytes[at++] = 0x2c // ,
    starts[i] = at
    at = put(bytes, at, ADDRESS_OPEN)
    at = writeHex(bytes, at, receiptsRlp, logs[l + 1]!, logs[l + 2]!)
    at = put(bytes, at, TOPICS_OPEN)
    for (let t = logs[l + 3]!, k = 0; t < logs[l + 4]!; k++) {
      c.read(receiptsRlp, t, logs[l + 4]!)
      at = put(bytes, at, k === 0 ? FIRST_TOPIC_OPEN : TOPIC_OPEN)
      at = writeHex(bytes, at, receiptsRlp, c.start, c.end)
      bytes[at++] = 0x22 // "
      t = c.end
    }
    at = put(bytes, at, DATA_OPEN)
    at = writeHex(bytes, at, receiptsRlp, logs[l + 5]!, logs[l + 6]!)
    const txIndex = logs[l]!
    at = put(bytes, at, numberPart)
    at = putText(bytes, at, txHashes[txIndex]!)
    at = put(bytes, at, TX_INDEX_OPEN)
    at = writeQuantity(bytes, at, txIndex)
    at = put(bytes, at, blockPart)
    at = writeQuantity(bytes, at, i)
    at = put(bytes, at, LOG_CLOSE)
    ends[i] = at
  }
  return { bytes, starts, ends }
}

/** Copies `src` to `at`; returns the position after it. */
function put(out: Uint8Array, at: number, src: Uint8Array): number {
  out.set(src, at)
  return at + src.length
}

/** Writes an ASCII text (a 0x hash) at `at`; returns the position after it. */
function putText(out: Uint8Array, at: number, text: string): number {
  for (let i = 0; i < text.length; i++) out[at + i] = text.charCodeAt(i)
  return at + text.length
}

/** Writes bytes[start, end) as lowercase hex digits at `at`; returns the position after them. */
function writeHex(out: Uint8Array, at: number, bytes: Uint8Array, start: number, end: number): number {
  for (let i = start; i < end; i++) {
    const b = bytes[i]!
    out[at++] = HEX_DIGITS[b >> 4]!
    out[at++] = HEX_DIGITS[b & 15]!
  }
  return at
}

/** The length of quantity(n) ("0x" and at least one hex digit). */
function quantityLength(n: number): number {
  let digits = 1
  for (let v = n; v >= 16; v = Math.floor(v / 16)) digits++
  return 2 + digits
}

/** Writes quantity(n) at `at`; returns the position after it. */
function writeQuantity(out: Uint8Array, at: number, n: number): number {
  const end = at + quantityLength(n)
  out[at] = 0x30 // 0
  out[at + 1] = 0x78 // x
  for (let i = end - 1, v = n; i >= at + 2; i--, v = Math.floor(v / 16)) out[i] = HEX_DIGITS[v % 16]!
  return end
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
