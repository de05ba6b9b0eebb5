// An @ethereumjs block -> the JSON object geth 1.17 returns for it (RPCMarshalBlock). A block is a Go map
// in geth, which encoding/json writes with sorted keys. Shapes are checked against ethereum/execution-apis
// (test/json/format.test.js).

import type { Block } from '@ethereumjs/block'
import { addressHex, bytesToHex, quantity } from '../util/hex.js'
import { formatTransaction } from './transaction.js'
import type { TxLocation } from './transaction.js'

type Json = Record<string, unknown>

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
