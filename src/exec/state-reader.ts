// Read-only state managers at given state roots, over a trie DB that refuses writes. Trie nodes,
// storage slots (by storage root) and code (by hash) are content-addressed, so one cache of each
// serves every root; a few state managers stay open for the roots in use (the head, and whatever
// historical blocks are being asked about), each with its own revert-proof account cache.

import type { Common } from '@ethereumjs/common'
import { createMPT } from '@ethereumjs/mpt'
import { Caches, CacheType } from '@ethereumjs/statemanager'
import { bytesToHex, bytesToUnprefixedHex, createAccountFromRLP, equalsBytes, KECCAK256_RLP, ValueEncoding } from '@ethereumjs/util'
import type { Account } from '@ethereumjs/util'
import type { StateDiff } from '../chain/state-diff.js'
import { AccountReadCache, compactSlot } from './read-cache.js'
import type { ChainLevel } from '../chain/store/level.js'
import { createNodeCache, ReadOnlyTrieDB } from '../chain/store/state-db.js'
import { serverError } from '../errors.js'
import { sharedReadCaches } from './read-cache.js'
import { LruMap } from '../util/lru.js'
import type { SharedReadCaches } from './read-cache.js'
import { cachedSlot, ReadCachedStateManager } from './read-cached-sm.js'
import { TrieReader } from '../chain/store/trie-reader.js'

export interface StateReaderOptions {
  /** bytes of decoded trie nodes kept in memory, shared by every root */
  nodeCacheBytes?: number
  /** state managers kept open (one per root) */
  maxOpenRoots?: number
  /** accounts remembered per root */
  accountsPerRoot?: number
  /** storage slots remembered, shared by every root */
  slots?: number
  /** synchronous LevelDB reads: only for a thread that has nothing else to do meanwhile */
  syncReads?: boolean
}

// Caches are bounded for a node that runs for months under any read pattern: per thread that reads
// state, ~16 MiB of decoded trie nodes, ~3 MiB of raw ones (proofs), 8 MiB of code, ~4 MiB of
// accounts per open root (~400 bytes each) and the slots (~450 bytes each).
const RAW_NODES = 4096
/** an absent slot (what the read caches hold for one: no bytes) */
const NO_VALUE = new Uint8Array(0)

export class StateReader {
  private readonly byRoot = new Map<string, Promise<ReadCachedStateManager>>()
  readonly trieDb: ReadOnlyTrieDB
  private readonly tries: TrieReader
  readonly shared: SharedReadCaches
  private readonly maxOpenRoots: number
  private readonly accountsPerRoot: number
  private readonly accountCaches: LruMap<string, AccountReadCache>

  constructor(
    private readonly common: Common,
    level: ChainLevel,
    opts: StateReaderOptions = {},
  ) {
    // point lookups keep nodes by hash, read in place; the MPT (proofs, code) keeps its own in a smaller cache
    this.trieDb = new ReadOnlyTrieDB(level, createNodeCache(RAW_NODES), opts.syncReads ?? false)
    this.tries = new TrieReader(this.trieDb, opts.nodeCacheBytes ?? 16 << 20)
    this.shared = sharedReadCaches(opts.slots ?? 64_000)
    this.maxOpenRoots = opts.maxOpenRoots ?? 8
    this.accountsPerRoot = opts.accountsPerRoot ?? 10_000
    this.accountCaches = new LruMap(this.maxOpenRoots + 4)
  }

  /** A state manager positioned at `root`; never write through it. */
  at(root: Uint8Array): Promise<ReadCachedStateManager> {
    // the head's root is asked for over and over, as the same header object's bytes
    if (root === this.lastRoot && this.lastSm !== undefined) return this.lastSm
    const sm = this.lookup(root)
    this.lastRoot = root
    this.lastSm = sm
    return sm
  }

  private lastRoot: Uint8Array | undefined
  private lastSm: Promise<ReadCachedStateManager> | undefined

  private lookup(root: Uint8Array): Promise<ReadCachedStateManager> {
    const key = bytesToHex(root)
    let sm = this.byRoot.get(key)
    if (sm !== undefined) {
      this.byRoot.delete(key)
      this.byRoot.set(key, sm)
      return sm
    }
    sm = this.open(root)
    sm.catch(() => {
      this.byRoot.delete(key)
      if (this.lastSm === sm) this.lastSm = undefined
    })
    this.byRoot.set(key, sm)
    if (this.byRoot.size > this.maxOpenRoots) this.byRoot.delete(this.byRoot.keys().next().value as string)
    return sm
  }

  /**
   * The account at a root when a cache already holds it, without I/O or a promise (the hot
   * eth_getBalance / eth_getTransactionCount at 'latest'); undefined when it has to be read.
   */
  peekAccount(rootHex: string, address: string): Account | null | undefined {
    // caches are keyed by unprefixed lowercase address hex; RPC addresses are 0x + lowercase hex
    return this.accountCaches.get(rootHex)?.get(address.slice(2))
  }

  /**
   * A storage slot at a root when the caches hold it and its account, without I/O or a promise (the value
   * with leading zeros stripped); undefined when it has to be read.
   */
  peekStorage(rootHex: string, address: string, key: Uint8Array): Uint8Array | undefined {
    const account = this.peekAccount(rootHex, address)
    if (account === undefined) return undefined
    if (account === null || equalsBytes(account.storageRoot, KECCAK256_RLP)) return NO_VALUE
    return cachedSlot(this.shared, account.storageRoot, key)
  }

  /** The account cache of one root (created on first use; layered once the block's diff is known). */
  private accountsAt(rootHex: string): AccountReadCache {
    let cache = this.accountCaches.get(rootHex)
    if (cache === undefined) {
      cache = new AccountReadCache(this.accountsPerRoot)
      this.accountCaches.set(rootHex, cache)
    }
    return cache
  }

  /**
   * A new head's state diff (from the producer): the head's accounts start from the parent's cache plus
   * the accounts the block wrote, and each rewritten storage root is linked to the one before it, so
   * that calls at the new head find what calls at the parent already read.
   */
  applyDiff(diff: StateDiff): void {
    const rootHex = bytesToHex(diff.root)
    const parentHex = bytesToHex(diff.parentRoot)
    if (rootHex === parentHex) return
    const written = new Map(diff.accounts)
    this.accountsAt(rootHex).layerOver(this.accountCaches.get(parentHex), written)
    for (const storage of diff.storage) {
      const rlp = written.get(storage.address)
      if (storage.wiped || rlp === undefined || rlp === null) continue
      const toHex = bytesToUnprefixedHex(createAccountFromRLP(rlp).storageRoot)
      const fromHex = bytesToUnprefixedHex(storage.fromRoot)
      if (toHex === fromHex) continue
      const changed = new Map<string, Uint8Array>()
      for (const [slot, value] of storage.slots) {
        const compact = compactSlot(value)
        changed.set(slot, compact)
        this.shared.slots.set(toHex + slot, compact)
      }
      this.shared.lineage.set(toHex, { from: fromHex, changed })
    }
  }

  private async open(root: Uint8Array): Promise<ReadCachedStateManager> {
    const trie = await createMPT({ db: this.trieDb, useKeyHashing: true, common: this.common, valueEncoding: ValueEncoding.Bytes })
    if (!(await trie.checkRoot(root))) throw serverError(`missing trie node ${bytesToHex(root)} (path )`)
    trie.root(root)
    return new ReadCachedStateManager(
      {
        trie,
        common: this.common,
        prefixStorageTrieKeys: true,
        // only what a call writes lands here (reads go to the read caches), so they stay small
        caches: new Caches({
          account: { type: CacheType.ORDERED_MAP, size: 1_000 },
          storage: { type: CacheType.ORDERED_MAP, size: 1_000 },
          code: { type: CacheType.ORDERED_MAP, size: 1_000 },
        }),
      },
      this.accountsAt(bytesToHex(root)),
      this.shared,
      this.tries,
    )
  }
}
