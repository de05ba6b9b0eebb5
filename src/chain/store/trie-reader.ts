// Point lookups in the state trie (accounts, storage slots) without the MPT class: a read-only walk
// from a root along the key's nibbles, over the nodes' encodings kept in a content-addressed cache and
// read in place (trie-node.ts). @ethereumjs/mpt's get() goes through its async walk controller, a node
// class per step and a trie object per storage root (a fresh one per call, since a revert drops them):
// about a third of a balanceOf eth_call. The node format is the yellow paper's: a branch is 17 items, an
// extension or a leaf is [hex-prefix path, child or value], and a child shorter than 32 bytes is embedded
// inline.

import { bytesToUnprefixedHex, equalsBytes, KECCAK256_RLP } from '@ethereumjs/util'
import { LruMap } from '../../util/lru.js'
import { nodeCursor, TrieNodeError } from './trie-node.js'

/** Where node bytes come from: the trie DB by its key (unprefixed hex of key prefix + node hash). */
export interface TrieNodeSource {
  fetch(key: string): Uint8Array | undefined | Promise<Uint8Array | undefined>
}

/**
 * A cached node is one array: the 32-byte hash it is stored under (a cache key is only the hash's first 48
 * bits), then its encoding. Over a trie of 30,000 keys a cached node holds ~330 bytes, against ~1,660 as
 * decoded items (bench/micro/trie-reader.js; docs/measurements.md#trie-nodes-read-in-place).
 */
const HASH = 32
/** What a cached node holds besides its encoding (the array, its buffer, the map's slot): 240-270 measured. */
const ENTRY_BYTES = 270

export class TrieReader {
  // Keyed by a number, not by hex: building and hashing a 64-character string per step of every walk
  // was ~10% of an eth_call. A node's hash names its content whatever DB prefix it sits under, so the
  // prefix is not part of the key; two hashes sharing 48 bits only evict each other (the full hash is
  // compared on every hit).
  private readonly nodes: LruMap<number, Uint8Array>
  private readonly cursor = nodeCursor()

  /** `cacheBytes` bounds the nodes kept (by their estimated size, not their count). */
  constructor(
    private readonly source: TrieNodeSource,
    cacheBytes: number,
  ) {
    this.nodes = new LruMap(cacheBytes, (entry) => ENTRY_BYTES + entry.length)
  }

  /**
   * The value stored under `path` (already hashed: keccak of the address or slot) in the trie rooted
   * at `root`, or null. `keyPrefix` is the storage trie's DB key prefix (none for the account trie).
   * The value is a view into a cached node: read it, never write it.
   */
  async get(root: Uint8Array, path: Uint8Array, keyPrefix = ''): Promise<Uint8Array | null> {
    if (equalsBytes(root, KECCAK256_RLP)) return null
    const c = this.cursor
    let loaded = this.load(keyPrefix, root, 0)
    let bytes = loaded instanceof Promise ? await loaded : loaded
    // the node being read: the RLP item at [pos, limit) of bytes (a whole cached node, or one embedded in it)
    let pos = HASH
    let limit = bytes.length
    const nibbleCount = path.length * 2
    let at = 0
    for (;;) {
      c.read(bytes, pos, limit)
      if (!c.list) throw new TrieNodeError('not a list')
      const listEnd = c.end
      const first = c.start
      c.read(bytes, first, listEnd)
      const firstIsList = c.list
      const pathStart = c.start
      const pathEnd = c.end
      const second = c.end
      c.read(bytes, second, listEnd)
      // the child or value to follow, as its item's position
      let next: number
      if (c.end === listEnd) {
        // a leaf or an extension: [hex-prefix path, value or child]
        if (firstIsList || pathEnd === pathStart) throw new TrieNodeError('a short node without a path')
        const flag = bytes[pathStart] >> 4
        const leaf = flag >= 2
        // nibbles of the node's path: after the flag nibble, and after a padding nibble if even
        let p = flag & 1 ? 1 : 2
        const end = (pathEnd - pathStart) * 2
        if (leaf && end - p !== nibbleCount - at) return null
        for (; p < end; p++, at++) {
          if (at === nibbleCount || nibbleOf(bytes, pathStart, p) !== nibbleOf(path, 0, at)) return null
        }
        if (leaf) {
          if (c.list) throw new TrieNodeError('a leaf whose value is a list')
          return bytes.subarray(c.start, c.end)
        }
        next = second
      } else {
        // a branch: 16 children, then the value of a key that ends here
        const index = at === nibbleCount ? 16 : nibbleOf(path, 0, at++)
        next = index === 0 ? first : second
        for (let i = 1; i < index; i++) {
          // most children are a hash (0xa0 and 32 bytes) or empty (0x80); the final read checks the bounds
          const head = bytes[next]
          if (head === 0xa0) next += 33
          else if (head === 0x80) next += 1
          else {
            c.read(bytes, next, listEnd)
            next = c.end
          }
        }
        if (index === 16) {
          c.read(bytes, next, listEnd)
          if (c.list) throw new TrieNodeError('a branch value that is a list')
          return c.end > c.start ? bytes.subarray(c.start, c.end) : null
        }
      }
      c.read(bytes, next, listEnd)
      if (c.list) {
        // an embedded node: read on within the same bytes
        pos = next
        limit = c.end
      } else if (c.end === c.start) {
        return null
      } else {
        if (c.end - c.start !== 32) throw new TrieNodeError(`a child reference of ${c.end - c.start} bytes`)
        loaded = this.load(keyPrefix, bytes, c.start)
        bytes = loaded instanceof Promise ? await loaded : loaded
        pos = HASH
        limit = bytes.length
      }
    }
  }

  /**
   * The cached node (hash, then encoding) whose hash is the 32 bytes at `at` of `ref`: without a promise
   * when cached, fetched otherwise.
   */
  private load(keyPrefix: string, ref: Uint8Array, at: number): Uint8Array | Promise<Uint8Array> {
    const cacheKey = hashKey(ref, at)
    const cached = this.nodes.get(cacheKey)
    if (cached !== undefined && sameHash(cached, ref, at)) return cached
    const hash = ref.subarray(at, at + HASH)
    const bytes = this.source.fetch(keyPrefix + bytesToUnprefixedHex(hash))
    if (bytes instanceof Promise) return this.loadedLater(cacheKey, hash, bytes)
    return this.loaded(cacheKey, hash, bytes)
  }

  /** A method, not a closure made per fetch: see StorageTrieNodes (bulk-flush-sm.ts). */
  private async loadedLater(cacheKey: number, hash: Uint8Array, fetching: Promise<Uint8Array | undefined>): Promise<Uint8Array> {
    return this.loaded(cacheKey, hash, await fetching)
  }

  private loaded(cacheKey: number, hash: Uint8Array, bytes: Uint8Array | undefined): Uint8Array {
    if (bytes === undefined) throw new Error(`missing trie node ${bytesToUnprefixedHex(hash)}`)
    // a copy into the node's own array: the entry keeps neither the referring node nor the source's buffer
    const entry = new Uint8Array(HASH + bytes.length)
    entry.set(hash)
    entry.set(bytes, HASH)
    this.nodes.set(cacheKey, entry)
    return entry
  }
}

/** The first 48 bits of the 32-byte hash at `at` of `h` as a number (exact in a double). */
function hashKey(h: Uint8Array, at: number): number {
  return ((h[at] * 256 + h[at + 1]) * 256 + h[at + 2]) * 16_777_216 + ((h[at + 3] << 16) | (h[at + 4] << 8) | h[at + 5])
}

function sameHash(hash: Uint8Array, ref: Uint8Array, at: number): boolean {
  for (let i = 0; i < 32; i++) if (hash[i] !== ref[at + i]) return false
  return true
}

/** Nibble `i` of the bytes from `from` on. */
function nibbleOf(bytes: Uint8Array, from: number, i: number): number {
  const b = bytes[from + (i >> 1)]
  return i & 1 ? b & 15 : b >> 4
}
