// What crosses between the main thread and the producer thread. Small, typed, structured-clone safe.

import type { StateDiff } from './state-diff.js'
import type { RpcErrorShape } from '../errors.js'
import type { KeelConfig } from '../config/types.js'
import type { GethGenesis } from '../evm/geth-genesis.js'

export interface ProducerInit {
  config: KeelConfig
  genesis: GethGenesis
}

/** A transaction that passed intake on the main thread: raw bytes plus what intake already computed. */
export interface TxWire {
  raw: Uint8Array
  hash: string
  sender: string
  senderPubKey: Uint8Array
  arrivedAt: number
}

export type PoolQuery =
  | { q: 'status' }
  | { q: 'content' }
  | { q: 'inspect' }
  | { q: 'contentFrom'; address: string }
  /** the pending nonces of addresses, in order (the main thread batches its asks) */
  | { q: 'nonces'; addresses: string[] }
  | { q: 'get'; hash: string }
  | { q: 'pendingHashes' }

/**
 * One submitted transaction's fate: its hash once pooled (and, automining, whether it goes in the block
 * sealed next), or why the pool refused it.
 */
export type SubmitOutcome = { ok: true; hash: string; nextBlock: boolean } | { ok: false; error: RpcErrorShape }

export type ToProducer =
  /** the transactions intake passed in one turn of the main thread's event loop, in arrival order */
  | { kind: 'submit'; id: number; txs: TxWire[] }
  | { kind: 'pool'; id: number; query: PoolQuery }
  | { kind: 'shutdown'; id: number }

/** Header facts the main thread keeps for the head (and fee methods) without decoding RLP. */
export interface HeadInfo {
  number: bigint
  hash: string
  timestamp: bigint
  baseFeePerGas: bigint
  gasLimit: bigint
  gasUsed: bigint
  stateRoot: string
}

export interface NewBlockEvent {
  kind: 'block'
  head: HeadInfo
  headerRlp: Uint8Array
  bodyRlp: Uint8Array
  receiptsRlp: Uint8Array
  txHashes: string[]
  /** Measured on the producer thread, for the main thread's metrics. */
  stats?: BlockStats
  /** What the block changed in the state, for the readers that keep the head warm. */
  stateDiff?: StateDiff
  /** The senders with transactions in the pool when the event was posted (lowercase): pooled-senders.ts. */
  pooledSenders: string[]
  /** On a replica: how the block arrived from the block stream. */
  replicated?: ReplicatedStats
}

export interface ReplicatedStats {
  /** producer's commit to this replica's commit, when the producer said when it committed */
  lagMs: number | undefined
  /** reassembly, checks and the batch */
  applyMs: number
  /** bytes of the batch (keys and values) */
  bytes: number
}

/** The block stream (--stream-url) as one side sees it: the producer's publisher or a replica's follower. */
export interface StreamStatus {
  role: 'producer' | 'replica'
  connected: boolean
  /** producer: the newest block the stream acknowledged (-1: none); replica: its head */
  block: bigint
  /** producer: blocks sealed and not yet in the stream; replica: blocks the stream has beyond its head */
  backlog: number
  /** why the side stopped for good (fenced producer, refused block), if it did */
  stopped?: { code: string; reason: string }
}

/** Whether the producer can write the chain database (store/write-guard.ts). */
export interface StorageStatus {
  writable: boolean
  /** why writes are stopped (disk full, the failed write's error) */
  reason?: string
  /** when writes stopped (ms since the epoch) */
  since?: number
  /** times writes have stopped since start */
  failures: number
}

/** Milliseconds spent sealing one block, and pooled transactions dropped as invalid while building it. */
export interface BlockStats {
  buildMs: number
  commitMs: number
  writeMs: number
  droppedTxs: number
  /** Transactions applied as plain value transfers, without the EVM. */
  plainTransfers: number
}

export type FromProducer =
  | { kind: 'ready'; head: HeadInfo; genesisHash: string; hardfork: string; pooledSenders: string[] }
  /** `pendingTx`: hashes pooled since the last message that carried some (see producer-thread.ts) */
  | { kind: 'reply'; id: number; ok: true; result: unknown; pendingTx?: string[] }
  | { kind: 'reply'; id: number; ok: false; error: RpcErrorShape }
  | NewBlockEvent
  | { kind: 'pendingTx'; hashes: string[] }
  | { kind: 'stream'; status: StreamStatus }
  | { kind: 'storage'; status: StorageStatus }
  /** `needsSnapshot`: a replica whose next block the stream no longer holds; it restarts on a new snapshot */
  | { kind: 'fatal'; message: string; needsSnapshot?: boolean }
