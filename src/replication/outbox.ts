// The producer's outbox: each block's batch also stores what the stream still needs of it (the keys of
// the trie nodes it wrote, its pruning ops, its state diff, its transactions' call frames) under R + number, and the entry is deleted
// once JetStream acknowledged the block. A block whose publish a crash or a NATS outage cut short is
// rebuilt from it and the block's stored header, body, receipts and nodes, so no block is ever missing
// from the stream. Only keys are kept, not the nodes again: the nodes are in the same database.

import { RLP } from '@ethereumjs/rlp'
import { bytesToBigInt } from '@ethereumjs/util'
import type { ChainLevel } from '../chain/store/level.js'
import type { LevelOp } from '../chain/store/state-db.js'
import { decodeNumber, Keys } from '../chain/store/schema.js'
import type { BlockWriteSet } from '../chain/write-set.js'
import type { BlockMessage } from './block-message.js'
import { decodeStateDiff, encodeStateDiff } from './block-message.js'
import { decodeFrames, encodeFrames } from '../indexes/block-indexes.js'
import { ReplicationError } from './errors.js'

const DEL = Uint8Array.of(1)

export function outboxOp(ws: BlockWriteSet): LevelOp {
  const entry = RLP.encode([
    ws.trieNodes.map((op) => op.key.subarray(1)),
    ws.pruneOps.map((op) => (op.type === 'put' ? [new Uint8Array(0), op.key, op.value] : [DEL, op.key])),
    encodeStateDiff(ws.stateDiff),
    BigInt(ws.committedAt),
    encodeFrames(ws.frames),
  ] as never)
  return { type: 'put', key: Keys.outbox(ws.number), value: entry }
}

/** The numbers of the blocks in the outbox, oldest first. */
export async function outboxNumbers(level: ChainLevel): Promise<bigint[]> {
  const out: bigint[] = []
  for await (const key of level.keys(Keys.outboxRange)) out.push(decodeNumber(key, 1))
  return out
}

/**
 * The message of block `number`, from its outbox entry and what the database holds of the block, and
 * when the producer committed it.
 */
export async function readOutboxMessage(level: ChainLevel, number: bigint): Promise<{ message: BlockMessage; committedAt: number }> {
  const [entry, headerRlp, bodyRlp, receiptsRlp] = await level.getMany([Keys.outbox(number), Keys.header(number), Keys.body(number), Keys.receipts(number)])
  if (entry === undefined || headerRlp === undefined || bodyRlp === undefined || receiptsRlp === undefined) {
    throw new ReplicationError('gap', `block ${number} is not in the outbox or not in the database; it cannot be published`)
  }
  const [keys, prune, diff, committed, frames] = RLP.decode(entry) as unknown as [Uint8Array[], Uint8Array[][], unknown, Uint8Array, unknown]
  const values = await level.getMany(keys.map((k) => Keys.trieNode(k)))
  const trieNodes: [Uint8Array, Uint8Array][] = []
  for (let i = 0; i < keys.length; i++) {
    const value = values[i]
    // a node a later block pruned (--state-history shorter than the outage): the block cannot be rebuilt
    if (value === undefined) throw new ReplicationError('gap', `block ${number}'s trie node ${Buffer.from(keys[i]).toString('hex')} is no longer in the database`)
    trieNodes.push([keys[i], value])
  }
  const pruneOps = prune.map((o): LevelOp => (o[0].length === 0 ? { type: 'put', key: o[1], value: o[2] } : { type: 'del', key: o[1] }))
  return {
    // an entry written before frames were recorded has four items
    message: { headerRlp, bodyRlp, receiptsRlp, trieNodes, pruneOps, stateDiff: decodeStateDiff(diff), frames: frames === undefined ? undefined : decodeFrames(frames) },
    committedAt: Number(bytesToBigInt(committed)),
  }
}

export function messageOfWriteSet(ws: BlockWriteSet): BlockMessage {
  return {
    headerRlp: ws.headerRlp,
    bodyRlp: ws.bodyRlp,
    receiptsRlp: ws.receiptsRlp,
    trieNodes: ws.trieNodes.map((op) => [op.key.subarray(1), (op as { value: Uint8Array }).value]),
    pruneOps: ws.pruneOps,
    stateDiff: ws.stateDiff,
    frames: ws.frames,
  }
}
