// A replica's checks on a block before it becomes visible: it follows the replica's head, its header
// hashes to the hash it is published under, its transactions and receipts hash to the header's roots,
// every trie node it writes is stored under the hash of its value, and the state root it names is in the
// database once the batch is applied. A block that passes is turned into the one LevelDB batch that
// makes the replica's database what the producer's was after the same block.
//
// Not checked here: the transactions' execution (the state root is the producer's word for it) and the
// senders stored with the body. `--replica-verify execute` re-executes the block for that (audit.ts).

import type { BlockHeader } from '@ethereumjs/block'
import { createBlockHeaderFromRLP } from '@ethereumjs/block'
import type { Common } from '@ethereumjs/common'
import type { TransactionType } from '@ethereumjs/tx'
import { bytesToHex, equalsBytes, KECCAK256_RLP, KECCAK256_RLP_ARRAY } from '@ethereumjs/util'
import { pushBlockRecord } from '../chain/block-record.js'
import { decodeBody } from '../chain/body.js'
import type { StoredBody } from '../chain/body.js'
import { logsBloomOf, receiptsRoot } from '../chain/builder.js'
import { orderedTrieRoot } from '../chain/ordered-trie.js'
import { decodeReceipts } from '../chain/receipts.js'
import type { ReceiptRecord } from '../chain/receipts.js'
import type { StateDiff } from '../chain/state-diff.js'
import type { LevelOp } from '../chain/store/state-db.js'
import { Keys, Prefix } from '../chain/store/schema.js'
import type { BlockMessage } from './block-message.js'
import { indexedTxs, pushIndexOps } from '../indexes/block-indexes.js'
import type { TxFrames } from '../indexes/frames.js'
import { ReplicationError } from './errors.js'

export interface ReplicaHead {
  number: bigint
  hash: Uint8Array
}

export interface VerifyContext {
  common: Common
  keccak: (data: Uint8Array) => Uint8Array
  /** whether the database holds a state trie node (raw trie key, without the table prefix) */
  hasTrieNode(rawKey: Uint8Array): Promise<boolean>
}

export interface VerifiedBlock {
  header: BlockHeader
  hash: Uint8Array
  headerRlp: Uint8Array
  bodyRlp: Uint8Array
  receiptsRlp: Uint8Array
  /** the batch that applies the block */
  ops: LevelOp[]
  txHashes: string[]
  body: StoredBody
  receipts: ReceiptRecord[]
  stateDiff: StateDiff | undefined
  /** each transaction's call frames as the producer recorded them (undefined: a version 1 message) */
  frames: TxFrames[] | undefined
  /** bytes the batch writes (keys and values), for the replica's metrics */
  bytes: number
}

/** Keys a block's state writes may touch besides trie nodes (the pruning bookkeeping of --state-history). */
const PRUNE_PREFIXES = new Set<number>([Prefix.trie, Prefix.superseded, Prefix.lastWritten])
const HASH_BYTES = 32

export async function verifyBlock(m: BlockMessage, head: ReplicaHead, ctx: VerifyContext): Promise<VerifiedBlock> {
  let header: BlockHeader
  try {
    header = createBlockHeaderFromRLP(m.headerRlp, { common: ctx.common, setHardfork: true })
  } catch (err) {
    throw new ReplicationError('malformed', `block header does not decode: ${(err as Error).message}`)
  }
  const number = header.number
  const hash = ctx.keccak(m.headerRlp)
  const at = `block ${number} (${bytesToHex(hash)})`
  if (number !== head.number + 1n) throw new ReplicationError('not-next', `${at} does not follow the head, block ${head.number}`)
  if (!equalsBytes(header.parentHash, head.hash)) {
    throw new ReplicationError('not-next', `${at}: parent hash ${bytesToHex(header.parentHash)} is not the head's hash ${bytesToHex(head.hash)}`)
  }

  const body = decodeBodyOf(m.bodyRlp, at)
  if (body.senders.length !== body.txs.length) throw new ReplicationError('bad-block', `${at}: ${body.txs.length} transactions but ${body.senders.length} senders`)
  const txRoot = orderedTrieRoot(body.txs, ctx.keccak)
  if (!equalsBytes(txRoot, header.transactionsTrie)) mismatch(at, 'transactions root', header.transactionsTrie, txRoot)
  const receipts = decodeReceiptsOf(m.receiptsRlp, at)
  if (receipts.length !== body.txs.length) throw new ReplicationError('bad-block', `${at}: ${body.txs.length} transactions but ${receipts.length} receipts`)
  const receiptRoot = receiptsRoot(
    receipts,
    receipts.map((r) => logsBloomOf(r, ctx.common)),
    body.txs.map((raw) => ({ type: txType(raw) })),
    ctx.keccak,
  )
  if (!equalsBytes(receiptRoot, header.receiptTrie)) mismatch(at, 'receipts root', header.receiptTrie, receiptRoot)
  const gasUsed = receipts.length === 0 ? 0n : receipts[receipts.length - 1].cumulativeGasUsed
  if (gasUsed !== header.gasUsed) throw new ReplicationError('bad-block', `${at}: header gas used ${header.gasUsed}, receipts ${gasUsed}`)
  if (!equalsBytes(header.uncleHash, KECCAK256_RLP_ARRAY)) throw new ReplicationError('bad-block', `${at}: the header names uncles`)
  if (header.withdrawalsRoot !== undefined && !equalsBytes(header.withdrawalsRoot, KECCAK256_RLP)) {
    throw new ReplicationError('bad-block', `${at}: the header names withdrawals`)
  }

  const ops: LevelOp[] = []
  let bytes = 0
  let stateRootWritten = false
  for (const [key, value] of m.trieNodes) {
    if (key.length < HASH_BYTES) throw new ReplicationError('bad-write-set', `${at}: a trie key of ${key.length} bytes`)
    const named = key.subarray(key.length - HASH_BYTES)
    if (!equalsBytes(named, ctx.keccak(value))) {
      throw new ReplicationError('bad-write-set', `${at}: trie node ${bytesToHex(key)} is not the hash of its value`)
    }
    if (key.length === HASH_BYTES && equalsBytes(key, header.stateRoot)) stateRootWritten = true
    const stored = Keys.trieNode(key)
    ops.push({ type: 'put', key: stored, value })
    bytes += stored.length + value.length
  }
  for (const op of m.pruneOps) {
    if (op.key.length === 0 || !PRUNE_PREFIXES.has(op.key[0]) || (op.key[0] === Prefix.trie && op.type === 'put')) {
      throw new ReplicationError('bad-write-set', `${at}: the write set touches key ${bytesToHex(op.key)} outside the state's bookkeeping`)
    }
    ops.push(op)
    bytes += op.key.length + (op.type === 'put' ? op.value.length : 0)
  }
  if (!stateRootWritten && !equalsBytes(header.stateRoot, KECCAK256_RLP) && !(await ctx.hasTrieNode(header.stateRoot))) {
    throw new ReplicationError('missing-state-root', `${at}: state root ${bytesToHex(header.stateRoot)} is neither written by the block nor in the database`)
  }

  const txHashes = body.txs.map((tx) => ctx.keccak(tx))
  const recordStart = ops.length
  await pushBlockRecord(ops, {
    number,
    hash,
    headerRlp: m.headerRlp,
    bodyRlp: m.bodyRlp,
    receiptsRlp: m.receiptsRlp,
    txHashes,
    receipts,
    logsBloom: header.logsBloom,
  })
  if (m.frames !== undefined && m.frames.length !== body.txs.length) {
    throw new ReplicationError('bad-write-set', `${at}: ${body.txs.length} transactions but frames of ${m.frames.length}`)
  }
  pushIndexOps(ops, number, indexedTxs(body.txs, body.senders, txHashes, receipts), m.frames)
  for (let i = recordStart; i < ops.length; i++) {
    const op = ops[i]
    bytes += op.key.length + (op.type === 'put' ? op.value.length : 0)
  }
  return { header, hash, headerRlp: m.headerRlp, bodyRlp: m.bodyRlp, receiptsRlp: m.receiptsRlp, ops, txHashes: txHashes.map((h) => bytesToHex(h)), body, receipts, stateDiff: m.stateDiff, frames: m.frames, bytes }
}

function mismatch(at: string, field: string, expected: Uint8Array, got: Uint8Array): never {
  throw new ReplicationError('bad-block', `${at}: ${field} ${bytesToHex(got)} of the content is not the header's ${bytesToHex(expected)}`)
}

function decodeBodyOf(bodyRlp: Uint8Array, at: string) {
  try {
    return decodeBody(bodyRlp)
  } catch (err) {
    throw new ReplicationError('malformed', `${at}: body does not decode: ${(err as Error).message}`)
  }
}

function decodeReceiptsOf(receiptsRlp: Uint8Array, at: string): ReceiptRecord[] {
  try {
    return decodeReceipts(receiptsRlp)
  } catch (err) {
    throw new ReplicationError('malformed', `${at}: receipts do not decode: ${(err as Error).message}`)
  }
}

/** EIP-2718: a typed transaction starts with its type byte; a legacy one with an RLP list prefix. */
const txType = (encoded: Uint8Array): TransactionType => (encoded.length > 0 && encoded[0] < 0x80 ? encoded[0] : 0) as TransactionType
