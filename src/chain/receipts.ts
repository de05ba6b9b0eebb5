// The stored receipt: what consensus needs (status, cumulative gas, logs). Everything else a client sees
// (gasUsed, effectiveGasPrice, contractAddress, from, bloom) is derived at read time from the block.

import { RLP } from '@ethereumjs/rlp'
import { bigIntToUnpaddedBytes, bytesToBigInt } from '@ethereumjs/util'
import type { RlpCursor } from '../util/rlp-cursor.js'

export type StoredLog = [address: Uint8Array, topics: Uint8Array[], data: Uint8Array]

export interface ReceiptRecord {
  status: 0 | 1
  /** before Byzantium (EIP-658) a receipt carries the state root after its transaction instead of a status */
  root?: Uint8Array
  cumulativeGasUsed: bigint
  logs: StoredLog[]
}

/** Gas used by transaction `index` alone: receipts store the block's running total. */
export function gasUsedAt(receipts: readonly ReceiptRecord[], index: number): bigint {
  return receipts[index].cumulativeGasUsed - (index === 0 ? 0n : receipts[index - 1].cumulativeGasUsed)
}

export function encodeReceipts(receipts: readonly ReceiptRecord[]): Uint8Array {
  return RLP.encode(receipts.map(storedFields))
}

/** One receipt as an item of encodeReceipts' list (joinRlpList joins them into the same bytes). */
export function encodeStoredReceipt(receipt: ReceiptRecord): Uint8Array {
  return RLP.encode(storedFields(receipt))
}

function storedFields(r: ReceiptRecord): [Uint8Array, Uint8Array, StoredLog[]] {
  return [r.root ?? (r.status === 1 ? Uint8Array.of(1) : new Uint8Array(0)), bigIntToUnpaddedBytes(r.cumulativeGasUsed), r.logs]
}

type StoredFields = [Uint8Array, Uint8Array, StoredLog[]]

export function decodeReceipts(bytes: Uint8Array): ReceiptRecord[] {
  return (RLP.decode(bytes) as unknown as StoredFields[]).map(receiptOf)
}

function receiptOf([status, cumulative, logs]: StoredFields): ReceiptRecord {
  return status.length === 32
    ? { status: 1, root: status, cumulativeGasUsed: bytesToBigInt(cumulative), logs }
    : { status: status.length > 0 && status[0] === 1 ? 1 : 0, cumulativeGasUsed: bytesToBigInt(cumulative), logs }
}

/** Where one stored receipt lies in a block's receipts: its item, its cumulative gas, its logs' list payload. */
export interface StoredReceiptSpan {
  start: number
  end: number
  /** its status, or before Byzantium its 32-byte state root */
  statusStart: number
  statusEnd: number
  gasStart: number
  gasEnd: number
  logsStart: number
  logsEnd: number
}

/**
 * Walks a block's stored receipts (encodeReceipts' bytes) where they lie, without decoding one: `visit`
 * gets each receipt's index and positions (one object, rewritten for the next receipt) and may read
 * inside them with `cursor`. Malformed bytes throw the error the cursor's `fail` makes. Returns the
 * receipts' count.
 */
export function walkStoredReceipts(rlp: Uint8Array, cursor: RlpCursor, visit: (index: number, span: StoredReceiptSpan) => void): number {
  const span = emptySpan()
  const c = cursor
  c.read(rlp, 0, rlp.length)
  if (!c.list) throw c.fail('not a list')
  const listEnd = c.end
  let i = 0
  for (let pos = c.start; pos < listEnd; i++, pos = span.end) {
    readStoredReceipt(rlp, pos, listEnd, c, span, i)
    visit(i, span)
  }
  return i
}

export const emptySpan = (): StoredReceiptSpan => ({ start: 0, end: 0, statusStart: 0, statusEnd: 0, gasStart: 0, gasEnd: 0, logsStart: 0, logsEnd: 0 })

/**
 * Reads where the parts of the stored receipt at `pos` lie (an item ending by `limit`: one of the
 * block's receipts, or a receipt's own bytes) into `span`; `index` names it in the cursor's errors.
 */
export function readStoredReceipt(rlp: Uint8Array, pos: number, limit: number, c: RlpCursor, span: StoredReceiptSpan, index = 0): void {
  c.read(rlp, pos, limit)
  if (!c.list) throw c.fail(`receipt ${index} is not a list`)
  span.start = pos
  span.end = c.end
  c.read(rlp, c.start, span.end)
  span.statusStart = c.start
  span.statusEnd = c.end
  c.read(rlp, c.end, span.end)
  span.gasStart = c.start
  span.gasEnd = c.end
  c.read(rlp, c.end, span.end)
  if (!c.list) throw c.fail(`receipt ${index}'s logs are not a list`)
  span.logsStart = c.start
  span.logsEnd = c.end
}
