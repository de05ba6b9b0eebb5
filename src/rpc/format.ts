// @ethereumjs blocks, transactions, receipts and logs -> the JSON objects geth 1.17 returns.
// Field names, presence and order follow geth: blocks and receipts are Go maps, which encoding/json
// writes with sorted keys; transactions and logs are Go structs, written in declaration order.
// Shapes are checked against ethereum/execution-apis (test/rpc/format.test.js).

import type { Block } from '@ethereumjs/block'
import type { Common } from '@ethereumjs/common'
import type {
  AccessList2930Tx,
  Blob4844Tx,
  EOACode7702Tx,
  FeeMarket1559Tx,
  LegacyTx,
  TypedTransaction,
} from '@ethereumjs/tx'
import type { Bloom as BloomClass } from '@ethereumjs/vm'
import { importEthereumjsModule } from '../evm/evm-internals.js'
import type { TxFields } from '../chain/tx-intake.js'
import { addressHex, bytesToHex, bytesToQuantity, quantity } from './hex.js'

// @ethereumjs/vm's Bloom from its own module: the package's index would load the whole VM and EVM into
// the main thread, which runs neither (~220 modules; ~6 MiB of an idle node's RSS)
const { Bloom } = await importEthereumjsModule<{ Bloom: typeof BloomClass }>('@ethereumjs/vm', 'bloom/index.js')

const TYPE_LEGACY = 0
const TYPE_ACCESS_LIST = 1
const TYPE_FEE_MARKET = 2
const TYPE_BLOB = 3
const TYPE_SET_CODE = 4

type Json = Record<string, unknown>

/** A receipt as the chain stores it; everything else is derived when formatting. */
export interface ReceiptRecord {
  status: 0 | 1
  cumulativeGasUsed: bigint
  logs: Array<[address: Uint8Array, topics: Uint8Array[], data: Uint8Array]>
}

export type LogRecord = ReceiptRecord['logs'][number]

/** Where a transaction sits in the chain; null for a pending transaction. */
export interface TxLocation {
  blockHash: string
  blockNumber: bigint
  /** geth 1.17 prints it and the execution-apis TransactionInfo schema requires it: pass it. */
  blockTimestamp?: bigint
  index: number
  baseFee: bigint | undefined
}

/** Price per gas the sender pays: for fee-market txs baseFee + min(tip, maxFee - baseFee). */
export function effectiveGasPrice(tx: TypedTransaction, baseFee: bigint | undefined): bigint {
  if (tx.type === TYPE_LEGACY || tx.type === TYPE_ACCESS_LIST) return (tx as LegacyTx | AccessList2930Tx).gasPrice
  const { maxFeePerGas, maxPriorityFeePerGas } = tx as FeeMarket1559Tx
  return priceAt(maxFeePerGas, maxPriorityFeePerGas, baseFee)
}

/** Price per gas at `baseFee` for a fee cap and a tip; a legacy or EIP-2930 transaction's gas price, given as both, comes out unchanged. */
function priceAt(maxFeePerGas: bigint, maxPriorityFeePerGas: bigint, baseFee: bigint | undefined): bigint {
  if (baseFee === undefined) return maxFeePerGas
  const withTip = baseFee + maxPriorityFeePerGas
  return withTip < maxFeePerGas ? withTip : maxFeePerGas
}

export function accessListJson(list: FeeMarket1559Tx['accessList']): Json[] {
  const out: Json[] = new Array(list.length)
  for (let i = 0; i < list.length; i++) {
    const [address, keys] = list[i]!
    const storageKeys: string[] = new Array(keys.length)
    for (let k = 0; k < keys.length; k++) storageKeys[k] = bytesToHex(keys[k]!)
    out[i] = { address: bytesToHex(address), storageKeys }
  }
  return out
}

export function authorizationListJson(list: EOACode7702Tx['authorizationList']): Json[] {
  const out: Json[] = new Array(list.length)
  for (let i = 0; i < list.length; i++) {
    const [chainId, address, nonce, yParity, r, s] = list[i]!
    out[i] = {
      chainId: bytesToQuantity(chainId),
      address: bytesToHex(address),
      nonce: bytesToQuantity(nonce),
      yParity: bytesToQuantity(yParity),
      r: bytesToQuantity(r),
      s: bytesToQuantity(s),
    }
  }
  return out
}

/** EIP-155 chain id encoded in a legacy v, or undefined for pre-EIP-155 (v = 27/28). */
function legacyChainId(v: bigint): bigint | undefined {
  return v >= 35n ? (v - 35n) / 2n : undefined
}

/**
 * A transaction as geth's RPCTransaction. `sender` is the 0x sender, already recovered.
 * `where` null: pending (blockHash, blockNumber, blockTimestamp and transactionIndex are null,
 * gasPrice of fee-market txs is maxFeePerGas).
 */
export function formatTransaction(tx: TypedTransaction, sender: string, where: TxLocation | null): Json {
  const type = tx.type
  const feeMarket = type === TYPE_FEE_MARKET || type === TYPE_BLOB || type === TYPE_SET_CODE
  const v = tx.v ?? 0n
  const out: Json = {
    blockHash: where === null ? null : where.blockHash,
    blockNumber: where === null ? null : quantity(where.blockNumber),
  }
  if (where === null) out.blockTimestamp = null
  else if (where.blockTimestamp !== undefined) out.blockTimestamp = quantity(where.blockTimestamp)
  out.from = sender
  out.gas = quantity(tx.gasLimit)
  if (feeMarket) {
    const fm = tx as FeeMarket1559Tx
    out.gasPrice = quantity(where === null ? fm.maxFeePerGas : effectiveGasPrice(tx, where.baseFee))
    out.maxFeePerGas = quantity(fm.maxFeePerGas)
    out.maxPriorityFeePerGas = quantity(fm.maxPriorityFeePerGas)
    if (type === TYPE_BLOB) out.maxFeePerBlobGas = quantity((tx as Blob4844Tx).maxFeePerBlobGas)
  } else {
    out.gasPrice = quantity((tx as LegacyTx).gasPrice)
  }
  out.hash = bytesToHex(tx.hash())
  out.input = bytesToHex(tx.data)
  out.nonce = quantity(tx.nonce)
  out.to = tx.to === undefined ? null : addressHex(tx.to)
  out.transactionIndex = where === null ? null : quantity(where.index)
  out.value = quantity(tx.value)
  out.type = quantity(type)
  if (type === TYPE_LEGACY) {
    const chainId = legacyChainId(v)
    if (chainId !== undefined) out.chainId = quantity(chainId)
  } else {
    out.accessList = accessListJson((tx as AccessList2930Tx).accessList)
    out.chainId = quantity((tx as AccessList2930Tx).chainId)
    if (type === TYPE_BLOB) out.blobVersionedHashes = (tx as Blob4844Tx).blobVersionedHashes.map((h) => h.toLowerCase())
    if (type === TYPE_SET_CODE) out.authorizationList = authorizationListJson((tx as EOACode7702Tx).authorizationList)
  }
  out.v = quantity(v)
  out.r = quantity(tx.r ?? 0n)
  out.s = quantity(tx.s ?? 0n)
  if (type !== TYPE_LEGACY) out.yParity = quantity(v)
  return out
}

/**
 * A block as geth's RPCMarshalBlock. `senders[i]` is the sender of transaction i (used only with
 * fullTransactions); `size` is the RLP-encoded block length.
 */
export function formatBlock(block: Block, opts: { fullTransactions: boolean; senders: string[]; size: number }): Json {
  const h = block.header
  const hash = bytesToHex(block.hash())
  const txs = block.transactions
  const transactions: unknown[] = new Array(txs.length)
  if (opts.fullTransactions) {
    const where: TxLocation = {
      blockHash: hash,
      blockNumber: h.number,
      blockTimestamp: h.timestamp,
      index: 0,
      baseFee: h.baseFeePerGas,
    }
    for (let i = 0; i < txs.length; i++) {
      where.index = i
      const sender = opts.senders[i]
      if (sender === undefined) throw new Error(`formatBlock: no sender for transaction ${i}`)
      transactions[i] = formatTransaction(txs[i]!, sender, where)
    }
  } else {
    for (let i = 0; i < txs.length; i++) transactions[i] = bytesToHex(txs[i]!.hash())
  }
  // Keys in geth's (sorted) order; optional header fields appear only when the header has them.
  const out: Json = {}
  if (h.baseFeePerGas !== undefined) out.baseFeePerGas = quantity(h.baseFeePerGas)
  if (h.blobGasUsed !== undefined) out.blobGasUsed = quantity(h.blobGasUsed)
  out.difficulty = quantity(h.difficulty)
  if (h.excessBlobGas !== undefined) out.excessBlobGas = quantity(h.excessBlobGas)
  out.extraData = bytesToHex(h.extraData)
  out.gasLimit = quantity(h.gasLimit)
  out.gasUsed = quantity(h.gasUsed)
  out.hash = hash
  out.logsBloom = bytesToHex(h.logsBloom)
  out.miner = addressHex(h.coinbase)
  out.mixHash = bytesToHex(h.mixHash)
  out.nonce = bytesToHex(h.nonce)
  out.number = quantity(h.number)
  if (h.parentBeaconBlockRoot !== undefined) out.parentBeaconBlockRoot = bytesToHex(h.parentBeaconBlockRoot)
  out.parentHash = bytesToHex(h.parentHash)
  out.receiptsRoot = bytesToHex(h.receiptTrie)
  if (h.requestsHash !== undefined) out.requestsHash = bytesToHex(h.requestsHash)
  out.sha3Uncles = bytesToHex(h.uncleHash)
  out.size = quantity(opts.size)
  out.stateRoot = bytesToHex(h.stateRoot)
  out.timestamp = quantity(h.timestamp)
  out.transactions = transactions
  out.transactionsRoot = bytesToHex(h.transactionsTrie)
  out.uncles = block.uncleHeaders.map((u) => bytesToHex(u.hash()))
  if (h.withdrawalsRoot !== undefined) {
    const withdrawals = block.withdrawals ?? []
    out.withdrawals = withdrawals.map((w) => ({
      index: quantity(w.index),
      validatorIndex: quantity(w.validatorIndex),
      address: addressHex(w.address),
      amount: quantity(w.amount),
    }))
    out.withdrawalsRoot = bytesToHex(h.withdrawalsRoot)
  }
  return out
}

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
export function formatLog(log: LogRecord, ctx: LogContext): Json {
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

/** The bloom of a receipt without logs (most transfers), as one flat string. */
const EMPTY_BLOOM_HEX = `0x${'00'.repeat(256)}`

/** The 2048-bit bloom of a receipt's logs (addresses and topics). */
export function receiptBloom(logs: readonly LogRecord[], common?: TypedTransaction['common']): Uint8Array {
  const bloom = new Bloom(undefined, common)
  for (const [address, topics] of logs) {
    bloom.add(address)
    for (const topic of topics) bloom.add(topic)
  }
  return bloom.bitvector
}

/** What a receipt shows of its transaction, read from the bytes the block holds (tx-intake.ts readTxFields). */
export type ReceiptTx = Pick<TxFields, 'type' | 'to' | 'nonce' | 'maxFeePerGas' | 'maxPriorityFeePerGas'>

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
  // no blobGasUsed / blobGasPrice: the chain takes no blob transactions (intake refuses type 3)
  const out: Json = {}
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
  out.status = quantity(receipt.status)
  out.to = tx.to.length === 0 ? null : bytesToHex(tx.to)
  out.transactionHash = transactionHash
  out.transactionIndex = quantity(args.index)
  out.type = quantity(tx.type)
  return out
}
