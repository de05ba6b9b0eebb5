// Point lookups in the state trie (accounts, storage slots) without the MPT class: a read-only walk
// from a root along the key's nibbles, over RLP-decoded nodes kept in a content-addressed cache.
// @ethereumjs/mpt's get() goes through its async walk controller, a node class per step and a trie
// object per storage root (a fresh one per call, since a revert drops them): about a third of a
// balanceOf eth_call. The node format is the yellow paper's: a branch is 17 items, an extension or a
// leaf is [hex-prefix path, child or value], and a child shorter than 32 bytes is embedded inline.

import { RLP } from '@ethereumjs/rlp'
import { bytesToUnprefixedHex, equalsBytes, KECCAK256_RLP } from '@ethereumjs/util'
import { LruMap } from '../../util/lru.js'

type RawNode = Uint8Array | RawNode[]

/** Where node bytes come from: the trie DB by its key (unprefixed hex of key prefix + node hash). */
export interface TrieNodeSource {
  fetch(key: string): Uint8Array | undefined | Promise<Uint8Array | undefined>
}

/** A decoded node and the hash it is stored under (a cache key is only the hash's first 48 bits). */
interface CachedNode {
  hash: Uint8Array
  node: RawNode[]
  /** bytes it holds, roughly: the encoded node plus a view object per item (a branch: ~1.9 KiB) */
  weight: number
}

const ITEM_BYTES = 80
const NODE_BYTES = 200

export class TrieReader {
  // Keyed by a number, not by hex: building and hashing a 64-character string per step of every walk
  // was ~10% of an eth_call. A node's hash names its content whatever DB prefix it sits under, so the
  // prefix is not part of the key; two hashes sharing 48 bits only evict each other (the full hash is
  // compared on every hit).
  private readonly nodes: LruMap<number, CachedNode>

  /** `cacheBytes` bounds the decoded nodes kept (by their estimated size, not their count). */
  constructor(
    private readonly source: TrieNodeSource,
    cacheBytes: number,
  ) {
    this.nodes = new LruMap(cacheBytes, (entry) => entry.weight)
  }

  /**
   * The value stored under `path` (already hashed: keccak of the address or slot) in the trie rooted
   * at `root`, or null. `keyPrefix` is the storage trie's DB key prefix (none for the account trie).
   */
  async get(root: Uint8Array, path: Uint8Array, keyPrefix = ''): Promise<Uint8Array | null> {
    if (equalsBytes(root, KECCAK256_RLP)) return null
    let loaded = this.load(keyPrefix, root)
    let node = loaded instanceof Promise ? await loaded : loaded
    const nibbleCount = path.length * 2
    let at = 0
    for (;;) {
      let child: RawNode
      if (node.length === 17) {
        if (at === nibbleCount) {
          const value = node[16] as Uint8Array
          return value.length > 0 ? value : null
        }
        child = node[nibbleOf(path, at++)]
      } else {
        const encoded = node[0] as Uint8Array
        const flag = encoded[0] >> 4
        const leaf = flag >= 2
        // nibbles of the node's path: after the flag nibble, and after a padding nibble if even
        let p = flag & 1 ? 1 : 2
        const end = encoded.length * 2
        if (leaf && end - p !== nibbleCount - at) return null
        for (; p < end; p++, at++) {
          if (at === nibbleCount || nibbleOf(encoded, p) !== nibbleOf(path, at)) return null
        }
        if (leaf) return node[1] as Uint8Array
        child = node[1]
      }
      if (Array.isArray(child)) node = child
      else if (child.length === 0) return null
      else {
        loaded = this.load(keyPrefix, child)
        node = loaded instanceof Promise ? await loaded : loaded
      }
    }
  }

  /** A cached node without a promise; a fetch only when the source is asynchronous. */
  private load(keyPrefix: string, hash: Uint8Array): RawNode[] | Promise<RawNode[]> {
    const cacheKey = hashKey(hash)
    const cached = this.nodes.get(cacheKey)
    if (cached !== undefined && equalsBytes(cached.hash, hash)) return cached.node
    const dbKey = keyPrefix + bytesToUnprefixedHex(hash)
    const bytes = this.source.fetch(dbKey)
    if (bytes instanceof Promise) return bytes.then((b) => this.decoded(cacheKey, hash, b))
    return this.decoded(cacheKey, hash, bytes)
  }

  private decoded(cacheKey: number, hash: Uint8Array, bytes: Uint8Array | undefined): RawNode[] {
    if (bytes === undefined) throw new Error(`missing trie node ${bytesToUnprefixedHex(hash)}`)
    const node = RLP.decode(bytes) as RawNode[]
    this.nodes.set(cacheKey, { hash: hash.slice(), node, weight: NODE_BYTES + bytes.length + node.length * ITEM_BYTES })
    return node
  }
}

/** The first 48 bits of a 32-byte hash as a number (exact in a double). */
function hashKey(h: Uint8Array): number {
  return ((h[0] * 256 + h[1]) * 256 + h[2]) * 16_777_216 + ((h[3] << 16) | (h[4] << 8) | h[5])
}

function nibbleOf(bytes: Uint8Array, i: number): number {
  const b = bytes[i >> 1]
  return i & 1 ? b & 15 : b >> 4
}
