// The @ethereumjs transaction object of a pooled transaction, built from its bytes when the block builder
// runs it, and its JSON for txpool_content: the pool itself keeps no such object (pooled-tx.ts).

import type { Common } from '@ethereumjs/common'
import { createTxFromRLP, TransactionType } from '@ethereumjs/tx'
import type { TransactionCache, TypedTransaction } from '@ethereumjs/tx'
import { decodeHexDigits } from '../util/hex.js'
import type { PooledTx } from './pooled-tx.js'

/**
 * The @ethereumjs transaction object of a pooled tx, with its hash, sender and public key injected into
 * its cache so that runTx never recovers or hashes them again.
 */
export function transactionOf(ptx: PooledTx, common: Common): TypedTransaction {
  const tx = createTxFromRLP(ptx.raw, { common })
  const cache = tx.cache as TransactionCache & { keelSenderAddress?: Uint8Array }
  // their own bytes, not views into Buffer's shared slab, which whatever keeps them would keep alive
  cache.hash = decodeHexDigits(ptx.hash, 2)
  cache.senderPubKey = ptx.senderPubKey
  // read by getSenderAddress() (patches/@ethereumjs+tx): runTx asks for it, and would hash the key again
  cache.keelSenderAddress = decodeHexDigits(ptx.sender, 2)
  return tx
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
