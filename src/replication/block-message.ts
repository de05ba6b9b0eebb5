// One block as the producer publishes it to the replicas: everything a replica needs to hold the same
// database after the block (its header, body and receipts, the trie nodes and code the block wrote, the
// pruning bookkeeping of its batch) and the state diff that keeps 'latest' warm on the replica's readers.
// The replica derives the block's other keys (canonical hash, number, transaction and log indexes, head
// pointer) from the header, body and receipts itself (chain/block-record.ts), as the producer does, so
// that no index entry it stores is taken on trust. The explorer's indexes (indexes/block-indexes.ts)
// come from the call frames each transaction made, which only execution shows: the message carries them
// (version 2) and the replica derives the index entries from them by the producer's code; a version 1
// message has none, and the replica then indexes each transaction by its top-level fields.

import { RLP } from '@ethereumjs/rlp'
import { bytesToUnprefixedHex, hexToBytes } from '@ethereumjs/util'
import type { StateDiff } from '../chain/state-diff.js'
import type { LevelOp } from '../chain/store/state-db.js'
import { decodeFrames, encodeFrames } from '../indexes/block-indexes.js'
import type { TxFrames } from '../indexes/frames.js'
import { ReplicationError } from './errors.js'

export const BLOCK_MESSAGE_VERSION = 2

export interface BlockMessage {
  headerRlp: Uint8Array
  bodyRlp: Uint8Array
  receiptsRlp: Uint8Array
  /** trie nodes and contract code the block wrote: raw trie keys (without the table prefix) and values */
  trieNodes: [key: Uint8Array, value: Uint8Array][]
  /** the rest of the batch's state writes (with --state-history: pruned nodes and their bookkeeping) */
  pruneOps: LevelOp[]
  stateDiff: StateDiff | undefined
  /** each transaction's call frames (undefined: a version 1 message) */
  frames: TxFrames[] | undefined
}

const PUT = Uint8Array.of()
const DEL = Uint8Array.of(1)
const EMPTY = new Uint8Array(0)

const unhex = (hex: string): Uint8Array => hexToBytes(`0x${hex}`)

export function encodeStateDiff(diff: StateDiff | undefined): unknown[] {
  if (diff === undefined) return []
  return [
    diff.parentRoot,
    diff.root,
    diff.accounts.map(([address, rlp]) => (rlp === null ? [unhex(address)] : [unhex(address), rlp])),
    diff.storage.map((s) => [unhex(s.address), s.fromRoot, s.wiped ? Uint8Array.of(1) : EMPTY, s.slots.map(([slot, value]) => [unhex(slot), value])]),
  ]
}

export function decodeStateDiff(raw: unknown): StateDiff | undefined {
  if (!Array.isArray(raw)) throw new ReplicationError('malformed', 'state diff is not a list')
  if (raw.length === 0) return undefined
  const [parentRoot, root, accounts, storage] = raw as [Uint8Array, Uint8Array, Uint8Array[][], unknown[][]]
  return {
    parentRoot,
    root,
    accounts: accounts.map((a) => [bytesToUnprefixedHex(a[0]), a.length > 1 ? a[1] : null]),
    storage: storage.map((s) => {
      const [address, fromRoot, wiped, slots] = s as [Uint8Array, Uint8Array, Uint8Array, Uint8Array[][]]
      return {
        address: bytesToUnprefixedHex(address),
        fromRoot,
        wiped: wiped.length > 0,
        slots: slots.map(([slot, value]) => [bytesToUnprefixedHex(slot), value] as [string, Uint8Array]),
      }
    }),
  }
}

export function encodeBlockMessage(m: BlockMessage): Uint8Array {
  return RLP.encode([
    BLOCK_MESSAGE_VERSION,
    m.headerRlp,
    m.bodyRlp,
    m.receiptsRlp,
    m.trieNodes,
    m.pruneOps.map((op) => (op.type === 'put' ? [PUT, op.key, op.value] : [DEL, op.key])),
    encodeStateDiff(m.stateDiff),
    encodeFrames(m.frames ?? []),
  ] as never)
}

export function decodeBlockMessage(bytes: Uint8Array): BlockMessage {
  let raw: unknown
  try {
    raw = RLP.decode(bytes)
  } catch (err) {
    throw new ReplicationError('malformed', `block message is not RLP: ${(err as Error).message}`)
  }
  if (!Array.isArray(raw) || raw.length < 1) throw new ReplicationError('malformed', 'block message is not a list')
  const [version, headerRlp, bodyRlp, receiptsRlp, trieNodes, pruneOps, stateDiff, framesRaw] = raw as unknown[]
  const v = version as Uint8Array
  // version 1 (7 items) from a producer that does not record frames yet is still read
  const known = v instanceof Uint8Array && v.length === 1 && (v[0] === 1 || v[0] === BLOCK_MESSAGE_VERSION)
  if (!known) {
    throw new ReplicationError('malformed', `block message version ${v instanceof Uint8Array ? bytesToUnprefixedHex(v) : '?'} is not 1 or ${BLOCK_MESSAGE_VERSION}`)
  }
  const items = v[0] === 1 ? 7 : 8
  if (raw.length !== items) throw new ReplicationError('malformed', `block message version ${v[0]} is not a list of ${items} items`)
  let frames: TxFrames[] | undefined
  if (v[0] !== 1) {
    try {
      frames = decodeFrames(framesRaw)
    } catch (err) {
      throw new ReplicationError('malformed', `block message frames: ${(err as Error).message}`)
    }
  }
  for (const [name, part] of [['header', headerRlp], ['body', bodyRlp], ['receipts', receiptsRlp]] as const) {
    if (!(part instanceof Uint8Array)) throw new ReplicationError('malformed', `block message ${name} is not a byte string`)
  }
  if (!Array.isArray(trieNodes) || !Array.isArray(pruneOps)) throw new ReplicationError('malformed', 'block message write set is not a list')
  const nodes = trieNodes.map((n: unknown) => {
    if (!Array.isArray(n) || n.length !== 2 || !(n[0] instanceof Uint8Array) || !(n[1] instanceof Uint8Array)) {
      throw new ReplicationError('malformed', 'a trie node entry is not [key, value]')
    }
    return n as [Uint8Array, Uint8Array]
  })
  const ops = pruneOps.map((o: unknown): LevelOp => {
    if (!Array.isArray(o) || !(o[1] instanceof Uint8Array)) throw new ReplicationError('malformed', 'a write set entry is not [type, key, value?]')
    const type = o[0] as Uint8Array
    if (type.length === 0 && o.length === 3 && o[2] instanceof Uint8Array) return { type: 'put', key: o[1], value: o[2] }
    if (type.length === 1 && type[0] === 1 && o.length === 2) return { type: 'del', key: o[1] }
    throw new ReplicationError('malformed', 'a write set entry has an unknown type')
  })
  return {
    headerRlp: headerRlp as Uint8Array,
    bodyRlp: bodyRlp as Uint8Array,
    receiptsRlp: receiptsRlp as Uint8Array,
    trieNodes: nodes,
    pruneOps: ops,
    stateDiff: decodeStateDiff(stateDiff),
    frames,
  }
}
