// A VM over a block's state whose writes stay in memory (overlay-trie-db.ts) and are dropped with it:
// what eth_simulateV1 builds its blocks on and debug_trace* replays transactions on. Nothing it does
// reaches the database.

import type { Common } from '@ethereumjs/common'
import { createMPT } from '@ethereumjs/mpt'
import { Caches, CacheType } from '@ethereumjs/statemanager'
import { bytesToHex, ValueEncoding } from '@ethereumjs/util'
import { createVM } from '@ethereumjs/vm'
import type { VM } from '@ethereumjs/vm'
import type { ReadOnlyTrieDB } from '../chain/store/state-db.js'
import type { EVMMockBlockchainInterface } from '@ethereumjs/evm'
import { FixedMerkleStateManager } from '../evm/state-manager.js'
import { serverError } from '../errors.js'
import { OverlayTrieDB } from './overlay-trie-db.js'

export async function scratchVM(trieDb: ReadOnlyTrieDB, common: Common, stateRoot: Uint8Array, blockchain: EVMMockBlockchainInterface): Promise<VM> {
  const trie = await createMPT({ db: new OverlayTrieDB(trieDb), useKeyHashing: true, common, valueEncoding: ValueEncoding.Bytes })
  if (!(await trie.checkRoot(stateRoot))) throw serverError(`missing trie node ${bytesToHex(stateRoot)} (path )`)
  trie.root(stateRoot)
  const sm = new FixedMerkleStateManager({
    trie,
    common,
    prefixStorageTrieKeys: true,
    caches: new Caches({
      account: { type: CacheType.ORDERED_MAP, size: 10_000 },
      storage: { type: CacheType.ORDERED_MAP, size: 10_000 },
      code: { type: CacheType.ORDERED_MAP, size: 1_000 },
    }),
  })
  return createVM({ common, stateManager: sm, blockchain })
}
