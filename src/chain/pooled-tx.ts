// A transaction as the pool holds it: its bytes, the fields the pool orders and checks by (read from the
// bytes once, fee fields normalised so that legacy / 2930 / 1559 / 7702 txs compare the same way) and its
// sender, recovered once at intake. @ethereumjs's transaction object is built when the transaction runs
// (tx-object.ts), not kept: held from arrival until its block sealed, every one outlived the producer's
// young generation, and a plain transfer never needs it
// (docs/measurements.md#the-pool-without-transaction-objects). Crossing threads uses the compact wire
// form, which carries the recovered public key so no thread runs ecrecover again.

import type { Common } from '@ethereumjs/common'
import { bytesToHex, publicToAddress } from '@ethereumjs/util'
import { readTxFields } from './tx-fields.js'

export interface PooledTx {
  /** 0x-prefixed lowercase hash. */
  hash: string
  /** 0x-prefixed lowercase address. */
  sender: string
  /** 64-byte uncompressed public key (no 0x04 prefix), injected into the transaction object's cache. */
  senderPubKey: Uint8Array
  /** The EIP-2718 encoding as received. */
  raw: Uint8Array
  type: number
  nonce: bigint
  gasLimit: bigint
  /** gasPrice for legacy and 2930 txs. */
  maxFeePerGas: bigint
  /** gasPrice for legacy and 2930 txs. */
  maxPriorityFeePerGas: bigint
  /** The recipient's 20 bytes; undefined for a contract creation. */
  to: Uint8Array | undefined
  value: bigint
  /** Calldata bytes and access-list entries: whether the transaction can be a plain transfer (plain-transfer.ts). */
  dataLength: number
  accessListLength: number
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

/** Address of a 64-byte public key, hashed with the Common's keccak when it has a fast one. */
export function senderAddressOf(senderPubKey: Uint8Array, common: Common): string {
  const keccak = common.customCrypto.keccak256
  return bytesToHex(keccak !== undefined ? keccak(senderPubKey).subarray(12) : publicToAddress(senderPubKey))
}

/** min(maxPriorityFeePerGas, maxFeePerGas - baseFee); negative when the tx cannot pay the base fee. */
export function effectiveTip(ptx: PooledTx, baseFee: bigint): bigint {
  const headroom = ptx.maxFeePerGas - baseFee
  return headroom < ptx.maxPriorityFeePerGas ? headroom : ptx.maxPriorityFeePerGas
}

export function toWire(ptx: PooledTx): PooledTxWire {
  return { raw: ptx.raw, senderPubKey: ptx.senderPubKey, hash: ptx.hash, sender: ptx.sender, arrivedAt: ptx.arrivedAt }
}

/**
 * The pool entry of a transaction from its wire form, without signature recovery (the wire form is
 * trusted: its bytes passed intake on this node, tx-intake.ts, whose decoding this repeats).
 */
export function fromWire(wire: PooledTxWire): PooledTx {
  const f = readTxFields(wire.raw)
  return {
    hash: wire.hash,
    sender: wire.sender,
    senderPubKey: wire.senderPubKey,
    raw: wire.raw,
    type: f.type,
    nonce: f.nonce,
    gasLimit: f.gasLimit,
    maxFeePerGas: f.maxFeePerGas,
    maxPriorityFeePerGas: f.maxPriorityFeePerGas,
    to: f.to.length === 0 ? undefined : f.to,
    value: f.value,
    dataLength: f.data.length,
    accessListLength: f.accessListLength,
    cost: f.gasLimit * f.maxFeePerGas + f.value,
    size: wire.raw.length,
    arrivedAt: wire.arrivedAt,
  }
}
