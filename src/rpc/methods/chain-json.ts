// Blocks, transactions and receipts as JSON, encoded once per block and kept with the cached block:
// a sealed block never changes, so its JSON is served as is to every later request.

import type { Block } from '@ethereumjs/block'
import { bigIntToUnpaddedBytes, bytesToHex, generateAddress, hexToBytes } from '@ethereumjs/util'
import type { BlockRecord } from '../../chain/view.js'
import { RawJson } from '../context.js'
import { formatBlock, formatLog, formatReceipt, formatTransaction } from '../format.js'
import type { TxLocation } from '../format.js'
import type { MatchedLog } from '../../chain/logs.js'

function memo<T>(block: BlockRecord, key: string, make: () => T): T {
  let value = block.memo.get(key) as T | undefined
  if (value === undefined) {
    value = make()
    block.memo.set(key, value)
  }
  return value
}

function asBlock(record: BlockRecord): Block {
  const header = record.header
  return {
    header,
    transactions: record.txs(),
    uncleHeaders: [],
    withdrawals: header.withdrawalsRoot !== undefined ? [] : undefined,
    hash: () => header.hash(),
  } as unknown as Block
}

export function blockJson(record: BlockRecord, fullTransactions: boolean): RawJson {
  return memo(record, fullTransactions ? 'block:full' : 'block:hashes', () => {
    if (!fullTransactions && record.txHashes.length > 0) {
      // hashes are known without decoding the transactions
      const obj = formatBlock({ ...asBlock(record), transactions: [] } as unknown as Block, {
        fullTransactions: false,
        senders: record.senders,
        size: record.size,
      })
      obj.transactions = record.txHashes
      return new RawJson(JSON.stringify(obj))
    }
    return new RawJson(
      JSON.stringify(formatBlock(asBlock(record), { fullTransactions, senders: record.senders, size: record.size })),
    )
  })
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
  return memo(record, `tx:${index}`, () =>
    new RawJson(JSON.stringify(formatTransaction(record.txs()[index], record.senders[index], location(record, index)))),
  )
}

function contractAddressOf(record: BlockRecord, index: number): string | null {
  const tx = record.txs()[index]
  if (tx.to !== undefined) return null
  return bytesToHex(generateAddress(hexToBytes(record.senders[index] as `0x${string}`), bigIntToUnpaddedBytes(tx.nonce)))
}

function receiptObjects(record: BlockRecord): Array<Record<string, unknown>> {
  return memo(record, 'receipts:objects', () => {
    const receipts = record.receipts()
    const txs = record.txs()
    const gasUsed = gasUsedPerTx(record)
    const out: Array<Record<string, unknown>> = []
    let firstLogIndex = 0
    for (let i = 0; i < receipts.length; i++) {
      const r = receipts[i]
      out.push(
        formatReceipt({
          tx: txs[i],
          sender: record.senders[i],
          receipt: r,
          gasUsed: gasUsed[i],
          blockHash: record.hash,
          blockNumber: record.number,
          blockTimestamp: record.header.timestamp,
          index: i,
          baseFee: record.header.baseFeePerGas,
          firstLogIndex,
          contractAddress: contractAddressOf(record, i),
          transactionHash: record.txHashes[i],
        }),
      )
      firstLogIndex += r.logs.length
    }
    return out
  })
}

export function receiptJson(record: BlockRecord, index: number): RawJson | null {
  if (index < 0 || index >= record.txHashes.length) return null
  return memo(record, `receipt:${index}`, () => new RawJson(JSON.stringify(receiptObjects(record)[index])))
}

export function blockReceiptsJson(record: BlockRecord): RawJson {
  return memo(record, 'receipts:json', () => new RawJson(JSON.stringify(receiptObjects(record))))
}

/** Per-transaction gas used, derived from the cumulative figures. */
export function gasUsedPerTx(record: BlockRecord): bigint[] {
  return memo(record, 'gasUsed', () => {
    const out: bigint[] = []
    let previous = 0n
    for (const r of record.receipts()) {
      out.push(r.cumulativeGasUsed - previous)
      previous = r.cumulativeGasUsed
    }
    return out
  })
}

/** A matched log as JSON text, encoded once per block and log (a sealed block's logs never change). */
export function logJsonText(m: MatchedLog): string {
  return memo(m.block, `log:${m.logIndex}`, () => JSON.stringify(logJson(m)))
}

/** Matched logs as one JSON array, spliced from the per-log texts. */
export function logsJson(logs: readonly MatchedLog[]): RawJson {
  if (logs.length === 0) return new RawJson('[]')
  let out = '[' + logJsonText(logs[0])
  for (let i = 1; i < logs.length; i++) out += ',' + logJsonText(logs[i])
  return new RawJson(out + ']')
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
