// A stored block body: the transactions as they are encoded in a block, and their senders (recovered
// once at intake, so that no read ever runs ecrecover again).

import { RLP } from '@ethereumjs/rlp'

export interface StoredBody {
  /** EIP-2718 encodings (legacy: the RLP list) */
  txs: Uint8Array[]
  /** 20-byte sender addresses, one per transaction */
  senders: Uint8Array[]
  /**
   * What a block from another client may carry and Keel's own blocks never do (keel import): the uncle
   * headers' RLP and the withdrawals ([index, validator, address, amount] each). Stored only when one
   * of them is not empty, so that Keel's bodies keep their two-list form.
   */
  uncles?: Uint8Array[]
  withdrawals?: Uint8Array[][]
}

/** @param txs the transactions' EIP-2718 encodings (tx.serialize()) */
export function encodeBody(
  txs: readonly Uint8Array[],
  senders: readonly Uint8Array[],
  extra?: { uncles: readonly Uint8Array[]; withdrawals: readonly Uint8Array[][] },
): Uint8Array {
  if (extra !== undefined && (extra.uncles.length > 0 || extra.withdrawals.length > 0)) {
    return RLP.encode([txs as Uint8Array[], senders as Uint8Array[], extra.uncles.map((u) => RLP.decode(u)) as Uint8Array[], extra.withdrawals as Uint8Array[][]])
  }
  return RLP.encode([txs as Uint8Array[], senders as Uint8Array[]])
}

export function decodeBody(bytes: Uint8Array): StoredBody {
  const [txs, senders, uncles, withdrawals] = RLP.decode(bytes) as unknown as [Uint8Array[], Uint8Array[], Uint8Array[]?, Uint8Array[][]?]
  if (uncles === undefined) return { txs, senders }
  return { txs, senders, uncles: uncles.map((u) => RLP.encode(u)), withdrawals }
}

function rlpLengthPrefix(len: number): number {
  if (len < 56) return 1
  let bytes = 0
  for (let n = len; n > 0; n = Math.floor(n / 256)) bytes++
  return 1 + bytes
}

/** Size in bytes of the RLP encoding of the full block, as eth_getBlock's `size`. */
export function blockRlpSize(headerRlpLength: number, txs: readonly Uint8Array[], withWithdrawals: boolean): number {
  let txsPayload = 0
  for (const tx of txs) {
    // legacy txs are embedded as lists (their encoding already is one), typed ones as byte strings
    const typed = tx.length > 0 && tx[0] < 0x80
    txsPayload += typed ? (tx.length === 1 && tx[0] < 0x80 ? 1 : rlpLengthPrefix(tx.length) + tx.length) : tx.length
  }
  let payload = headerRlpLength + rlpLengthPrefix(txsPayload) + txsPayload + 1 // + empty uncle list
  if (withWithdrawals) payload += 1 // empty withdrawals list
  return rlpLengthPrefix(payload) + payload
}
