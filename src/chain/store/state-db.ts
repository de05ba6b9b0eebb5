// The @ethereumjs DB interface over classic-level for the state trie (and contract code).
// The MPT hands us unprefixed-hex string keys; we store them as raw bytes under the trie prefix, so
// keys are half the size. Two flavours:
//  - the producer's, which can `capture` the trie writes of a block so that they join the block's own
//    LevelDB batch (one atomic write per block: trie nodes, header, body, receipts, head pointer);
//  - a reader's, which refuses every write: a call must never reach the database.

import type { BatchDBOp, DB, EncodingOpts } from '@ethereumjs/util'
import { bytesToUnprefixedHex } from '@ethereumjs/util'
import type { AbstractBatchOperation } from 'abstract-level'
import type { ChainLevel } from './level.js'
import { Prefix } from './schema.js'
import { LruMap } from '../../util/lru.js'
import { trustedHexToBytes } from '../../util/hex.js'

type TrieOp = BatchDBOp<string, Uint8Array>
export type LevelOp = AbstractBatchOperation<ChainLevel, Uint8Array, Uint8Array>

export function trieKey(hexKey: string): Uint8Array {
  const raw = trustedHexToBytes(hexKey)
  const key = new Uint8Array(raw.length + 1)
  key[0] = Prefix.trie
  key.set(raw, 1)
  return key
}

/** The raw trie key of a trie table key (trieKey's inverse), as a view into it. */
export function rawTrieKey(key: Uint8Array): Uint8Array {
  return key.subarray(1)
}

/**
 * The DB key prefix (unprefixed hex) of a contract's storage trie nodes, as @ethereumjs lays them out
 * with prefixStorageTrieKeys: the first 7 bytes of keccak(address).
 */
export function storageTriePrefix(hashedAddress: Uint8Array): string {
  return bytesToUnprefixedHex(hashedAddress.subarray(0, 7))
}

/** Trie nodes by key. Nodes are content-addressed, so one cache serves every state root. */
export type NodeCache = LruMap<string, Uint8Array>
export const createNodeCache = (max: number): NodeCache => new LruMap<string, Uint8Array>(max)

abstract class LevelTrieDBBase implements DB<string, Uint8Array> {
  constructor(
    protected readonly level: ChainLevel,
    protected readonly cache: NodeCache,
  ) {}

  async get(key: string, _opts?: EncodingOpts): Promise<Uint8Array | undefined> {
    const cached = this.cache.get(key)
    if (cached !== undefined) return cached
    const pending = this.pendingValue(key)
    if (pending !== undefined) return pending
    const value = await this.level.get(trieKey(key))
    if (value !== undefined) this.cache.set(key, value)
    return value
  }

  protected pendingValue(_key: string): Uint8Array | undefined {
    return undefined
  }

  async open(): Promise<void> {}

  abstract put(key: string, value: Uint8Array, opts?: EncodingOpts): Promise<void>
  abstract del(key: string, opts?: EncodingOpts): Promise<void>
  abstract batch(ops: TrieOp[]): Promise<void>
  abstract shallowCopy(): DB<string, Uint8Array>
}

/**
 * Read-only: every write throws, so a bug in the call path cannot touch the chain.
 * `syncReads` is for threads that do nothing else while a read is pending (the call workers): a
 * synchronous LevelDB get skips the libuv thread-pool hop and its promise, which was most of the cost
 * of a cold storage slot. Never on the main thread, whose event loop serves every client.
 */
export class ReadOnlyTrieDB extends LevelTrieDBBase {
  writesAttempted = 0
  /** trie nodes read from LevelDB by fetch() (for tests and benchmarks) */
  fetches = 0

  constructor(
    level: ChainLevel,
    cache: NodeCache,
    private readonly syncReads = false,
  ) {
    super(level, cache)
  }

  override async get(key: string): Promise<Uint8Array | undefined> {
    if (!this.syncReads) return super.get(key)
    const cached = this.cache.get(key)
    if (cached !== undefined) return cached
    const value = this.level.getSync(trieKey(key))
    if (value !== undefined) this.cache.set(key, value)
    return value
  }

  /** A node straight from LevelDB, bypassing the node cache (for a TrieReader, which caches decoded nodes). */
  fetch(key: string): Uint8Array | undefined | Promise<Uint8Array | undefined> {
    this.fetches++
    return this.syncReads ? this.level.getSync(trieKey(key)) : this.level.get(trieKey(key))
  }

  put(): Promise<void> {
    this.writesAttempted++
    return Promise.reject(new Error('read-only state: write refused'))
  }
  del(): Promise<void> {
    this.writesAttempted++
    return Promise.reject(new Error('read-only state: delete refused'))
  }
  batch(ops: TrieOp[]): Promise<void> {
    if (ops.length === 0) return Promise.resolve()
    this.writesAttempted++
    return Promise.reject(new Error('read-only state: batch refused'))
  }
  shallowCopy(): ReadOnlyTrieDB {
    return new ReadOnlyTrieDB(this.level, this.cache, this.syncReads)
  }
}

/**
 * A block's trie writes: the nodes to store (ops keyed by trieKey; rawTrieKey gives the raw key back) and
 * (when pruning) the raw trie keys of the nodes its new state no longer uses.
 */
export interface CapturedTrieWrites {
  ops: LevelOp[]
  superseded: Uint8Array[]
}

/**
 * The producer's trie DB: writes are captured for the block batch while a block is being sealed.
 * In archive mode deletes are ignored (every historical root stays readable); with pruning, the MPT's
 * deletes are reported as superseded nodes, which the producer deletes only once they fall out of the
 * retained history.
 */
export class WritableTrieDB extends LevelTrieDBBase {
  private captured: Map<string, Uint8Array | undefined> | undefined

  constructor(
    level: ChainLevel,
    cache: NodeCache,
    private readonly recordDeletes = false,
  ) {
    super(level, cache)
  }

  /** From now on, trie writes are held back until takeCaptured(). */
  capture(): void {
    this.captured = new Map()
  }

  /** The held-back writes; they stay readable until the batch is written. */
  takeCaptured(): CapturedTrieWrites {
    const out: CapturedTrieWrites = { ops: [], superseded: [] }
    if (this.captured === undefined) return out
    for (const [key, value] of this.captured) {
      if (value === undefined) out.superseded.push(trustedHexToBytes(key))
      else out.ops.push({ type: 'put', key: trieKey(key), value })
    }
    return out
  }

  /** The block failed: forget its trie writes. */
  discard(): void {
    this.captured = undefined
  }

  /** After the block batch is on disk. */
  release(): void {
    if (this.captured !== undefined) {
      for (const [key, value] of this.captured) if (value !== undefined) this.cache.set(key, value)
    }
    this.captured = undefined
  }

  protected override pendingValue(key: string): Uint8Array | undefined {
    return this.captured?.get(key)
  }

  async put(key: string, value: Uint8Array): Promise<void> {
    if (this.captured !== undefined) this.captured.set(key, value)
    else await this.level.put(trieKey(key), value)
  }

  async del(key: string): Promise<void> {
    if (this.recordDeletes && this.captured !== undefined) this.captured.set(key, undefined)
  }

  async batch(ops: TrieOp[]): Promise<void> {
    if (this.captured !== undefined) {
      for (const op of ops) {
        if (op.type === 'put') this.captured.set(op.key, op.value)
        else if (this.recordDeletes) this.captured.set(op.key, undefined)
      }
      return
    }
    const levelOps: LevelOp[] = []
    for (const op of ops) if (op.type === 'put') levelOps.push({ type: 'put', key: trieKey(op.key), value: op.value })
    if (levelOps.length > 0) await this.level.batch(levelOps)
  }

  shallowCopy(): WritableTrieDB {
    return this
  }
}
