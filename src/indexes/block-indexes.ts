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
import { readTxFields } from '../chain/tx-fields.js'
import type { ReceiptRecord } from '../chain/receipts.js'
import type { LevelOp } from '../chain/store/state-db.js'
import { Keys, Prefix } from '../chain/store/schema.js'
import type { PooledTx } from '../chain/pooled-tx.js'
import { sameAddress } from './frames.js'
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
  const out: IndexedTx[] = new Array(rawTxs.length)
  for (let i = 0; i < rawTxs.length; i++) {
    const fields = readTxFields(rawTxs[i])
    out[i] = { hash: hashes[i], sender: senders[i], nonce: fields.nonce, to: fields.to, ok: receipts[i].status === 1 }
  }
  return out
}

/** A transaction's part of the indexes from its top-level fields alone. */
export function topLevelFrames(tx: IndexedTx): TxFrames {
  if (tx.to.length !== 0) return { addresses: [tx.sender, tx.to], creations: [] }
  const created = generateAddress(tx.sender, bigIntToUnpaddedBytes(tx.nonce))
  return { addresses: [tx.sender, created], creations: tx.ok ? [[created, tx.sender]] : [] }
}

/** I + address(20) + number(8) + index(4), as Keys.appearance */
const APPEARANCE_KEY = 33
/** N + sender(20) + nonce(8), as Keys.senderNonce */
const SENDER_NONCE_KEY = 29

/**
 * Appends the block's index entries to a batch. `frames` holds one entry per transaction, in block
 * order (undefined: derive each from its top-level fields).
 */
export function pushIndexOps(ops: LevelOp[], number: bigint, txs: readonly IndexedTx[], frames: readonly TxFrames[] | undefined): void {
  const recorded = frames !== undefined && frames.length === txs.length
  const all = recorded ? frames : txs.map(topLevelFrames)
  // the sender always appears, even in frames recorded without it (the recorder lists it first)
  const senderMissing = new Uint8Array(txs.length)
  let keys = 0
  for (let i = 0; i < txs.length; i++) {
    const addresses = all[i].addresses
    const sender = txs[i].sender
    if (!addresses.some((a) => sameAddress(a, sender))) senderMissing[i] = 1
    keys += addresses.length + senderMissing[i]
  }
  // the block's I and N keys in one allocation, as schema.ts lays them out: a few thousand small
  // arrays, each with its DataView, were most of this function's time
  const buf = new Uint8Array(keys * APPEARANCE_KEY + txs.length * SENDER_NONCE_KEY)
  const view = new DataView(buf.buffer)
  let at = 0
  const appearance = (address: Uint8Array, index: number): Uint8Array => {
    buf[at] = Prefix.appearance
    buf.set(address, at + 1)
    view.setBigUint64(at + 21, number)
    view.setUint32(at + 29, index)
    at += APPEARANCE_KEY
    return buf.subarray(at - APPEARANCE_KEY, at)
  }
  for (let i = 0; i < txs.length; i++) {
    const tx = txs[i]
    const f = all[i]
    buf[at] = Prefix.senderNonce
    buf.set(tx.sender, at + 1)
    view.setBigUint64(at + 21, tx.nonce)
    at += SENDER_NONCE_KEY
    ops.push({ type: 'put', key: buf.subarray(at - SENDER_NONCE_KEY, at), value: tx.hash })
    for (const address of f.addresses) ops.push({ type: 'put', key: appearance(address, i), value: EMPTY })
    if (senderMissing[i] === 1) ops.push({ type: 'put', key: appearance(tx.sender, i), value: EMPTY })
    for (const [contract, creator] of f.creations) {
      const value = new Uint8Array(32 + ADDRESS_BYTES)
      value.set(tx.hash)
      value.set(creator, 32)
      ops.push({ type: 'put', key: Keys.creator(contract), value })
    }
  }
}

/** A block's frames as the block message and the outbox carry them: RLP [[addresses, [[contract, creator]…]]…]. */
export function encodeFrames(frames: readonly TxFrames[]): unknown[] {
  return frames.map(encodeTxFrames)
}

// module-level functions rather than closures made per block: see StorageTrieNodes (bulk-flush-sm.ts)
function encodeTxFrames(f: TxFrames): unknown[] {
  return [f.addresses, f.creations]
}

/** Frames as encodeFrames wrote them; throws on anything else. */
export function decodeFrames(raw: unknown): TxFrames[] {
  if (!Array.isArray(raw)) throw new Error('frames are not a list')
  return raw.map(decodeTxFrames)
}

function decodeTxFrames(tx: unknown): TxFrames {
  if (!Array.isArray(tx) || tx.length !== 2 || !Array.isArray(tx[0]) || !Array.isArray(tx[1])) throw new Error('a transaction\'s frames are not [addresses, creations]')
  return { addresses: (tx[0] as unknown[]).map(address), creations: (tx[1] as unknown[]).map(creation) }
}

function creation(c: unknown): [Uint8Array, Uint8Array] {
  if (!Array.isArray(c) || c.length !== 2) throw new Error('a creation is not [contract, creator]')
  return [address(c[0]), address(c[1])]
}

function address(v: unknown): Uint8Array {
  if (!(v instanceof Uint8Array) || v.length !== ADDRESS_BYTES) throw new Error('an address in the frames is not 20 bytes')
  return v
}


/** The producer's included transactions as the indexes need them (`senders`, `hashes`: their bytes, in order). */
export function indexedPooledTxs(included: readonly PooledTx[], senders: readonly Uint8Array[], hashes: readonly Uint8Array[], receipts: readonly ReceiptRecord[]): IndexedTx[] {
  const out: IndexedTx[] = new Array(included.length)
  for (let i = 0; i < included.length; i++) {
    const p = included[i]
    out[i] = { hash: hashes[i], sender: senders[i], nonce: p.nonce, to: p.to ?? EMPTY, ok: receipts[i].status === 1 }
  }
  return out
}
