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

/** What every log of a block writes around its own values: the block's fields, encoded once. */
interface BlockParts {
  /** from the data's closing quote to the transaction hash's opening one */
  numberPart: Uint8Array
  /** from the transaction index's closing quote to the log index's opening one */
  blockPart: Uint8Array
}

/** The last block's parts: a block's receipts are mostly read one after another. */
let lastParts: { block: BlockLogContext; parts: BlockParts } | undefined

function blockParts(block: BlockLogContext): BlockParts {
  const last = lastParts
  if (last !== undefined && last.block.blockHash === block.blockHash && last.block.blockNumber === block.blockNumber && last.block.blockTimestamp === block.blockTimestamp) {
    return last.parts
  }
  const parts = makeBlockParts(block)
  lastParts = { block: { blockHash: block.blockHash, blockNumber: block.blockNumber, blockTimestamp: block.blockTimestamp }, parts }
  return parts
}

function makeBlockParts(block: BlockLogContext): BlockParts {
  return {
    numberPart: latin1('","blockNumber":"' + quantity(block.blockNumber) + '","transactionHash":"'),
    blockPart: latin1('","blockHash":"' + block.blockHash + '",' + (block.blockTimestamp === undefined ? '' : '"blockTimestamp":"' + quantity(block.blockTimestamp) + '",') + '"logIndex":"'),
  }
}

/** Where each log's parts lie (7 numbers a log) and the text's length, gathered receipt by receipt. */
class LogLayout {
  /** per log: transaction, address start and end, topics' list start and end, data start and end */
  readonly logs: number[] = []
  size = 0

  constructor(
    readonly parts: BlockParts,
    /** the block-wide index of the first log measured */
    readonly firstLogIndex: number,
  ) {}

  /** Measures the logs of one receipt, whose logs' list payload is rlp[logsStart, logsEnd). */
  addReceipt(rlp: Uint8Array, c: RlpCursor, txIndex: number, txHash: string, logsStart: number, logsEnd: number): void {
    // what each log of this transaction writes after its data, but for its index
    const txLength = this.parts.numberPart.length + txHash.length + TX_INDEX_OPEN.length + quantityLength(txIndex) + this.parts.blockPart.length
    for (let logPos = logsStart; logPos < logsEnd; ) {
      c.read(rlp, logPos, logsEnd)
      if (!c.list) throw malformed(`a log of receipt ${txIndex} is not a list`)
      const logEnd = c.end
      logPos = c.end
      c.read(rlp, c.start, logEnd)
      if (c.list) throw malformed(`a log address of receipt ${txIndex} is a list`)
      const addressStart = c.start
      const addressEnd = c.end
      c.read(rlp, c.end, logEnd)
      if (!c.list) throw malformed(`a log's topics of receipt ${txIndex} are not a list`)
      const topicsStart = c.start
      const topicsEnd = c.end
      let topicsLength = 0
      for (let t = topicsStart, k = 0; t < topicsEnd; k++) {
        c.read(rlp, t, topicsEnd)
        if (c.list) throw malformed(`a log topic of receipt ${txIndex} is a list`)
        topicsLength += (k === 0 ? FIRST_TOPIC_OPEN.length : TOPIC_OPEN.length) + 2 * (c.end - c.start) + 1
        t = c.end
      }
      c.read(rlp, topicsEnd, logEnd)
      if (c.list) throw malformed(`a log's data of receipt ${txIndex} is a list`)
      this.logs.push(txIndex, addressStart, addressEnd, topicsStart, topicsEnd, c.start, c.end)
      this.size += ADDRESS_OPEN.length + 2 * (addressEnd - addressStart) + TOPICS_OPEN.length + topicsLength + DATA_OPEN.length + 2 * (c.end - c.start) +
        txLength + quantityLength(this.firstLogIndex + this.logs.length / 7 - 1) + LOG_CLOSE.length
    }
  }

  /** The length of the logs' text, commas between them included. */
  get length(): number {
    return this.size + Math.max(0, this.logs.length / 7 - 1)
  }

  /**
   * Writes the measured logs, comma separated, into `bytes` (at least `length` long; by default one
   * buffer of their exact size) from its start.
   */
  write(rlp: Uint8Array, c: RlpCursor, txHashOf: (txIndex: number) => string, into?: Buffer): EncodedLogs {
    const { logs, parts } = this
    const count = logs.length / 7
    const starts = new Uint32Array(count)
    const ends = new Uint32Array(count)
    // not from Buffer's shared pool: a small block's bytes would keep a whole pool slab alive with the block
    const bytes = into ?? Buffer.allocUnsafeSlow(this.length)
    let at = 0
    for (let i = 0; i < count; i++) {
      const l = 7 * i
      if (i > 0) bytes[at++] = 0x2c // ,
      starts[i] = at
      at = put(bytes, at, ADDRESS_OPEN)
      at = writeHex(bytes, at, rlp, logs[l + 1]!, logs[l + 2]!)
      at = put(bytes, at, TOPICS_OPEN)
      for (let t = logs[l + 3]!, k = 0; t < logs[l + 4]!; k++) {
        c.read(rlp, t, logs[l + 4]!)
        at = put(bytes, at, k === 0 ? FIRST_TOPIC_OPEN : TOPIC_OPEN)
        at = writeHex(bytes, at, rlp, c.start, c.end)
        bytes[at++] = 0x22 // "
        t = c.end
      }
      at = put(bytes, at, DATA_OPEN)
      at = writeHex(bytes, at, rlp, logs[l + 5]!, logs[l + 6]!)
      const txIndex = logs[l]!
      at = put(bytes, at, parts.numberPart)
      at = putText(bytes, at, txHashOf(txIndex))
      at = put(bytes, at, TX_INDEX_OPEN)
      at = writeQuantity(bytes, at, txIndex)
      at = put(bytes, at, parts.blockPart)
      at = writeQuantity(bytes, at, this.firstLogIndex + i)
      at = put(bytes, at, LOG_CLOSE)
      ends[i] = at
    }
    return { bytes, starts, ends }
  }
}

/**
 * Encodes a block's logs from its stored receipts (`receiptsRlp`, src/chain/receipts.ts: transaction i's
 * receipt, whose 0x hash is `txHashes[i]`, holds its logs): each is JSON.stringify(formatLog(...)) with
 * `removed: false`, written byte by byte from the receipts' RLP where it lies (every value is hex or a
 * boolean: nothing to escape), so that a block's thousands of logs cost no object or string each.
 */
export function encodeBlockLogs(receiptsRlp: Uint8Array, txHashes: readonly string[], block: BlockLogContext): EncodedLogs {
  const c = new RlpCursor(malformed)
  const layout = new LogLayout(blockParts(block), 0)
  walkStoredReceipts(receiptsRlp, c, (txIndex, receipt) => {
    if (receipt.logsStart === receipt.logsEnd) return
    if (txIndex >= txHashes.length) throw malformed(`receipt ${txIndex} of a block of ${txHashes.length} transactions`)
    layout.addReceipt(receiptsRlp, c, txIndex, txHashes[txIndex]!, receipt.logsStart, receipt.logsEnd)
  })
  return layout.write(receiptsRlp, c, (txIndex) => txHashes[txIndex]!)
}

/**
 * The logs of one stored receipt (its own item of the block's receipts, logs' list payload at
 * [logsStart, logsEnd)) as the items of a JSON array, encoded as encodeBlockLogs encodes them: the logs of
 * transaction `txIndex`, the first of them the block's log `firstLogIndex`.
 */
export function encodeReceiptLogs(
  receipt: Uint8Array,
  logsStart: number,
  logsEnd: number,
  txHash: string,
  txIndex: number,
  firstLogIndex: number,
  block: BlockLogContext,
): string {
  if (logsStart === logsEnd) return ''
  const c = new RlpCursor(malformed)
  const layout = new LogLayout(blockParts(block), firstLogIndex)
  layout.addReceipt(receipt, c, txIndex, txHash, logsStart, logsEnd)
  // written where the text is read from at once: one scratch buffer, grown as a receipt needs
  const length = layout.length
  if (scratch.length < length) scratch = Buffer.allocUnsafeSlow(Math.max(length, 2 * scratch.length))
  layout.write(receipt, c, () => txHash, scratch)
  return scratch.toString('latin1', 0, length)
}

let scratch = Buffer.allocUnsafeSlow(4096)

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
