// debug_storageRangeAt: a contract's storage slots in the order of their hashed keys, from a start key,
// on the state within a block before one of its transactions, as geth's storageRangeAt answers them
// (eth/api_debug.go): `{storage: {hashedKey: {key, value}}, nextKey}`. A slot's preimage (`key`) is
// null, as geth's is without --cache.preimages; `nextKey` is the first key left out, null past the last.
// The walk visits only the trie nodes on the way to the start key and the leaves it returns.

import type { MerklePatriciaTrie, MPTNode } from '@ethereumjs/mpt'
import { BranchMPTNode, ExtensionMPTNode, LeafMPTNode } from '@ethereumjs/mpt'
import { RLP } from '@ethereumjs/rlp'
import { bytesToHex, createAddressFromString, equalsBytes, KECCAK256_RLP, setLengthLeft } from '@ethereumjs/util'
import type { VM } from '@ethereumjs/vm'
import type { FixedMerkleStateManager } from '../evm/state-manager.js'
import { ErrorCode, RpcError } from '../errors.js'
import type { StorageRangeTask } from './types.js'

/** `"0x…":{"key":null,"value":"0x…"},` and the answer around the entries with a next key */
const ENTRY_CHARS = 68 + 22 + 66 + 2 + 1
const EMPTY_ANSWER_CHARS = '{"storage":{},"nextKey":""}'.length + 66

interface Slot {
  hashedKey: Uint8Array
  /** the slot's value, 32 bytes */
  value: Uint8Array
}

/** The JSON of geth's StorageRangeResult for the task, read from `vm`'s state. */
export async function storageRangeJson(vm: VM, task: StorageRangeTask): Promise<string> {
  const trie = await (vm.stateManager as FixedMerkleStateManager).storageTrie(createAddressFromString(task.address))
  // no account, or no storage: geth's zero StorageRangeResult
  if (trie === undefined || equalsBytes(trie.root(), KECCAK256_RLP)) return '{"storage":null,"nextKey":null}'
  const wanted = Math.max(0, task.maxResult)
  // every entry has the same length: past the response limit, no more of the walk is needed
  const fit = task.maxBytes > 0 ? Math.floor((task.maxBytes - EMPTY_ANSWER_CHARS) / ENTRY_CHARS) : Number.MAX_SAFE_INTEGER
  const slots = await slotsFrom(trie, task.start, Math.min(wanted, fit + 1) + 1)
  const shown = slots.slice(0, wanted)
  if (shown.length > fit) {
    throw new RpcError(ErrorCode.ResponseTooLarge, `response too large: the storage range passed ${task.maxBytes} bytes (--batch-response-max-size); ask for fewer slots with maxResult`)
  }
  const next = slots.length > shown.length ? `"${bytesToHex(slots[shown.length].hashedKey)}"` : 'null'
  const entries = shown.map((s) => `"${bytesToHex(s.hashedKey)}":{"key":null,"value":"${bytesToHex(s.value)}"}`)
  return `{"storage":{${entries.join(',')}},"nextKey":${next}}`
}

/**
 * Up to `count` slots in key order, from the first key at or after `start` (keys compare as bytes: a
 * shorter start is the smallest key it prefixes, a longer one is past the key it starts with).
 */
export async function slotsFrom(trie: MerklePatriciaTrie, start: Uint8Array, count: number): Promise<Slot[]> {
  const startNibbles = toNibbles(start.subarray(0, 32))
  // a start longer than a key excludes the key equal to its first 32 bytes
  const startIsPastItsKey = start.length > 32
  const out: Slot[] = []
  if (count === 0) return out

  /** visits `node` at `path`; `bounded` while `path` is still the start's prefix. true: enough slots. */
  const visit = async (node: MPTNode, path: number[], bounded: boolean): Promise<boolean> => {
    if (node instanceof BranchMPTNode) {
      const from = bounded ? startNibbleAt(startNibbles, path.length) : 0
      for (let i = from; i < 16; i++) {
        const child = node.getBranch(i)
        if (child === null) continue
        if (await visit(await trie.lookupNode(child), [...path, i], bounded && i === from)) return true
      }
      return false
    }
    const ownNibbles = (node as ExtensionMPTNode | LeafMPTNode).key()
    const full = [...path, ...ownNibbles]
    let stillBounded = bounded
    if (bounded) {
      const order = compareFrom(full, startNibbles, path.length)
      if (order < 0) return false
      stillBounded = order === 0
    }
    if (node instanceof ExtensionMPTNode) return visit(await trie.lookupNode(node.value()), full, stillBounded)
    // a leaf: the whole key, equal to the (zero-padded) start if still bounded
    if (stillBounded && startIsPastItsKey) return false
    const content = RLP.decode((node as LeafMPTNode).value()) as Uint8Array
    out.push({ hashedKey: fromNibbles(full), value: setLengthLeft(content, 32) })
    return out.length >= count
  }

  await visit(await trie.lookupNode(trie.root()), [], startNibbles.length > 0)
  return out
}

/** The start's nibble at `at`, or 0 past its end (a shorter start is padded with zeros). */
function startNibbleAt(start: number[], at: number): number {
  return at < start.length ? start[at] : 0
}

/** Compares `path` with the start over positions `from` to the end of `path`: -1, 0 or 1. */
function compareFrom(path: number[], start: number[], from: number): number {
  for (let i = from; i < path.length; i++) {
    const s = startNibbleAt(start, i)
    if (path[i] !== s) return path[i] < s ? -1 : 1
  }
  return 0
}

function toNibbles(bytes: Uint8Array): number[] {
  const out = new Array<number>(bytes.length * 2)
  for (let i = 0; i < bytes.length; i++) {
    out[2 * i] = bytes[i] >> 4
    out[2 * i + 1] = bytes[i] & 15
  }
  return out
}

function fromNibbles(nibbles: number[]): Uint8Array {
  const out = new Uint8Array(nibbles.length >> 1)
  for (let i = 0; i < out.length; i++) out[i] = (nibbles[2 * i] << 4) | nibbles[2 * i + 1]
  return out
}
