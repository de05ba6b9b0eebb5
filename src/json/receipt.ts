// A stored receipt -> the JSON text geth 1.17 returns for it (MarshalReceipt, a Go map: keys sorted),
// with the logs bloom it carries. Shapes are checked against ethereum/execution-apis
// (test/json/format.test.js).

import type { Common } from '@ethereumjs/common'
import type { TypedTransaction } from '@ethereumjs/tx'
import { bytesToBigInt } from '@ethereumjs/util'
import type { Bloom as BloomClass } from '@ethereumjs/vm'
import { emptySpan, readStoredReceipt } from '../chain/receipts.js'
import type { StoredLog } from '../chain/receipts.js'
import type { ReceiptTxFields } from '../chain/tx-fields.js'
import { importEthereumjsModule } from '../evm/evm-internals.js'
import { bytesToHex, quantity } from '../util/hex.js'
import { RlpCursor } from '../util/rlp-cursor.js'
import { encodeReceiptLogs } from './log.js'
import { priceAt } from './transaction.js'

// @ethereumjs/vm's Bloom from its own module: the package's index would load the whole VM and EVM into
// the main thread, which runs neither (~220 modules; ~6 MiB of an idle node's RSS)
const { Bloom } = await importEthereumjsModule<{ Bloom: typeof BloomClass }>('@ethereumjs/vm', 'bloom/index.js')

/** EIP-4844's GAS_PER_BLOB */
const BLOB_GAS_PER_BLOB = 131_072n

/** The bloom of a receipt without logs (most transfers), as one flat string. */
const EMPTY_BLOOM_HEX = `0x${'00'.repeat(256)}`

/** The 2048-bit bloom of a receipt's logs (addresses and topics). */
export function receiptBloom(logs: readonly StoredLog[], common?: TypedTransaction['common']): Uint8Array {
  const bloom = new Bloom(undefined, common)
  for (const [address, topics] of logs) {
    bloom.add(address)
    for (const topic of topics) bloom.add(topic)
  }
  return bloom.bitvector
}

/** What a receipt shows of its transaction, read from the bytes the block holds (tx-fields.ts readReceiptTxFields). */
export type ReceiptTx = Pick<ReceiptTxFields, 'type' | 'to' | 'nonce' | 'maxFeePerGas' | 'maxPriorityFeePerGas'> & { blobCount?: number }

export interface ReceiptArgs {
  tx: ReceiptTx
  transactionHash: string
  common: Common
  sender: string
  /** The stored receipt: its own item of the block's receipts (src/chain/receipts.ts encodeStoredReceipt). */
  receipt: Uint8Array
  gasUsed: bigint
  blockHash: string
  blockNumber: bigint
  /** Passed on to the logs (geth 1.17 prints it in each log). */
  blockTimestamp?: bigint
  index: number
  baseFee: bigint | undefined
  /** Block-wide index of this receipt's first log. */
  firstLogIndex: number
  contractAddress: string | null
  /** Computed from the logs when not given. */
  logsBloom?: Uint8Array
  /** the block's blob base fee (Cancun on): a blob transaction's receipt shows it */
  blobGasPrice?: bigint
}

const malformed = (detail: string): Error => new Error(`malformed stored receipt: ${detail}`)

/**
 * A receipt as geth's MarshalReceipt prints it (a Go map: keys sorted), as JSON text written from the
 * stored receipt's bytes where they lie: its logs as the logs' encoder writes them (log.ts
 * encodeReceiptLogs, the bytes eth_getLogs answers with), its bloom from its logs' addresses and topics.
 * No object is built and stringified (14-30 against 33-66 µs a receipt, with its transaction's fields,
 * docs/measurements.md#receipts-written-as-text); every value is hex, a hash or null: nothing to escape.
 */
export function receiptText(args: ReceiptArgs): string {
  const { tx, receipt: item } = args
  const c = new RlpCursor(malformed)
  const span = emptySpan()
  readStoredReceipt(item, 0, item.length, c, span, args.index)
  const { statusStart, statusEnd, logsStart, logsEnd } = span
  const cumulativeGasUsed = bytesToBigInt(item.subarray(span.gasStart, span.gasEnd))
  const logs = encodeReceiptLogs(item, logsStart, logsEnd, args.transactionHash, args.index, args.firstLogIndex, args)
  const bloom =
    args.logsBloom !== undefined ? bytesToHex(args.logsBloom) : logsStart === logsEnd ? EMPTY_BLOOM_HEX : bytesToHex(bloomOfLogs(item, c, logsStart, logsEnd, args.common))
  // before Byzantium (EIP-658) a receipt holds the state root after its transaction instead of a status
  const outcome =
    statusEnd - statusStart === 32
      ? '"root":"' + bytesToHex(item.subarray(statusStart, statusEnd)) + '"'
      : '"status":"' + (statusEnd > statusStart && item[statusStart] === 1 ? '0x1' : '0x0') + '"'
  // blob transactions come only in blocks from elsewhere (keel import): the pool takes none
  const blob =
    tx.type === 3 && args.blobGasPrice !== undefined
      ? '"blobGasPrice":"' + quantity(args.blobGasPrice) + '","blobGasUsed":"' + quantity(BigInt(tx.blobCount ?? 0) * BLOB_GAS_PER_BLOB) + '",'
      : ''
  return (
    '{' + blob +
    '"blockHash":"' + args.blockHash +
    '","blockNumber":"' + quantity(args.blockNumber) +
    '","contractAddress":' + (args.contractAddress === null ? 'null' : '"' + args.contractAddress + '"') +
    ',"cumulativeGasUsed":"' + quantity(cumulativeGasUsed) +
    '","effectiveGasPrice":"' + quantity(priceAt(tx.maxFeePerGas, tx.maxPriorityFeePerGas, args.baseFee)) +
    '","from":"' + args.sender +
    '","gasUsed":"' + quantity(args.gasUsed) +
    '","logs":[' + logs +
    '],"logsBloom":"' + bloom +
    '",' + outcome +
    ',"to":' + (tx.to.length === 0 ? 'null' : '"' + bytesToHex(tx.to) + '"') +
    ',"transactionHash":"' + args.transactionHash +
    '","transactionIndex":"' + quantity(args.index) +
    '","type":"' + quantity(tx.type) +
    '"}'
  )
}

/**
 * The bits bloomOfLogs sets, reused: its bloom is written out as hex at once, and a fresh 256-byte array
 * per receipt read lives outside V8's heap (allocated, tracked and freed each time).
 */
const scratchBloom = new Uint8Array(256)

/**
 * The bloom of the logs whose list payload is item[logsStart, logsEnd): their addresses and topics. The
 * bytes are a shared buffer, valid until the next call: the caller encodes them before anything else runs.
 */
function bloomOfLogs(item: Uint8Array, c: RlpCursor, logsStart: number, logsEnd: number, common: Common): Uint8Array {
  scratchBloom.fill(0)
  const bloom = new Bloom(scratchBloom, common)
  for (let pos = logsStart; pos < logsEnd; ) {
    c.read(item, pos, logsEnd)
    const logEnd = c.end
    pos = c.end
    c.read(item, c.start, logEnd)
    bloom.add(item.subarray(c.start, c.end))
    c.read(item, c.end, logEnd)
    const topicsEnd = c.end
    for (let t = c.start; t < topicsEnd; t = c.end) {
      c.read(item, t, topicsEnd)
      bloom.add(item.subarray(c.start, c.end))
    }
  }
  return bloom.bitvector
}
