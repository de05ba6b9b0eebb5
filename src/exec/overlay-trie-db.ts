// A trie DB for state that is built on and then thrown away (eth_simulateV1's blocks): reads fall
// through to the chain's read-only trie DB, writes stay in memory. Computing a simulated block's state
// root writes trie nodes; they land here and never reach LevelDB.

import type { BatchDBOp, DB } from '@ethereumjs/util'
import type { ReadOnlyTrieDB } from '../chain/store/state-db.js'

export class OverlayTrieDB implements DB<string, Uint8Array> {
  constructor(
    private readonly base: ReadOnlyTrieDB,
    /** shared by every shallow copy (storage tries write into the same overlay as the account trie) */
    private readonly writes = new Map<string, Uint8Array>(),
  ) {}

  async get(key: string): Promise<Uint8Array | undefined> {
    return this.writes.get(key) ?? this.base.get(key)
  }

  async put(key: string, value: Uint8Array): Promise<void> {
    this.writes.set(key, value)
  }

  /** Nodes are content-addressed and the overlay is dropped whole: a delete has nothing to undo. */
  async del(): Promise<void> {}

  async batch(ops: BatchDBOp<string, Uint8Array>[]): Promise<void> {
    for (const op of ops) if (op.type === 'put') this.writes.set(op.key, op.value)
  }

  async open(): Promise<void> {}

  shallowCopy(): OverlayTrieDB {
    return new OverlayTrieDB(this.base, this.writes)
  }
}
