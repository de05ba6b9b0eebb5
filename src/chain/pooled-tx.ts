// A transaction as the pool holds it: decoded once, sender recovered once, fee fields normalised so that
// legacy / 2930 / 1559 / 7702 txs compare the same way. Crossing threads uses the compact wire form, which
// carries the recovered public key so the receiving thread never runs ecrecover again.

import type { Common } from '@ethereumjs/common'
import { createTxFromRLP, TransactionType } from '@ethereumjs/tx'
import type { TransactionCache, TypedTransaction } from '@ethereumjs/tx'
import { bytesToHex, hexToBytes, publicToAddress } from '@ethereumjs/util'
import { trustedHexToBytes } from '../util/hex.js'

export interface PooledTx {
  /** 0x-prefixed lowercase hash. */
  hash: string
  /** 0x-prefixed lowercase address. */
  sender: string
  /** 64-byte uncompressed public key (no 0x04 prefix), injected into tx.cache.senderPubKey. */
  senderPubKey: Uint8Array
  tx: TypedTransaction
  /** The EIP-2718 encoding as received. */
  raw: Uint8Array
  type: number
  nonce: bigint
  gasLimit: bigint
  /** gasPrice for legacy and 2930 txs. */
  maxFeePerGas: bigint
  /** gasPrice for legacy and 2930 txs. */
  maxPriorityFeePerGas: bigint
  value: bigint
  /** gasLimit * maxFeePerGas + value: the most the sender can be charged. */
  cost: bigint
  /** Encoded size in bytes. */
  size: number
  /** Arrival time in ms since the epoch. */
  arrivedAt: number
}

/** Structured-clone friendly form for postMessage between threads. */
export interface PooledTxWire {
  raw: Uint8Array
  senderPubKey: Uint8Array
  hash: string
  sender: string
  arrivedAt: number
}

/** Fee fields of any supported tx type, as (maxFeePerGas, maxPriorityFeePerGas). */
export function feeFields(tx: TypedTransaction): { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint } {
  if (tx.type === TransactionType.Legacy || tx.type === TransactionType.AccessListEIP2930) {
    const price = (tx as { gasPrice: bigint }).gasPrice
    return { maxFeePerGas: price, maxPriorityFeePerGas: price }
  }
  const t = tx as { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }
  return { maxFeePerGas: t.maxFeePerGas, maxPriorityFeePerGas: t.maxPriorityFeePerGas }
}

/** Address of a 64-byte public key, hashed with the Common's keccak when it has a fast one. */
export function senderAddressOf(senderPubKey: Uint8Array, common: Common): string {
  const keccak = common.customCrypto.keccak256
  return bytesToHex(keccak !== undefined ? keccak(senderPubKey).subarray(12) : publicToAddress(senderPubKey))
}

/**
 * Builds the pool entry of a decoded, signed tx whose sender public key is already known. The key is
 * injected into the tx cache, with the sender, so getSenderAddress()/runTx never recover or hash it again.
 */
export function makePooledTx(
  tx: TypedTransaction,
  raw: Uint8Array,
  senderPubKey: Uint8Array,
  sender: string,
  hash: string,
  arrivedAt: number,
): PooledTx {
  const cache = tx.cache as TransactionCache & { keelSenderAddress?: Uint8Array }
  cache.senderPubKey = senderPubKey
  // read by getSenderAddress() (patches/@ethereumjs+tx): runTx asks for it, and would hash the key again.
  // Copied out of the Buffer pool's shared slab, which a view would keep alive as long as the tx is pooled.
  cache.keelSenderAddress = new Uint8Array(trustedHexToBytes(sender))
  const { maxFeePerGas, maxPriorityFeePerGas } = feeFields(tx)
  return {
    hash,
    sender,
    senderPubKey,
    tx,
    raw,
    type: tx.type,
    nonce: tx.nonce,
    gasLimit: tx.gasLimit,
    maxFeePerGas,
    maxPriorityFeePerGas,
    value: tx.value,
    cost: tx.gasLimit * maxFeePerGas + tx.value,
    size: raw.length,
    arrivedAt,
  }
}

/** min(maxPriorityFeePerGas, maxFeePerGas - baseFee); negative when the tx cannot pay the base fee. */
export function effectiveTip(ptx: PooledTx, baseFee: bigint): bigint {
  const headroom = ptx.maxFeePerGas - baseFee
  return headroom < ptx.maxPriorityFeePerGas ? headroom : ptx.maxPriorityFeePerGas
}

export function toWire(ptx: PooledTx): PooledTxWire {
  return { raw: ptx.raw, senderPubKey: ptx.senderPubKey, hash: ptx.hash, sender: ptx.sender, arrivedAt: ptx.arrivedAt }
}

/** Rebuilds a pooled tx from its wire form without signature recovery (the wire form is trusted). */
export function fromWire(wire: PooledTxWire, common: Common): PooledTx {
  const tx = createTxFromRLP(wire.raw, { common })
  tx.cache.hash = hexToBytes(wire.hash as `0x${string}`)
  return makePooledTx(tx, wire.raw, wire.senderPubKey, wire.sender, wire.hash, wire.arrivedAt)
}

/**
 * The transaction object of geth's txpool_content / eth_getTransactionByHash for a tx not yet in a
 * block: block fields null, gasPrice = maxFeePerGas for 1559-style txs (geth newRPCPendingTransaction).
 */
export function pendingRpcTransaction(ptx: PooledTx): Record<string, unknown> {
  const json = ptx.tx.toJSON() as Record<string, unknown>
  const out: Record<string, unknown> = {
    blockHash: null,
    blockNumber: null,
    from: ptx.sender,
    gas: json.gasLimit,
    gasPrice: `0x${ptx.maxFeePerGas.toString(16)}`,
  }
  if (ptx.type === TransactionType.FeeMarketEIP1559 || ptx.type === TransactionType.EOACodeEIP7702) {
    out.maxFeePerGas = json.maxFeePerGas
    out.maxPriorityFeePerGas = json.maxPriorityFeePerGas
  }
  out.hash = ptx.hash
  out.input = json.data
  out.nonce = json.nonce
  out.to = json.to ?? null
  out.transactionIndex = null
  out.value = json.value
  out.type = json.type
  if (ptx.type !== TransactionType.Legacy) {
    out.accessList = json.accessList
    out.chainId = json.chainId
  } else if (ptx.tx.v !== undefined && ptx.tx.v >= 35n) {
    out.chainId = json.chainId
  }
  if (ptx.type === TransactionType.EOACodeEIP7702) out.authorizationList = json.authorizationList
  out.v = json.v
  out.r = json.r
  out.s = json.s
  if (ptx.type !== TransactionType.Legacy) out.yParity = json.v
  return out
}
