// The explorer's index entries of one block, written in the block's own batch (the producer's, or a
// replica's from the frames the block message carries): each address a transaction touched, by Erigon's
// rule (frames.ts), under I + address + block + index; each transaction under its sender and nonce (N);
// each contract it created under C, with its direct creator (a creation later in the chain at the same
// address replaces the entry: the current incarnation's creator is the one asked for).
//
// Without a transaction's frames (a block message from a producer that did not record them, or a
// block whose parent state is gone when the indexes are built later) its top-level fields stand in:
// the sender, the recipient or the contract the transaction created.

import { bigIntToUnpaddedBytes, generateAddress } from '@ethereumjs/util'
import { readTxFields } from '../chain/tx-intake.js'
import type { ReceiptRecord } from '../chain/receipts.js'
import type { LevelOp } from '../chain/store/state-db.js'
import { Keys } from '../chain/store/schema.js'
import type { PooledTx } from '../chain/pooled-tx.js'
import { trustedHexToBytes } from '../util/hex.js'
import type { TxFrames } from './frames.js'

/** What the indexes need of a transaction besides its frames. */
export interface IndexedTx {
  hash: Uint8Array
  sender: Uint8Array
  nonce: bigint
  /** empty for a contract creation */
  to: Uint8Array
  /** the receipt's status: a failed creation created nothing */
  ok: boolean
}

const EMPTY = new Uint8Array(0)
const ADDRESS_BYTES = 20

/** The transactions of a stored block as the indexes need them. */
export function indexedTxs(rawTxs: readonly Uint8Array[], senders: readonly Uint8Array[], hashes: readonly Uint8Array[], receipts: readonly ReceiptRecord[]): IndexedTx[] {
  return rawTxs.map((raw, i) => {
    const fields = readTxFields(raw)
    return { hash: hashes[i], sender: senders[i], nonce: fields.nonce, to: fields.to, ok: receipts[i].status === 1 }
  })
}

/** A transaction's part of the indexes from its top-level fields alone. */
export function topLevelFrames(tx: IndexedTx): TxFrames {
  if (tx.to.length !== 0) return { addresses: [tx.sender, tx.to], creations: [] }
  const created = generateAddress(tx.sender, bigIntToUnpaddedBytes(tx.nonce))
  return { addresses: [tx.sender, created], creations: tx.ok ? [[created, tx.sender]] : [] }
}

/**
 * Appends the block's index entries to a batch. `frames` holds one entry per transaction, in block
 * order (undefined: derive each from its top-level fields).
 */
export function pushIndexOps(ops: LevelOp[], number: bigint, txs: readonly IndexedTx[], frames: readonly TxFrames[] | undefined): void {
  const recorded = frames !== undefined && frames.length === txs.length
  for (let i = 0; i < txs.length; i++) {
    const tx = txs[i]
    const f = recorded ? frames[i] : topLevelFrames(tx)
    ops.push({ type: 'put', key: Keys.senderNonce(tx.sender, tx.nonce), value: tx.hash })
    // the sender always appears, even in frames recorded without it
    let senderListed = false
    for (const address of f.addresses) {
      if (!senderListed && equal20(address, tx.sender)) senderListed = true
      ops.push({ type: 'put', key: Keys.appearance(address, number, i), value: EMPTY })
    }
    if (!senderListed) ops.push({ type: 'put', key: Keys.appearance(tx.sender, number, i), value: EMPTY })
    for (const [contract, creator] of f.creations) {
      const value = new Uint8Array(32 + ADDRESS_BYTES)
      value.set(tx.hash)
      value.set(creator, 32)
      ops.push({ type: 'put', key: Keys.creator(contract), value })
    }
  }
}

function equal20(a: Uint8Array, b: Uint8Array): boolean {
  for (let i = 0; i < ADDRESS_BYTES; i++) if (a[i] !== b[i]) return false
  return true
}

/** A block's frames as the block message and the outbox carry them: RLP [[addresses, [[contract, creator]…]]…]. */
export function encodeFrames(frames: readonly TxFrames[]): unknown[] {
  return frames.map((f) => [f.addresses, f.creations])
}

/** Frames as encodeFrames wrote them; throws on anything else. */
export function decodeFrames(raw: unknown): TxFrames[] {
  if (!Array.isArray(raw)) throw new Error('frames are not a list')
  return raw.map((tx: unknown) => {
    if (!Array.isArray(tx) || tx.length !== 2 || !Array.isArray(tx[0]) || !Array.isArray(tx[1])) throw new Error('a transaction\'s frames are not [addresses, creations]')
    const addresses = (tx[0] as unknown[]).map(address)
    const creations = (tx[1] as unknown[]).map((c): [Uint8Array, Uint8Array] => {
      if (!Array.isArray(c) || c.length !== 2) throw new Error('a creation is not [contract, creator]')
      return [address(c[0]), address(c[1])]
    })
    return { addresses, creations }
  })
}

function address(v: unknown): Uint8Array {
  if (!(v instanceof Uint8Array) || v.length !== ADDRESS_BYTES) throw new Error('an address in the frames is not 20 bytes')
  return v
}


/** The producer's included transactions as the indexes need them. */
export function indexedPooledTxs(included: readonly PooledTx[], receipts: readonly ReceiptRecord[]): IndexedTx[] {
  return included.map((p, i) => ({
    hash: trustedHexToBytes(p.hash),
    sender: trustedHexToBytes(p.sender),
    nonce: p.nonce,
    to: p.tx.to?.bytes ?? EMPTY,
    ok: receipts[i].status === 1,
  }))
}
