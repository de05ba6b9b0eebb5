// The fields of a signed transaction read straight from its EIP-2718 bytes, without @ethereumjs's
// transaction object: intake validates them (tx-intake.ts), the pool keeps them (pooled-tx.ts), receipts
// and the explorer's indexes read a block's transactions with them.

import { RLP } from '@ethereumjs/rlp'
import type { NestedUint8Array } from '@ethereumjs/rlp'
import { bytesToBigInt } from '@ethereumjs/util'
import { serverError } from '../errors.js'
import type { RpcError } from '../errors.js'
import { RlpCursor } from '../util/rlp-cursor.js'

/** geth's wording for a transaction its decoder refuses. */
export const invalidTransaction = (cause: string): RpcError => serverError(`invalid transaction: ${cause}`)
const unknownTxType = (): RpcError => serverError('transaction type not supported')

/**
 * The fields validation needs, read straight from the RLP (field order per tx type). Receipts read their
 * transaction's type, recipient, nonce and price from the block's bytes with it too (rpc/methods/chain-json.ts):
 * every transaction a block holds passed it at intake.
 */
export interface TxFields {
  type: number
  /** undefined for a legacy tx without EIP-155 protection. */
  chainId: bigint | undefined
  nonce: bigint
  gasLimit: bigint
  /** legacy and EIP-2930: the gas price */
  maxFeePerGas: bigint
  /** legacy and EIP-2930: the gas price */
  maxPriorityFeePerGas: bigint
  /** empty for a contract creation */
  to: Uint8Array
  value: bigint
  data: Uint8Array
  /** Legacy: v as signed; typed: yParity. */
  v: bigint
  r: bigint
  s: bigint
  /** entries of the access list (0 for legacy) */
  accessListLength: number
  authorizationCount: number
  /** blob transactions (type 3), read from blocks only: the pool takes none */
  maxFeePerBlobGas: bigint | undefined
  blobCount: number
  /** The decoded RLP list, handed to the @ethereumjs constructor. */
  values: NestedUint8Array
}

export function readTxFields(raw: Uint8Array): TxFields {
  if (raw.length === 0) throw invalidTransaction('typed transaction too short')
  const first = raw[0]!
  let type = 0
  let payload = raw
  if (first <= 0x7f) {
    type = first
    if (type !== 1 && type !== 2 && type !== 3 && type !== 4) throw unknownTxType()
    if (raw.length <= 1) throw invalidTransaction('typed transaction too short')
    payload = raw.subarray(1)
  }
  let decoded: Uint8Array | NestedUint8Array
  try {
    decoded = RLP.decode(payload)
  } catch (err) {
    throw invalidTransaction(`rlp: ${(err as Error).message}`)
  }
  if (!Array.isArray(decoded)) throw invalidTransaction('rlp: expected input list')
  const values = decoded
  // a blob transaction as a block holds it: without its sidecar (14 fields)
  const expected = type === 0 ? 9 : type === 1 ? 11 : type === 2 ? 12 : type === 3 ? 14 : 13
  if (values.length !== expected) {
    throw invalidTransaction(`rlp: expected ${expected} fields for a type ${type} transaction, got ${values.length}`)
  }

  let i = 0
  const chainId = type === 0 ? undefined : num(values, i++, 'chainId', 32)
  const nonce = num(values, i++, 'nonce', 8)
  let maxPriorityFeePerGas: bigint
  let maxFeePerGas: bigint
  if (type === 0 || type === 1) {
    maxFeePerGas = maxPriorityFeePerGas = num(values, i++, 'gasPrice', 32)
  } else {
    maxPriorityFeePerGas = num(values, i++, 'maxPriorityFeePerGas', 32)
    maxFeePerGas = num(values, i++, 'maxFeePerGas', 32)
  }
  const gasLimit = num(values, i++, 'gas', 8)
  const to = bytes(values, i++, 'to')
  if (to.length !== 0 && to.length !== 20) throw invalidTransaction(`rlp: input string of wrong size for to`)
  if (type === 4 && to.length === 0) throw invalidTransaction('rlp: input string too short for common.Address, decoding into (types.SetCodeTx).To')
  const value = num(values, i++, 'value', 32)
  const data = bytes(values, i++, 'data')
  const accessListLength = type !== 0 ? list(values, i++, 'accessList') : 0
  const authorizationCount = type === 4 ? list(values, i++, 'authorizationList') : 0
  const maxFeePerBlobGas = type === 3 ? num(values, i++, 'maxFeePerBlobGas', 32) : undefined
  const blobCount = type === 3 ? list(values, i++, 'blobVersionedHashes') : 0
  const v = num(values, i++, type === 0 ? 'v' : 'yParity', 32)
  const r = num(values, i++, 'r', 32)
  const s = num(values, i++, 's', 32)

  let legacyChainId: bigint | undefined
  if (type === 0 && v !== 27n && v !== 28n && v !== 0n && v !== 1n) {
    // EIP-155: v = chainId * 2 + 35/36 (geth deriveChainId: Euclidean division, as big.Int.Div)
    const t = v - 35n
    legacyChainId = t >= 0n ? t / 2n : -((-t + 1n) / 2n)
  }
  return {
    type,
    chainId: type === 0 ? legacyChainId : chainId,
    nonce,
    gasLimit,
    maxFeePerGas,
    maxPriorityFeePerGas,
    to,
    value,
    data,
    v,
    r,
    s,
    accessListLength,
    authorizationCount,
    maxFeePerBlobGas,
    blobCount,
    values,
  }
}

// module-level functions rather than closures made per call: V8 keeps a closure's optimized code only
// while a closure of it lives (see StorageTrieNodes in store/bulk-flush-sm.ts)
function num(values: NestedUint8Array, i: number, name: string, maxBytes: number): bigint {
  const b = values[i]
  if (!(b instanceof Uint8Array)) throw invalidTransaction(`rlp: expected input string or byte for ${name}`)
  if (b.length > 0 && b[0] === 0) throw invalidTransaction(`rlp: non-canonical integer (leading zero bytes) for ${name}`)
  if (b.length > maxBytes) throw invalidTransaction(`rlp: input string too long for ${name}`)
  return bytesToBigInt(b)
}

function bytes(values: NestedUint8Array, i: number, name: string): Uint8Array {
  const b = values[i]
  if (!(b instanceof Uint8Array)) throw invalidTransaction(`rlp: expected input string or byte for ${name}`)
  return b
}

function list(values: NestedUint8Array, i: number, name: string): number {
  const l = values[i]
  if (!Array.isArray(l)) throw invalidTransaction(`rlp: expected input list for ${name}`)
  return l.length
}

/** What a receipt shows of its transaction (json/receipt.ts). */
export interface ReceiptTxFields {
  type: number
  /** empty for a contract creation; a view into the transaction's bytes */
  to: Uint8Array
  nonce: bigint
  /** legacy and EIP-2930: the gas price */
  maxFeePerGas: bigint
  /** legacy and EIP-2930: the gas price */
  maxPriorityFeePerGas: bigint
  /** blob transactions (type 3): their blobs' count */
  blobCount: number
}

const malformedInBlock = (detail: string): Error => new Error(`malformed transaction in a block: ${detail}`)

/**
 * The fields a receipt shows, read where they lie in a transaction a block holds (every one passed
 * readTxFields when it entered the chain: intake, or import's checks), without decoding the rest:
 * a receipt's first read did the whole decode, every field copied and converted, for these five.
 */
export function readReceiptTxFields(raw: Uint8Array): ReceiptTxFields {
  const c = new RlpCursor(malformedInBlock)
  const type = raw.length > 0 && raw[0]! <= 0x7f ? raw[0]! : 0
  c.read(raw, type === 0 ? 0 : 1, raw.length)
  if (!c.list) throw malformedInBlock('not a list')
  const end = c.end
  // the fields' positions per type (readTxFields reads them in this order)
  const nonceAt = type === 0 ? 0 : 1
  const priceAt = type === 0 ? 1 : 2
  const toAt = type === 0 ? 3 : type === 1 ? 4 : 5
  let nonce = 0n
  let tip = 0n
  let feeCap = 0n
  let to: Uint8Array = raw.subarray(0, 0)
  let blobCount = 0
  const last = type === 3 ? 10 : toAt
  for (let i = 0, pos = c.start; i <= last; i++, pos = c.end) {
    c.read(raw, pos, end)
    if (i === nonceAt) nonce = bytesToBigInt(raw.subarray(c.start, c.end))
    else if (i === priceAt) tip = feeCap = bytesToBigInt(raw.subarray(c.start, c.end))
    else if (i === priceAt + 1 && type >= 2) feeCap = bytesToBigInt(raw.subarray(c.start, c.end))
    else if (i === toAt) to = raw.subarray(c.start, c.end)
    else if (i === 10 && type === 3) for (let h = c.start, hashesEnd = c.end; h < hashesEnd; h = c.end, blobCount++) c.read(raw, h, hashesEnd)
  }
  return { type, to, nonce, maxFeePerGas: feeCap, maxPriorityFeePerGas: tip, blobCount }
}
