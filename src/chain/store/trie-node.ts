// A trie node's RLP read where it lies. A node is a list of 17 items (a branch) or 2 (a leaf or an
// extension: hex-prefix path, then value or child); a child is a 32-byte hash, empty, or a node under 32
// bytes embedded as a list. RLP.decode copies every item into a buffer of its own (a branch of 16 hashes:
// 17 arrays and as many buffers), too much for caches of thousands of nodes and for a block's trie update,
// which holds the nodes on its paths until the block is written
// (docs/measurements.md#trie-nodes-read-in-place).

import { RlpCursor } from '../../util/rlp-cursor.js'

/** A node's items as views into its encoding (embedded nodes as nested lists). Never written through. */
export type NodeView = Uint8Array | NodeView[]

/** The empty item (an empty child, a branch without a value): one shared view, which has no bytes to write. */
const EMPTY = new Uint8Array(0)

/** A malformed node: the database holds bytes that are not a trie node. */
export class TrieNodeError extends Error {
  constructor(detail: string) {
    super(`malformed trie node: ${detail}`)
    this.name = 'TrieNodeError'
  }
}

/** A cursor over a node's RLP whose malformed bytes throw TrieNodeError. */
export const nodeCursor = (): RlpCursor => new RlpCursor((detail) => new TrieNodeError(detail))

/**
 * The items of the node encoded at the start of `bytes`, as views (an embedded node as a nested list),
 * for code that rebuilds nodes and reads their items without writing them.
 */
export function decodeNodeViews(bytes: Uint8Array): NodeView[] {
  const cursor = nodeCursor()
  cursor.read(bytes, 0, bytes.length)
  if (!cursor.list) throw new TrieNodeError('not a list')
  if (cursor.end !== bytes.length) throw new TrieNodeError(`${bytes.length - cursor.end} bytes after the node`)
  const items = listViews(bytes, cursor.start, cursor.end, cursor)
  if (items.length !== 17 && items.length !== 2) throw new TrieNodeError(`${items.length} items`)
  return items
}

function listViews(bytes: Uint8Array, pos: number, end: number, cursor: RlpCursor): NodeView[] {
  const items: NodeView[] = []
  while (pos < end) {
    cursor.read(bytes, pos, end)
    const next = cursor.end
    if (cursor.list) items.push(listViews(bytes, cursor.start, cursor.end, cursor))
    else items.push(cursor.start === cursor.end ? EMPTY : bytes.subarray(cursor.start, cursor.end))
    pos = next
  }
  return items
}
