// What a receipt shows of its transaction (its type, recipient, price, and for a creation the nonce),
// read from the transaction's EIP-2718 bytes as the block holds them. Building the @ethereumjs
// transaction object instead (which checks and derives every field) was half of the time spent turning
// a block's receipts into JSON, paid on the main thread when the block's first receipt is asked for.

import { RLP } from '@ethereumjs/rlp'
import { bytesToBigInt } from '@ethereumjs/util'

export interface ReceiptTx {
  type: number
  /** undefined: contract creation */
  to: Uint8Array | undefined
  nonce: bigint
  /** legacy and EIP-2930: the gas price; later types: the fee cap */
  maxFeePerGas: bigint
  /** legacy and EIP-2930: the gas price */
  maxPriorityFeePerGas: bigint
  /** EIP-4844 blobs carried */
  blobs: number
}

/** Positions of the fields in each type's RLP list (legacy: the list itself; typed: after the type byte). */
const LAYOUTS: Record<number, { nonce: number; tip: number; cap: number; to: number; blobHashes?: number }> = {
  0: { nonce: 0, tip: 1, cap: 1, to: 3 },
  1: { nonce: 1, tip: 2, cap: 2, to: 4 },
  2: { nonce: 1, tip: 2, cap: 3, to: 5 },
  3: { nonce: 1, tip: 2, cap: 3, to: 5, blobHashes: 10 },
  4: { nonce: 1, tip: 2, cap: 3, to: 5 },
}

export function receiptTxOf(raw: Uint8Array): ReceiptTx {
  const legacy = raw[0]! >= 0xc0
  const type = legacy ? 0 : raw[0]!
  const layout = LAYOUTS[type]
  if (layout === undefined) throw new Error(`transaction type ${type} is not supported`)
  const fields = RLP.decode(legacy ? raw : raw.subarray(1)) as Array<Uint8Array | Uint8Array[]>
  const to = fields[layout.to] as Uint8Array
  return {
    type,
    to: to.length === 0 ? undefined : to,
    nonce: bytesToBigInt(fields[layout.nonce] as Uint8Array),
    maxFeePerGas: bytesToBigInt(fields[layout.cap] as Uint8Array),
    maxPriorityFeePerGas: bytesToBigInt(fields[layout.tip] as Uint8Array),
    blobs: layout.blobHashes === undefined ? 0 : (fields[layout.blobHashes] as Uint8Array[]).length,
  }
}
