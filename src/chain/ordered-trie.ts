// The root of a block's transactions or receipts trie (keys RLP(0), RLP(1), ...), built in one pass
// over the sorted keys: every node is encoded and hashed once. Inserting one by one through
// @ethereumjs/mpt re-walks and re-hashes the path for every key: ~0.25 s for the two tries of a block
// of 1,000 transfers, a quarter of the block's cost. Nodes follow the yellow paper (appendix D): leaf
// and extension paths in hex-prefix encoding, a child whose encoding is under 32 bytes embedded as is.
// test/chain/ordered-trie.test.js checks the roots against @ethereumjs/mpt.

import { RLP } from '@ethereumjs/rlp'
import type { Input } from '@ethereumjs/rlp'
import { KECCAK256_RLP } from '@ethereumjs/util'
import type { Turns } from '../util/time-slicer.js'

export interface TrieItem {
  /** the whole key, one nibble per byte */
  nibbles: Uint8Array
  value: Uint8Array
}

export interface Built {
  raw: Input
  encoded: Uint8Array
}

const EMPTY = new Uint8Array(0)

/** A leaf encoded ahead of the pass, with the depth it sits at and how its parent refers to it. */
export interface PreparedLeaf {
  depth: number
  ref: Input
}

export function orderedTrieRoot(values: Uint8Array[], keccak: (data: Uint8Array) => Uint8Array): Uint8Array {
  if (values.length === 0) return KECCAK256_RLP
  const items = indexItems(values)
  const builder = new TrieNodeBuilder(items, keccak)
  return keccak(builder.build(0, items.length, 0).encoded)
}

/**
 * The same root, for a thread that takes other work meanwhile (the producer): the leaves, most of the
 * nodes and of the hashing (a block of 2,000 receipts: 56 ms in one stretch), are encoded and hashed in
 * a loop that gives the event loop a turn when `turns` is due; the few branches above them are then built
 * in one pass as before.
 */
export async function orderedTrieRootSliced(
  values: Uint8Array[],
  keccak: (data: Uint8Array) => Uint8Array,
  turns: Turns,
): Promise<Uint8Array> {
  if (values.length === 0) return KECCAK256_RLP
  const items = indexItems(values)
  const leaves: PreparedLeaf[] = new Array(items.length)
  for (let i = 0; i < items.length; i++) {
    if (turns.due) await turns.turn()
    const depth = leafDepth(items, i)
    const { nibbles, value } = items[i]
    const leaf = node([hexPrefix(nibbles, depth, nibbles.length, true), value])
    leaves[i] = { depth, ref: leaf.encoded.length < 32 ? leaf.raw : keccak(leaf.encoded) }
  }
  const builder = new TrieNodeBuilder(items, keccak, undefined, leaves)
  return keccak(builder.build(0, items.length, 0).encoded)
}

/** The keys RLP(0), RLP(1), ... of `values`, in key order. */
function indexItems(values: Uint8Array[]): TrieItem[] {
  const items: TrieItem[] = new Array(values.length)
  for (let i = 0; i < values.length; i++) items[i] = { nibbles: toNibbles(RLP.encode(i)), value: values[i] }
  items.sort(compareItems)
  return items
}

/**
 * The depth of item i's leaf: one past the longest prefix it shares with a neighbour (sorted keys share
 * the most with their neighbours). RLP is prefix-free, so no index key ends inside another's path.
 */
function leafDepth(items: readonly TrieItem[], i: number): number {
  const before = i > 0 ? sharedPrefix(items[i - 1].nibbles, items[i].nibbles) : -1
  const after = i + 1 < items.length ? sharedPrefix(items[i].nibbles, items[i + 1].nibbles) : -1
  return Math.max(before, after) + 1
}

function sharedPrefix(a: Uint8Array, b: Uint8Array): number {
  let n = 0
  while (n < a.length && n < b.length && a[n] === b[n]) n++
  return n
}

/**
 * Builds the canonical subtrie of sorted, distinct keys. `onHashed` sees every node that is referenced
 * by hash (encoding of 32 bytes or more), for callers that store the nodes.
 */
export class TrieNodeBuilder {
  constructor(
    private readonly items: TrieItem[],
    private readonly keccak: (data: Uint8Array) => Uint8Array,
    private readonly onHashed?: (hash: Uint8Array, encoded: Uint8Array) => void,
    /** items' leaves encoded and hashed ahead (orderedTrieRootSliced; not reported to onHashed) */
    private readonly leaves?: readonly PreparedLeaf[],
  ) {}

  /** The node holding items[lo, hi), all of which share their first `depth` nibbles. */
  build(lo: number, hi: number, depth: number): Built {
    const items = this.items
    const first = items[lo].nibbles
    if (hi - lo === 1) return node([hexPrefix(first, depth, first.length, true), items[lo].value])
    // sorted, so the range's common prefix is that of its first and last keys
    const last = items[hi - 1].nibbles
    let shared = depth
    while (shared < first.length && shared < last.length && first[shared] === last[shared]) shared++
    if (shared > depth) {
      return node([hexPrefix(first, depth, shared, false), this.ref(this.build(lo, hi, shared))])
    }
    const branch: Input[] = new Array(17).fill(EMPTY)
    let i = lo
    if (first.length === depth) branch[16] = items[i++].value
    while (i < hi) {
      const nibble = items[i].nibbles[depth]
      let j = i + 1
      while (j < hi && items[j].nibbles[depth] === nibble) j++
      branch[nibble] = this.childRef(i, j, depth + 1)
      i = j
    }
    return node(branch)
  }

  /** How a branch refers to its child holding items[lo, hi) at `depth`. */
  private childRef(lo: number, hi: number, depth: number): Input {
    const leaf = hi - lo === 1 ? this.leaves?.[lo] : undefined
    if (leaf !== undefined && leaf.depth === depth) return leaf.ref
    return this.ref(this.build(lo, hi, depth))
  }

  /** How a parent refers to `child`: embedded when its encoding is under 32 bytes, else by hash. */
  ref(child: Built): Input {
    if (child.encoded.length < 32) return child.raw
    const hash = this.keccak(child.encoded)
    this.onHashed?.(hash, child.encoded)
    return hash
  }
}

function node(raw: Input[]): Built {
  return { raw, encoded: RLP.encode(raw) }
}

/** Hex-prefix encoding of nibbles[from, to) with the leaf flag. */
export function hexPrefix(nibbles: Uint8Array, from: number, to: number, leaf: boolean): Uint8Array {
  const count = to - from
  const odd = count & 1
  const out = new Uint8Array((count >> 1) + 1)
  const flag = (leaf ? 2 : 0) + odd
  let at = from
  if (odd) out[0] = (flag << 4) | nibbles[at++]
  else out[0] = flag << 4
  for (let k = 1; k < out.length; k++, at += 2) out[k] = (nibbles[at] << 4) | nibbles[at + 1]
  return out
}

export function toNibbles(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(bytes.length * 2)
  for (let i = 0; i < bytes.length; i++) {
    out[2 * i] = bytes[i] >> 4
    out[2 * i + 1] = bytes[i] & 15
  }
  return out
}

/** Items in key order (Array.prototype.sort's comparator). */
export function compareItems(a: TrieItem, b: TrieItem): number {
  return compareNibbles(a.nibbles, b.nibbles)
}

export function compareNibbles(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i]
  return a.length - b.length
}
