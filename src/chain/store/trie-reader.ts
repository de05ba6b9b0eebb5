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

export class TrieReader {
  private readonly nodes: LruMap<string, RawNode[]>

  constructor(
    private readonly source: TrieNodeSource,
    cacheSize: number,
  ) {
    this.nodes = new LruMap(cacheSize)
  }

  /**
   * The value stored under `path` (already hashed: keccak of the address or slot) in the trie rooted
   * at `root`, or null. `keyPrefix` is the storage trie's DB key prefix (none for the account trie).
   */
  async get(root: Uint8Array, path: Uint8Array, keyPrefix = ''): Promise<Uint8Array | null> {
    if (equalsBytes(root, KECCAK256_RLP)) return null
    let node = await this.load(keyPrefix, root)
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
      else node = await this.load(keyPrefix, child)
    }
  }

  private async load(keyPrefix: string, hash: Uint8Array): Promise<RawNode[]> {
    const key = keyPrefix + bytesToUnprefixedHex(hash)
    let node = this.nodes.get(key)
    if (node !== undefined) return node
    let bytes = this.source.fetch(key)
    if (bytes instanceof Promise) bytes = await bytes
    if (bytes === undefined) throw new Error(`missing trie node ${bytesToUnprefixedHex(hash)}`)
    node = RLP.decode(bytes) as RawNode[]
    this.nodes.set(key, node)
    return node
  }
}

function nibbleOf(bytes: Uint8Array, i: number): number {
  const b = bytes[i >> 1]
  return i & 1 ? b & 15 : b >> 4
}
