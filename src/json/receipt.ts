// A stored receipt -> the JSON object geth 1.17 returns for it (MarshalReceipt, a Go map: keys sorted),
// with the logs bloom it carries. Shapes are checked against ethereum/execution-apis
// (test/json/format.test.js).

import type { Common } from '@ethereumjs/common'
import type { TypedTransaction } from '@ethereumjs/tx'
import type { Bloom as BloomClass } from '@ethereumjs/vm'
import type { ReceiptRecord, StoredLog } from '../chain/receipts.js'
import type { TxFields } from '../chain/tx-fields.js'
import { importEthereumjsModule } from '../evm/evm-internals.js'
import { bytesToHex, quantity } from '../util/hex.js'
import { formatLog } from './log.js'
import { priceAt } from './transaction.js'

// @ethereumjs/vm's Bloom from its own module: the package's index would load the whole VM and EVM into
// the main thread, which runs neither (~220 modules; ~6 MiB of an idle node's RSS)
const { Bloom } = await importEthereumjsModule<{ Bloom: typeof BloomClass }>('@ethereumjs/vm', 'bloom/index.js')

type Json = Record<string, unknown>

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

/** What a receipt shows of its transaction, read from the bytes the block holds (tx-intake.ts readTxFields). */
export type ReceiptTx = Pick<TxFields, 'type' | 'to' | 'nonce' | 'maxFeePerGas' | 'maxPriorityFeePerGas'> & { blobCount?: number }

export interface ReceiptArgs {
  tx: ReceiptTx
  transactionHash: string
  common: Common
  sender: string
  receipt: ReceiptRecord
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

/** A receipt as geth's MarshalReceipt (keys sorted as geth prints them). */
export function formatReceipt(args: ReceiptArgs): Json {
  const { tx, receipt, transactionHash } = args
  const logs: Json[] = new Array(receipt.logs.length)
  for (let k = 0; k < receipt.logs.length; k++) {
    logs[k] = formatLog(receipt.logs[k]!, {
      blockHash: args.blockHash,
      blockNumber: args.blockNumber,
      blockTimestamp: args.blockTimestamp,
      transactionHash,
      transactionIndex: args.index,
      logIndex: args.firstLogIndex + k,
      removed: false,
    })
  }
  const out: Json = {}
  // blob transactions come only in blocks from elsewhere (keel import): the pool takes none
  if (tx.type === 3 && args.blobGasPrice !== undefined) {
    out.blobGasPrice = quantity(args.blobGasPrice)
    out.blobGasUsed = quantity(BigInt(tx.blobCount ?? 0) * BLOB_GAS_PER_BLOB)
  }
  out.blockHash = args.blockHash
  out.blockNumber = quantity(args.blockNumber)
  out.contractAddress = args.contractAddress
  out.cumulativeGasUsed = quantity(receipt.cumulativeGasUsed)
  out.effectiveGasPrice = quantity(priceAt(tx.maxFeePerGas, tx.maxPriorityFeePerGas, args.baseFee))
  out.from = args.sender
  out.gasUsed = quantity(args.gasUsed)
  out.logs = logs
  out.logsBloom =
    args.logsBloom === undefined && receipt.logs.length === 0 ? EMPTY_BLOOM_HEX : bytesToHex(args.logsBloom ?? receiptBloom(receipt.logs, args.common))
  // before Byzantium (EIP-658) a receipt has the state root after its transaction, and no status
  if (receipt.root !== undefined) out.root = bytesToHex(receipt.root)
  else out.status = quantity(receipt.status)
  out.to = tx.to.length === 0 ? null : bytesToHex(tx.to)
  out.transactionHash = transactionHash
  out.transactionIndex = quantity(args.index)
  out.type = quantity(tx.type)
  return out
}
