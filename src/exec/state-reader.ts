// Read-only state managers at given state roots, over a trie DB that refuses writes. Trie nodes,
// storage slots (by storage root) and code (by hash) are content-addressed, so one cache of each
// serves every root; a few state managers stay open for the roots in use (the head, and whatever
// historical blocks are being asked about), each with its own revert-proof account cache.

import type { Common } from '@ethereumjs/common'
import { createMPT } from '@ethereumjs/mpt'
import { Caches, CacheType } from '@ethereumjs/statemanager'
import { bytesToHex, ValueEncoding } from '@ethereumjs/util'
import type { ChainLevel } from '../chain/store/level.js'
import { createNodeCache, ReadOnlyTrieDB } from '../chain/store/state-db.js'
import { serverError } from '../rpc/errors.js'
import { sharedReadCaches } from './read-cache.js'
import { LruMap } from '../util/lru.js'
import type { SharedReadCaches } from './read-cache.js'
import { ReadCachedStateManager } from './read-cached-sm.js'

export interface StateReaderOptions {
  /** trie nodes kept in memory, shared by every root */
  nodeCacheSize?: number
  /** state managers kept open (one per root) */
  maxOpenRoots?: number
  /** accounts remembered per root */
  accountsPerRoot?: number
  /** storage slots remembered, shared by every root */
  slots?: number
}

export class StateReader {
  private readonly byRoot = new Map<string, Promise<ReadCachedStateManager>>()
  readonly trieDb: ReadOnlyTrieDB
  readonly shared: SharedReadCaches
  private readonly maxOpenRoots: number
  private readonly accountsPerRoot: number

  constructor(
    private readonly common: Common,
    level: ChainLevel,
    opts: StateReaderOptions = {},
  ) {
    this.trieDb = new ReadOnlyTrieDB(level, createNodeCache(opts.nodeCacheSize ?? 100_000))
    this.shared = sharedReadCaches(opts.slots ?? 200_000)
    this.maxOpenRoots = opts.maxOpenRoots ?? 8
    this.accountsPerRoot = opts.accountsPerRoot ?? 50_000
  }

  /** A state manager positioned at `root`; never write through it. */
  at(root: Uint8Array): Promise<ReadCachedStateManager> {
    const key = bytesToHex(root)
    let sm = this.byRoot.get(key)
    if (sm !== undefined) {
      this.byRoot.delete(key)
      this.byRoot.set(key, sm)
      return sm
    }
    sm = this.open(root)
    sm.catch(() => this.byRoot.delete(key))
    this.byRoot.set(key, sm)
    if (this.byRoot.size > this.maxOpenRoots) this.byRoot.delete(this.byRoot.keys().next().value as string)
    return sm
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
      new LruMap(this.accountsPerRoot),
      this.shared,
    )
  }
}
