// The @ethereumjs transaction object of a pooled transaction, built from its bytes when the block builder
// runs it, and its JSON for txpool_content: the pool itself keeps no such object (pooled-tx.ts).

import type { Common } from '@ethereumjs/common'
import { createTxFromRLP, FeeMarket1559Tx, TransactionType } from '@ethereumjs/tx'
import type { AccessListBytes, TransactionCache, TxOptions, TypedTransaction } from '@ethereumjs/tx'
import { Address, MAX_INTEGER, SECP256K1_ORDER_DIV_2 } from '@ethereumjs/util'
import { decodeHexDigits } from '../util/hex.js'
import type { PooledTx } from './pooled-tx.js'
import { readTxFields } from './tx-fields.js'

/**
 * The @ethereumjs transaction object of a pooled tx, with its hash, sender and public key injected into
 * its cache so that runTx never recovers or hashes them again.
 */
export function transactionOf(ptx: PooledTx, common: Common): TypedTransaction {
  const tx = (ptx.type === TransactionType.FeeMarketEIP1559 ? feeMarketTxOf(ptx.raw, common) : undefined) ?? createTxFromRLP(ptx.raw, { common })
  const cache = tx.cache as TransactionCache & { keelSenderAddress?: Uint8Array }
  // their own bytes, not views into Buffer's shared slab, which whatever keeps them would keep alive
  cache.hash = decodeHexDigits(ptx.hash, 2)
  cache.senderPubKey = ptx.senderPubKey
  // read by getSenderAddress() (patches/@ethereumjs+tx): runTx asks for it, and would hash the key again
  cache.keelSenderAddress = decodeHexDigits(ptx.sender, 2)
  return tx
}

/** A 1559 transaction's capabilities, as its constructor lists them (only ever read: `supports`). */
const FEE_MARKET_CAPABILITIES: readonly number[] = Object.freeze([1559, 2718, 2930])
const MAX_UINT64 = (1n << 64n) - 1n

/**
 * A call or transfer of the 1559 type (no access list, not a contract creation: the shape nearly every
 * wallet sends), as the object FeeMarket1559Tx's constructor makes from these bytes, without its cost:
 * the constructor decodes the bytes again, copies the chain's Common and runs every check once more
 * (10.5 against 4.3 µs in bench/micro/rpc.js, and garbage for the producer's collector;
 * docs/measurements.md#the-builders-transaction-objects).
 * The checks it would run on such a transaction are run here; undefined for any other shape or any
 * failed check, and the caller builds the object the library's way, which throws the library's error.
 * The object shares the chain's Common (the builder's, at the block's fork) instead of holding a copy.
 */
function feeMarketTxOf(raw: Uint8Array, common: Common): TypedTransaction | undefined {
  const f = readTxFields(raw)
  if (f.to.length === 0 || f.accessListLength !== 0) return undefined
  if (f.chainId !== common.chainId() || !common.isActivatedEIP(1559)) return undefined
  if (f.nonce >= MAX_UINT64 || f.maxFeePerGas < f.maxPriorityFeePerGas || f.gasLimit * f.maxFeePerGas > MAX_INTEGER) return undefined
  if ((f.v !== 0n && f.v !== 1n) || f.s > SECP256K1_ORDER_DIV_2) return undefined
  if (common.isActivatedEIP(7825) && !common.isActivatedEIP(8037) && f.gasLimit > common.param('maxTransactionGasLimit')) return undefined
  const tx = Object.create(FeeMarket1559Tx.prototype) as Record<string, unknown>
  // the constructor's fields, in its order (one hidden class with the objects it makes)
  tx.type = TransactionType.FeeMarketEIP1559
  tx.cache = {} satisfies TransactionCache
  tx.activeCapabilities = FEE_MARKET_CAPABILITIES
  tx.common = common
  tx.txOptions = { common } satisfies TxOptions
  tx.to = new Address(f.to)
  tx.nonce = f.nonce
  tx.gasLimit = f.gasLimit
  tx.value = f.value
  tx.data = f.data
  tx.v = f.v
  tx.r = f.r
  tx.s = f.s
  tx.chainId = f.chainId
  tx.accessList = f.values[8] as AccessListBytes
  tx.maxFeePerGas = f.maxFeePerGas
  tx.maxPriorityFeePerGas = f.maxPriorityFeePerGas
  return Object.freeze(tx) as unknown as TypedTransaction
}

/**
 * The transaction object of geth's txpool_content / eth_getTransactionByHash for a tx not yet in a
 * block: block fields null, gasPrice = maxFeePerGas for 1559-style txs (geth newRPCPendingTransaction).
 */
export function pendingRpcTransaction(ptx: PooledTx, common: Common): Record<string, unknown> {
  // the JSON reads the signed fields only: no sender or hash to inject (ptx has them)
  const tx = createTxFromRLP(ptx.raw, { common })
  const json = tx.toJSON() as Record<string, unknown>
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
  } else if (tx.v !== undefined && tx.v >= 35n) {
    out.chainId = json.chainId
  }
  if (ptx.type === TransactionType.EOACodeEIP7702) out.authorizationList = json.authorizationList
  out.v = json.v
  out.r = json.r
  out.s = json.s
  if (ptx.type !== TransactionType.Legacy) out.yParity = json.v
  return out
}
