// Blocks, transactions and receipts as JSON, encoded once per block and kept with the cached block:
// a sealed block never changes, so its JSON is served as is to every later request.

import type { Block } from '@ethereumjs/block'
import type { Common } from '@ethereumjs/common'
import { createTxFromRLP } from '@ethereumjs/tx'
import { bigIntToUnpaddedBytes, bytesToBigInt, bytesToHex, createWithdrawalFromBytesArray, generateAddress, hexToBytes } from '@ethereumjs/util'
import { readReceiptTxFields, readTxFields } from '../../chain/tx-fields.js'
import { walkStoredReceipts } from '../../chain/receipts.js'
import type { BlockRecord } from '../../chain/view.js'
import { RawJson } from '../context.js'
import { formatBlock } from '../../json/block.js'
import { encodeBlockLogs, formatLog } from '../../json/log.js'
import type { EncodedLogs } from '../../json/log.js'
import { receiptText } from '../../json/receipt.js'
import type { ReceiptTx } from '../../json/receipt.js'
import { formatsFromFields, formatTransaction, formatTransactionFields } from '../../json/transaction.js'
import type { TxLocation } from '../../json/transaction.js'
import type { MatchedLog } from '../../chain/logs.js'
import { RlpCursor } from '../../util/rlp-cursor.js'

/** What the RPC layer derived from a block, kept with the cached block under `key`. */
export function blockMemo<T>(block: BlockRecord, key: string, make: () => T): T {
  let value = block.memo.get(key) as T | undefined
  if (value === undefined) {
    value = make()
    block.memo.set(key, value)
  }
  return value
}

/** The block as formatBlock reads it, without its transactions (the callers put in their JSON). */
function asBlock(record: BlockRecord): Block {
  const header = record.header
  return {
    header,
    transactions: [],
    // an uncle shows by its hash alone
    uncleHeaders: record.uncles.map((u) => ({ hash: () => header.common.customCrypto.keccak256!(u) })),
    withdrawals: header.withdrawalsRoot !== undefined ? record.withdrawals.map((w) => createWithdrawalFromBytesArray(w as Parameters<typeof createWithdrawalFromBytesArray>[0])) : undefined,
    hash: () => header.hash(),
  } as unknown as Block
}

/** Block-object fields geth's RPCMarshalHeader leaves out (they belong to the body). */
const BODY_FIELDS = ['transactions', 'uncles', 'size', 'withdrawals'] as const

/**
 * The header of a block as geth's RPCMarshalHeader gives it (newHeads, eth_getHeaderByNumber / ByHash),
 * serialised once per block.
 */
export function headerJson(block: BlockRecord): string {
  return blockMemo(block, 'header', () => {
    // formatted without the transactions: a newHeads payload of a block of thousands of transfers
    // would otherwise decode each of them, or parse the block's JSON with every hash
    const header = formatBlock(asBlock(block), { fullTransactions: false, senders: block.senders, size: block.size }) as Record<string, unknown>
    for (const field of BODY_FIELDS) delete header[field]
    return JSON.stringify(header)
  })
}

export function blockJson(record: BlockRecord, fullTransactions: boolean): RawJson {
  return blockMemo(record, fullTransactions ? 'block:full' : 'block:hashes', () => {
    const obj = formatBlock(asBlock(record), { fullTransactions: false, senders: record.senders, size: record.size })
    if (fullTransactions) {
      const txs: Array<Record<string, unknown>> = new Array(record.txHashes.length)
      for (let i = 0; i < txs.length; i++) txs[i] = txJson(record, i)
      obj.transactions = txs
    } else {
      // hashes are known without decoding the transactions
      obj.transactions = record.txHashes
    }
    return new RawJson(flat(JSON.stringify(obj)))
  })
}

function txJson(record: BlockRecord, index: number): Record<string, unknown> {
  return rawTransactionJson(record.rawTx(index), record.txHashes[index]!, record.senders[index]!, location(record, index), record.header.common)
}

/**
 * A transaction as geth's RPCTransaction from its bytes (`where` null: pending), from the fields they hold
 * where those are all it takes, else from the transaction object.
 */
export function rawTransactionJson(raw: Uint8Array, hash: string, sender: string, where: TxLocation | null, common: Common): Record<string, unknown> {
  const fields = readTxFields(raw)
  if (formatsFromFields(fields)) return formatTransactionFields(fields, hash, sender, where)
  return formatTransaction(createTxFromRLP(raw, { common }), sender, where)
}

function location(record: BlockRecord, index: number): TxLocation {
  return {
    blockHash: record.hash,
    blockNumber: record.number,
    blockTimestamp: record.header.timestamp,
    index,
    baseFee: record.header.baseFeePerGas,
  }
}

export function transactionJson(record: BlockRecord, index: number): RawJson | null {
  if (index < 0 || index >= record.txHashes.length) return null
  return blockMemo(record, `tx:${index}`, () => new RawJson(flat(JSON.stringify(txJson(record, index)))))
}

/**
 * JSON.stringify returns a rope of string parts; the flat copy is ~20% smaller, which counts for text
 * kept with every cached block (a receipt is 1-2 KiB). Converting a string to a number flattens it.
 */
function flat(json: string): string {
  Number(json)
  return json
}

function contractAddressOf(tx: ReceiptTx, sender: string): string | null {
  if (tx.to.length !== 0) return null
  return bytesToHex(generateAddress(hexToBytes(sender as `0x${string}`), bigIntToUnpaddedBytes(tx.nonce)))
}

/**
 * Where each receipt lies in the block's stored receipts, and its first log's block-wide index, read once
 * per block without decoding a receipt; and each receipt's JSON text once built. A receipt is built when
 * it is first asked for, from its own bytes: the first receipt read of a block of 2,000 transfers costs
 * one receipt, not the block's (which held the main thread 31-101 ms, docs/measurements.md#receipts-built-one-at-a-time).
 */
interface ReceiptsIndex {
  starts: Uint32Array
  ends: Uint32Array
  /** the block's gas used up to and including each receipt */
  cumulativeGas: BigUint64Array
  firstLogs: Uint32Array
  texts: Array<string | undefined>
}

function receiptsIndex(record: BlockRecord): ReceiptsIndex {
  return blockMemo(record, 'receipts:index', () => {
    const rlp = record.receiptsRlp
    const n = record.txHashes.length
    const index: ReceiptsIndex = { starts: new Uint32Array(n), ends: new Uint32Array(n), cumulativeGas: new BigUint64Array(n), firstLogs: new Uint32Array(n), texts: new Array(n) }
    const c = new RlpCursor((detail) => new Error(`block ${record.number}: malformed stored receipts: ${detail}`))
    let logs = 0
    const count = walkStoredReceipts(rlp, c, (i, receipt) => {
      if (i === n) throw c.fail(`more stored receipts than its ${n} transactions`)
      index.starts[i] = receipt.start
      index.ends[i] = receipt.end
      index.cumulativeGas[i] = bytesToBigInt(rlp.subarray(receipt.gasStart, receipt.gasEnd))
      index.firstLogs[i] = logs
      for (let at = receipt.logsStart; at < receipt.logsEnd; logs++) {
        c.read(rlp, at, receipt.logsEnd)
        at = c.end
      }
    })
    if (count !== n) throw c.fail(`${count} stored receipts for its ${n} transactions`)
    return index
  })
}

/** Receipt `i`'s JSON text, built the first time it is asked for. */
function receiptTextAt(record: BlockRecord, i: number): string {
  const index = receiptsIndex(record)
  const known = index.texts[i]
  if (known !== undefined) return known
  const tx = readReceiptTxFields(record.rawTx(i))
  const sender = record.senders[i]!
  const text = flat(
    receiptText({
      tx,
      transactionHash: record.txHashes[i]!,
      common: record.header.common,
      sender,
      receipt: record.receiptsRlp.subarray(index.starts[i], index.ends[i]),
      gasUsed: index.cumulativeGas[i]! - (i === 0 ? 0n : index.cumulativeGas[i - 1]!),
      blockHash: record.hash,
      blockNumber: record.number,
      blockTimestamp: record.header.timestamp,
      index: i,
      baseFee: record.header.baseFeePerGas,
      firstLogIndex: index.firstLogs[i]!,
      contractAddress: contractAddressOf(tx, sender),
      blobGasPrice: blobGasPriceOf(record),
    }),
  )
  index.texts[i] = text
  return text
}

/** The block's blob gas price (a receipt of a blob transaction shows it), memoized: a header computes it anew. */
function blobGasPriceOf(record: BlockRecord): bigint | undefined {
  if (record.header.excessBlobGas === undefined) return undefined
  return blockMemo(record, 'blobGasPrice', () => record.header.getBlobGasPrice())
}

/** Receipts `start` to `end` (exclusive) as JSON text: a page of a big block (ots_getBlockTransactions) costs its own receipts. */
export function receiptTextsBetween(record: BlockRecord, start: number, end: number): string[] {
  const out: string[] = []
  for (let i = start; i < end; i++) out.push(receiptTextAt(record, i))
  return out
}

export function receiptJson(record: BlockRecord, index: number): RawJson | null {
  if (index < 0 || index >= record.txHashes.length) return null
  return new RawJson(receiptTextAt(record, index))
}

export function blockReceiptsJson(record: BlockRecord): RawJson {
  return blockMemo(record, 'receipts:json', () => new RawJson('[' + receiptTextsBetween(record, 0, record.txHashes.length).join(',') + ']'))
}

/**
 * Every log of the block as JSON, encoded in one pass the first time a query reads the block (a sealed
 * block's logs never change): later queries match and copy these bytes.
 */
export function encodedLogs(record: BlockRecord): EncodedLogs {
  return blockMemo(record, 'logs:encoded', () =>
    encodeBlockLogs(record.receiptsRlp, record.txHashes, {
      blockHash: record.hash,
      blockNumber: record.number,
      blockTimestamp: record.header.timestamp,
    }),
  )
}

/**
 * A matched log as JSON text (a subscription's notification): from the block's encoded logs when a
 * query encoded them, else this log's own, encoded once (a new block's few matches do not encode its
 * thousands).
 */
export function logJsonText(m: MatchedLog): string {
  const all = m.block.memo.get('logs:encoded') as EncodedLogs | undefined
  if (all !== undefined) return all.bytes.toString('latin1', all.starts[m.logIndex], all.ends[m.logIndex])
  return blockMemo(m.block, `log:${m.logIndex}`, () => flat(JSON.stringify(logJson(m))))
}

export function logJson(m: MatchedLog): Record<string, unknown> {
  return formatLog(m.log, {
    blockHash: m.block.hash,
    blockNumber: m.block.number,
    blockTimestamp: m.block.header.timestamp,
    transactionHash: m.block.txHashes[m.txIndex],
    transactionIndex: m.txIndex,
    logIndex: m.logIndex,
    removed: false,
  })
}
