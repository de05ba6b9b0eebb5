// What one block wrote to the database, as the producer hands it to a sink that replicates it
// (replication/publisher.ts). The sink may add keys of its own to the block's batch (its outbox entry),
// so that what it must still send survives a crash together with the block.

import type { TxFrames } from '../indexes/frames.js'
import type { StateDiff } from './state-diff.js'
import type { LevelOp } from './store/state-db.js'

export interface BlockWriteSet {
  number: bigint
  hash: Uint8Array
  headerRlp: Uint8Array
  bodyRlp: Uint8Array
  receiptsRlp: Uint8Array
  /** puts of trie nodes and contract code (full keys, with the table prefix) */
  trieNodes: LevelOp[]
  /** the rest of the state's writes: with --state-history, pruned nodes and their bookkeeping */
  pruneOps: LevelOp[]
  stateDiff: StateDiff
  /** each transaction's call frames, for the explorer's indexes (indexes/block-indexes.ts) */
  frames: TxFrames[]
  /** when the block's batch was handed to LevelDB (ms since the epoch) */
  committedAt: number
}

export interface WriteSetSink {
  /** Called before the block's batch is written: ops returned join that batch. */
  prepare(ws: BlockWriteSet): LevelOp[]
  /** Called once the batch is on disk. */
  committed(ws: BlockWriteSet): void
  close(): Promise<void>
}
