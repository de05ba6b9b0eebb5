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

/** Price per gas the sender pays: for fee-market txs baseFee + min(tip, maxFee - baseFee). */
export function effectiveGasPrice(tx: TypedTransaction, baseFee: bigint | undefined): bigint {
  if (tx.type === TYPE_LEGACY || tx.type === TYPE_ACCESS_LIST) return (tx as LegacyTx | AccessList2930Tx).gasPrice
  const { maxFeePerGas, maxPriorityFeePerGas } = tx as FeeMarket1559Tx
  return priceAt(maxFeePerGas, maxPriorityFeePerGas, baseFee)
}

/** Price per gas at `baseFee` for a fee cap and a tip; a legacy or EIP-2930 transaction's gas price, given as both, comes out unchanged. */
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
