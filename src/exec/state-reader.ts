// Read-only state managers at given state roots, over a trie DB that refuses writes. Trie nodes are
// content-addressed, so one node cache serves every root; a few state managers stay open for the
// roots in use (the head, and whatever historical blocks are being asked about).

import type { Common } from '@ethereumjs/common'
import { createMPT } from '@ethereumjs/mpt'
import { Caches, CacheType } from '@ethereumjs/statemanager'
import { bytesToHex, ValueEncoding } from '@ethereumjs/util'
import type { ChainLevel } from '../chain/store/level.js'
import { NodeCache, ReadOnlyTrieDB } from '../chain/store/state-db.js'
import { ReadOnlyStateManager } from '../evm/state-manager.js'
import { serverError } from '../rpc/errors.js'

export class StateReader {
  private readonly byRoot = new Map<string, Promise<ReadOnlyStateManager>>()
  readonly trieDb: ReadOnlyTrieDB

  constructor(
    private readonly common: Common,
    level: ChainLevel,
    nodeCacheSize = 100_000,
    private readonly maxOpenRoots = 8,
  ) {
    this.trieDb = new ReadOnlyTrieDB(level, new NodeCache(nodeCacheSize))
  }

  /** A state manager positioned at `root`; never write through it. */
  at(root: Uint8Array): Promise<ReadOnlyStateManager> {
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

  private async open(root: Uint8Array): Promise<ReadOnlyStateManager> {
    const trie = await createMPT({ db: this.trieDb, useKeyHashing: true, common: this.common, valueEncoding: ValueEncoding.Bytes })
    if (!(await trie.checkRoot(root))) throw serverError(`missing trie node ${bytesToHex(root)} (path )`)
    trie.root(root)
    return new ReadOnlyStateManager({
      trie,
      common: this.common,
      prefixStorageTrieKeys: true,
      caches: new Caches({
        account: { type: CacheType.LRU, size: 20_000 },
        storage: { type: CacheType.LRU, size: 20_000 },
        code: { type: CacheType.LRU, size: 2_000 },
      }),
    })
  }
}
