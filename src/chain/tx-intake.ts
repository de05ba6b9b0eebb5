// Stateless validation of eth_sendRawTransaction input, run on the main thread before the tx is handed to
// the producer. The checks follow geth's order (internal/ethapi SubmitTransaction, then
// core/txpool/validation.go ValidateTransaction) and answer with geth's wordings. The fields are read from
// the RLP before @ethereumjs builds the tx, because its constructors throw their own texts for several of
// these rules (EIP-7825 cap, chain id, tip above fee cap, high s).

import type { Common } from '@ethereumjs/common'
import { RLP } from '@ethereumjs/rlp'
import {
  createAccessList2930TxFromBytesArray,
  create1559FeeMarketTxFromBytesArray,
  createEOACode7702TxFromBytesArray,
  createLegacyTxFromBytesArray,
} from '@ethereumjs/tx'
import type { TypedTransaction } from '@ethereumjs/tx'
import { MAX_INTEGER, bigIntToUnpaddedBytes, bytesToHex } from '@ethereumjs/util'
import { invalidParams, RpcError, serverError, TxError } from '../errors.js'
import { decodeHexDigits, firstNonHex } from '../util/hex.js'
import { messageGas } from '../evm/intrinsic-gas.js'
import type { MessageGas } from '../evm/intrinsic-gas.js'
import { invalidTransaction, readTxFields } from './tx-fields.js'
import type { TxFields } from './tx-fields.js'
import type { TxWire } from './messages.js'
import { fromWire, senderAddressOf } from './pooled-tx.js'
import type { PooledTx } from './pooled-tx.js'

export interface IntakeContext {
  /** The chain's Common; its customCrypto (native ecrecover, wasm keccak) does the one recovery. */
  common: Common
  chainId: bigint
  blockGasLimit: bigint
  /** EIP-7825 per-tx gas cap (2^24 from Osaka). */
  txGasCap: bigint
  /** Max encoded size in bytes (geth: 128 KiB). */
  maxTxSize: number
  /** eth_sendRawTransaction fee cap in wei (0 = none). */
  txFeeCapWei: bigint
  /** Accept legacy transactions signed without a chain id (geth's --rpc.allow-unprotected-txs). */
  allowUnprotectedTxs: boolean
}

export const DEFAULT_MAX_TX_SIZE = 131072
export const EIP7825_TX_GAS_CAP = 1n << 24n

const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n
const SECP256K1_HALF_N = SECP256K1_N >> 1n
const MAX_UINT64 = (1n << 64n) - 1n
const EMPTY = new Uint8Array(0)
const WEI_PER_CENT_ETHER = 10n ** 16n

// Wordings that geth uses but src/errors.ts does not carry.
const floorDataGasTooLow = (gas: bigint, needed: bigint): RpcError =>
  serverError(`insufficient gas for floor data gas cost: gas ${gas}, minimum needed ${needed}`)
const initCodeTooLarge = (size: number, limit: bigint): RpcError =>
  serverError(`max initcode size exceeded: code size ${size}, limit ${limit}`)
const emptyAuthorizationList = (): RpcError => serverError('set code tx must have at least one authorization tuple')
const nonceMax = (): RpcError => serverError('nonce has max value')

/**
 * Decodes and statelessly validates a raw transaction; recovers its sender once. Answers what the
 * producer thread takes (messages.ts TxWire): the bytes as received, their hash, the sender and its key.
 * @throws RpcError with geth's code and wording.
 */
export function admitRawTransaction(rawHex: string, ctx: IntakeContext): TxWire {
  const raw = parseHexBytes(rawHex)
  // this chain's pool takes no blob transactions (a block read from elsewhere may hold them: readTxFields)
  if (raw.length > 0 && raw[0] === 3) throw TxError.typeNotSupported(3)
  const fields = readTxFields(raw)

  // internal/ethapi SubmitTransaction
  if (ctx.txFeeCapWei > 0n) {
    const fee = fields.gasLimit * fields.maxFeePerGas
    if (fee > ctx.txFeeCapWei) throw TxError.feeCapExceeded(formatEther2(fee), formatEther2(ctx.txFeeCapWei))
  }
  if (fields.type === 0 && fields.chainId === undefined && !ctx.allowUnprotectedTxs) throw TxError.notReplayProtected()

  // core/txpool ValidateTransaction
  if (raw.length > ctx.maxTxSize) throw TxError.oversizedData(raw.length, ctx.maxTxSize)
  if (fields.to.length === 0) {
    const limit = maxInitCodeSize(ctx.common)
    if (BigInt(fields.data.length) > limit) throw initCodeTooLarge(fields.data.length, limit)
  }
  if (fields.gasLimit > ctx.txGasCap) throw TxError.gasLimitTooHigh(ctx.txGasCap, fields.gasLimit)
  if (fields.gasLimit > ctx.blockGasLimit) throw TxError.exceedsBlockGasLimit()
  if (fields.maxFeePerGas < fields.maxPriorityFeePerGas) throw TxError.tipAboveFeeCap()
  if (fields.chainId !== undefined && fields.chainId !== ctx.chainId) {
    throw TxError.invalidSender(TxError.invalidChainId(fields.chainId, ctx.chainId).message)
  }
  if (!validSignatureValues(fields)) throw TxError.invalidSender('invalid transaction v, r, s values')
  if (fields.nonce === MAX_UINT64) throw nonceMax()
  // geth checks this last; @ethereumjs refuses to build such a tx at all
  if (fields.type === 4 && fields.authorizationCount === 0) throw emptyAuthorizationList()

  const direct = directGas(fields, ctx.common)
  let senderPubKey: Uint8Array
  let gas: { intrinsic: bigint; minimum: bigint }
  if (direct !== undefined) {
    senderPubKey = recoverDirectly(fields, ctx)
    gas = direct
  } else {
    const tx = buildTx(fields, ctx.common)
    try {
      senderPubKey = tx.getSenderPublicKey()
    } catch {
      throw TxError.invalidSender('recovery failed')
    }
    gas = { intrinsic: tx.getIntrinsicGas(), minimum: tx.getMinimumGasLimit() }
  }
  if (fields.gasLimit < gas.intrinsic) throw TxError.intrinsicGasTooLow(fields.gasLimit, gas.intrinsic)
  if (fields.gasLimit < gas.minimum) throw floorDataGasTooLow(fields.gasLimit, gas.minimum)

  const sender = senderAddressOf(senderPubKey, ctx.common)
  // the hash of the bytes as received: the decode above accepts only canonical RLP, so they are what
  // tx.serialize() would produce, without encoding every field again
  const hash = bytesToHex(ctx.common.customCrypto.keccak256!(raw))
  return { raw, hash, sender, senderPubKey, arrivedAt: Date.now() }
}

/** admitRawTransaction, then the pool's entry (pooled-tx.ts). */
export function decodeRawTransaction(rawHex: string, ctx: IntakeContext): PooledTx {
  return fromWire(admitRawTransaction(rawHex, ctx))
}

/**
 * The intrinsic gas and least gas limit of a transaction that the checks above leave nothing else to
 * refuse in, computed from its fields, or undefined when it takes @ethereumjs's transaction object:
 * EIP-7702 transactions, contract creations, access lists (whose layout the object checks) and fee caps
 * whose total overflows 256 bits (which it refuses with its own wording). The object, built on the main
 * thread for every transfer and dropped there, cost ~13 of the ~83 µs its intake took (62: the recovery).
 */
function directGas(f: TxFields, common: Common): MessageGas | undefined {
  if (f.type === 4 || f.to.length === 0 || f.accessListLength !== 0) return undefined
  if (f.gasLimit * f.maxFeePerGas > MAX_INTEGER) return undefined
  // the fork rules each type's constructor asks for
  if (f.type === 2 ? !common.isActivatedEIP(1559) : f.type === 1 ? !common.isActivatedEIP(2930) : !common.gteHardfork('spuriousDragon')) {
    return undefined
  }
  return messageGas(common, f.data, undefined)
}

/**
 * The sender's 64-byte public key from the signature over the unsigned fields, as @ethereumjs's
 * getSenderPublicKey recovers it (the fields as decoded are canonical, so they encode back to its bytes).
 */
function recoverDirectly(f: TxFields, ctx: IntakeContext): Uint8Array {
  const values = f.values as Uint8Array[]
  let message: Uint8Array
  let chainId: bigint | undefined
  if (f.type === 0) {
    // EIP-155: nonce, gasPrice, gas, to, value, data, chainId, 0, 0; unprotected: the first six alone
    chainId = f.chainId
    message = RLP.encode(chainId === undefined ? values.slice(0, 6) : [...values.slice(0, 6), bigIntToUnpaddedBytes(chainId), EMPTY, EMPTY])
  } else {
    const unsigned = RLP.encode(values.slice(0, values.length - 3))
    message = new Uint8Array(unsigned.length + 1)
    message[0] = f.type
    message.set(unsigned, 1)
  }
  const keccak = ctx.common.customCrypto.keccak256!
  try {
    return ctx.common.customCrypto.ecrecover!(keccak(message), f.v, values[values.length - 2]!, values[values.length - 1]!, chainId)
  } catch {
    throw TxError.invalidSender('recovery failed')
  }
}

/** Parses 0x-hex like geth's hexutil.Bytes; failures are parameter errors (-32602) as in geth. */
function parseHexBytes(hex: string): Uint8Array {
  let problem: string | undefined
  if (hex.length < 2 || hex[0] !== '0' || (hex[1] !== 'x' && hex[1] !== 'X')) problem = 'hex string without 0x prefix'
  else if (hex.length % 2 !== 0) problem = 'hex string of odd length'
  else if (firstNonHex(hex, 2) !== -1) problem = 'invalid hex string'
  if (problem !== undefined) {
    throw invalidParams(`invalid argument 0: json: cannot unmarshal ${problem} into Go value of type hexutil.Bytes`)
  }
  // its own ArrayBuffer, not a view into Buffer's shared 8 KiB pool (as Buffer.from(hex) gives): posting
  // a view to the producer would copy the whole pool slab, and the pooled transaction would keep it
  return decodeHexDigits(hex, 2)
}

/** EIP-3860 limit; the chain Common may not have loaded the tx params, whose value is geth's 49152. */
function maxInitCodeSize(common: Common): bigint {
  try {
    return common.param('maxInitCodeSize')
  } catch {
    return 49152n
  }
}

/** geth crypto.ValidateSignatureValues with homestead rules (s <= N/2). */
function validSignatureValues(f: TxFields): boolean {
  const recId = f.type === 0 ? (f.chainId === undefined ? f.v - 27n : f.v - 35n - 2n * f.chainId) : f.v
  if (recId !== 0n && recId !== 1n) return false
  return f.r >= 1n && f.s >= 1n && f.r < SECP256K1_N && f.s <= SECP256K1_HALF_N
}

function buildTx(f: TxFields, common: Common): TypedTransaction {
  try {
    const values = f.values as never
    switch (f.type) {
      case 0:
        return createLegacyTxFromBytesArray(values, { common })
      case 1:
        return createAccessList2930TxFromBytesArray(values, { common })
      case 2:
        return create1559FeeMarketTxFromBytesArray(values, { common })
      default:
        return createEOACode7702TxFromBytesArray(values, { common })
    }
  } catch (err) {
    throw invalidTransaction(stripTxContext((err as Error).message))
  }
}

/** @ethereumjs appends " (tx type=… hash=… …)" to its messages; the client does not need that. */
export function stripTxContext(message: string): string {
  const at = message.indexOf(' (tx type=')
  return at === -1 ? message : message.slice(0, at)
}

/** Wei as ether with two decimals, rounding half to even like Go's %.2f. */
export function formatEther2(wei: bigint): string {
  let cents = wei / WEI_PER_CENT_ETHER
  const rest = wei % WEI_PER_CENT_ETHER
  const twice = rest * 2n
  if (twice > WEI_PER_CENT_ETHER || (twice === WEI_PER_CENT_ETHER && cents % 2n === 1n)) cents += 1n
  const whole = cents / 100n
  const frac = (cents % 100n).toString().padStart(2, '0')
  return `${whole}.${frac}`
}
