// With --state-history the MPT computes a big block's state root: thousands of account-trie writes that
// never wait on I/O (nodes come from memory), so the producer's event loop, which also takes
// eth_sendRawTransaction submissions, would be held for the whole flush (~0.2 s for 1,000 transfers;
// the bulk flush of archive mode takes a fraction of that). The builder already
// yields between transactions; this makes the trie yield every few milliseconds of writing too.
// Submissions taken meanwhile only touch the pool and the head-state reader, never this trie.

import type { MerklePatriciaTrie } from '@ethereumjs/mpt'
import { TimeSlicer } from '../../util/time-slicer.js'

export function yieldWhileWriting(trie: MerklePatriciaTrie, slicer = new TimeSlicer(10)): void {
  const put = trie.put.bind(trie)
  const del = trie.del.bind(trie)
  trie.put = async (key, value, skipKeyTransform) => {
    await put(key, value, skipKeyTransform)
    if (slicer.due) await slicer.turn()
  }
  trie.del = async (key, skipKeyTransform) => {
    await del(key, skipKeyTransform)
    if (slicer.due) await slicer.turn()
  }
}
