// An @ethereumjs transaction -> the JSON object geth 1.17 returns for it (RPCTransaction), and the pieces
// of it other answers reuse (effective gas price, access and authorization lists). A transaction is a Go
// struct in geth, so its fields come in declaration order. Shapes are checked against
// ethereum/execution-apis (test/json/format.test.js).

import type {
  AccessList2930Tx,
  Blob4844Tx,
  EOACode7702Tx,
  FeeMarket1559Tx,
  LegacyTx,
  TypedTransaction,
} from '@ethereumjs/tx'
import { addressHex, bytesToHex, bytesToQuantity, quantity } from '../util/hex.js'

const TYPE_LEGACY = 0
const TYPE_ACCESS_LIST = 1
const TYPE_FEE_MARKET = 2
const TYPE_BLOB = 3
const TYPE_SET_CODE = 4

type Json = Record<string, unknown>

/** Where a transaction sits in the chain; null for a pending transaction. */
export interface TxLocation {
  blockHash: string
  blockNumber: bigint
  /** geth 1.17 prints it and the execution-apis TransactionInfo schema requires it: pass it. */
  blockTimestamp?: bigint
  index: number
  baseFee: bigint | undefined
}

/**
 * Price per gas the sender pays at `baseFee`: for fee-market txs baseFee + min(tip, maxFee - baseFee); a
 * legacy or EIP-2930 transaction's gas price, given as both, comes out unchanged.
 */
export function priceAt(maxFeePerGas: bigint, maxPriorityFeePerGas: bigint, baseFee: bigint | undefined): bigint {
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

/** What a transaction's JSON is made of, whether read from a transaction object or from its bytes. */
interface TxParts {
  type: number
  gasLimit: bigint
  /** legacy and EIP-2930: the gas price */
  maxFeePerGas: bigint
  /** legacy and EIP-2930: the gas price */
  maxPriorityFeePerGas: bigint
  hash: string
  data: Uint8Array
  nonce: bigint
  /** undefined for a contract creation */
  to: Uint8Array | undefined
  value: bigint
  /** typed transactions' (a legacy one's is derived from v) */
  chainId: bigint | undefined
  v: bigint
  r: bigint
  s: bigint
}

/**
 * A transaction as geth's RPCTransaction. `sender` is the 0x sender, already recovered.
 * `where` null: pending (blockHash, blockNumber, blockTimestamp and transactionIndex are null,
 * gasPrice of fee-market txs is maxFeePerGas).
 */
export function formatTransaction(tx: TypedTransaction, sender: string, where: TxLocation | null): Json {
  const type = tx.type
  const legacyPrice = type === TYPE_LEGACY || type === TYPE_ACCESS_LIST
  const fm = tx as FeeMarket1559Tx
  const parts: TxParts = {
    type,
    gasLimit: tx.gasLimit,
    maxFeePerGas: legacyPrice ? (tx as LegacyTx).gasPrice : fm.maxFeePerGas,
    maxPriorityFeePerGas: legacyPrice ? (tx as LegacyTx).gasPrice : fm.maxPriorityFeePerGas,
    hash: bytesToHex(tx.hash()),
    data: tx.data,
    nonce: tx.nonce,
    to: tx.to?.bytes,
    value: tx.value,
    chainId: type === TYPE_LEGACY ? undefined : (tx as AccessList2930Tx).chainId,
    v: tx.v ?? 0n,
    r: tx.r ?? 0n,
    s: tx.s ?? 0n,
  }
  return formatParts(parts, sender, where, tx)
}

/** The fields of a transaction as its bytes hold them (chain/tx-intake.ts readTxFields). */
export interface TxFieldsForJson extends Omit<TxParts, 'hash' | 'to'> {
  /** empty for a contract creation */
  to: Uint8Array
  accessListLength: number
}

/**
 * Whether formatTransactionFields gives a transaction's JSON: legacy ones, and EIP-2930 and EIP-1559
 * ones with an empty access list. The rest carry lists only the transaction object decodes.
 */
export function formatsFromFields(f: TxFieldsForJson): boolean {
  return f.type === TYPE_LEGACY || ((f.type === TYPE_ACCESS_LIST || f.type === TYPE_FEE_MARKET) && f.accessListLength === 0)
}

/**
 * formatTransaction's answer from the fields the transaction's bytes hold and its known hash, for those
 * formatsFromFields takes: without the transaction object (its constructor's checks and conversions, and
 * its hash encoded and hashed again), a block's full JSON takes a fraction of the time
 * (docs/measurements.md#block-sized-work-on-the-main-thread).
 */
export function formatTransactionFields(f: TxFieldsForJson, hash: string, sender: string, where: TxLocation | null): Json {
  return formatParts({ ...f, hash, to: f.to.length === 0 ? undefined : f.to }, sender, where, undefined)
}

/** `tx`: the transaction object, for the lists of typed transactions; without it they have none. */
function formatParts(p: TxParts, sender: string, where: TxLocation | null, tx: TypedTransaction | undefined): Json {
  const type = p.type
  const feeMarket = type === TYPE_FEE_MARKET || type === TYPE_BLOB || type === TYPE_SET_CODE
  const v = p.v
  const out: Json = {
    blockHash: where === null ? null : where.blockHash,
    blockNumber: where === null ? null : quantity(where.blockNumber),
  }
  if (where === null) out.blockTimestamp = null
  else if (where.blockTimestamp !== undefined) out.blockTimestamp = quantity(where.blockTimestamp)
  out.from = sender
  out.gas = quantity(p.gasLimit)
  if (feeMarket) {
    out.gasPrice = quantity(where === null ? p.maxFeePerGas : priceAt(p.maxFeePerGas, p.maxPriorityFeePerGas, where.baseFee))
    out.maxFeePerGas = quantity(p.maxFeePerGas)
    out.maxPriorityFeePerGas = quantity(p.maxPriorityFeePerGas)
    if (type === TYPE_BLOB) out.maxFeePerBlobGas = quantity((tx as Blob4844Tx).maxFeePerBlobGas)
  } else {
    out.gasPrice = quantity(p.maxFeePerGas)
  }
  out.hash = p.hash
  out.input = bytesToHex(p.data)
  out.nonce = quantity(p.nonce)
  out.to = p.to === undefined ? null : addressHex(p.to)
  out.transactionIndex = where === null ? null : quantity(where.index)
  out.value = quantity(p.value)
  out.type = quantity(type)
  if (type === TYPE_LEGACY) {
    const chainId = legacyChainId(v)
    if (chainId !== undefined) out.chainId = quantity(chainId)
  } else {
    out.accessList = tx === undefined ? [] : accessListJson((tx as AccessList2930Tx).accessList)
    out.chainId = quantity(p.chainId!)
    if (type === TYPE_BLOB) out.blobVersionedHashes = (tx as Blob4844Tx).blobVersionedHashes.map((h) => h.toLowerCase())
    if (type === TYPE_SET_CODE) out.authorizationList = authorizationListJson((tx as EOACode7702Tx).authorizationList)
  }
  out.v = quantity(v)
  out.r = quantity(p.r)
  out.s = quantity(p.s)
  if (type !== TYPE_LEGACY) out.yParity = quantity(v)
  return out
}
