// The producer's state manager: at the end of a block its account writes reach the state trie in one
// bulk update (trie-bulk-update.ts) instead of one MPT insert per account. Code and storage are
// flushed the library's way; the account trie's put/del calls during flush() are collected and
// applied together. With node pruning (--state-history) the MPT's own path stays, since it reports
// the superseded nodes that pruning needs.

import type { MerklePatriciaTrie } from '@ethereumjs/mpt'
import { FixedMerkleStateManager } from '../../evm/state-manager.js'
import { compareNibbles, toNibbles } from '../ordered-trie.js'
import { bulkUpdateTrie } from './trie-bulk-update.js'

type Options = ConstructorParameters<typeof FixedMerkleStateManager>[0]

const DELETE = new Uint8Array(0)

export class BulkFlushStateManager extends FixedMerkleStateManager {
  private pending: Map<string, [Uint8Array, Uint8Array]> | undefined
  private readonly hash: (data: Uint8Array) => Uint8Array
  private readonly bulk: boolean

  constructor(opts: Options & { trie: MerklePatriciaTrie }) {
    super(opts)
    const trie = opts.trie
    const trieOpts = (trie as unknown as { _opts: { useKeyHashing?: boolean; useNodePruning?: boolean; keyPrefix?: Uint8Array } })._opts
    const keccak = opts.common?.customCrypto?.keccak256
    if (keccak === undefined) throw new Error('BulkFlushStateManager needs a Common with customCrypto.keccak256')
    this.hash = keccak
    this.bulk = trieOpts.useKeyHashing === true && trieOpts.useNodePruning !== true && trieOpts.keyPrefix === undefined
    const put = trie.put.bind(trie)
    const del = trie.del.bind(trie)
    trie.put = async (key, value, skipKeyTransform) => {
      if (this.pending === undefined) return put(key, value, skipKeyTransform)
      this.defer(key, value ?? DELETE, skipKeyTransform)
    }
    trie.del = async (key, skipKeyTransform) => {
      if (this.pending === undefined) return del(key, skipKeyTransform)
      this.defer(key, DELETE, skipKeyTransform)
    }
  }

  private defer(key: Uint8Array, value: Uint8Array, skipKeyTransform = false): void {
    const path = skipKeyTransform ? key : this.hash(key)
    this.pending!.set(Buffer.from(path).toString('hex'), [path, value])
  }

  override async flush(): Promise<void> {
    if (!this.bulk) return super.flush()
    const writes = new Map<string, [Uint8Array, Uint8Array]>()
    this.pending = writes
    try {
      await super.flush()
    } finally {
      this.pending = undefined
    }
    if (writes.size === 0) return
    const items = [...writes.values()].map(([path, value]) => ({ nibbles: toNibbles(path), value }))
    items.sort((a, b) => compareNibbles(a.nibbles, b.nibbles))
    const trie = this._trie
    trie.root(await bulkUpdateTrie(trie.database(), trie.root(), items, this.hash))
  }
}
