// The start of a block, as the call pool replays it on its parent's state (exec/trace/replay.ts): what
// debug_traceTransaction, debug_traceBlock*, debug_traceCall's txIndex and debug_storageRangeAt send
// with their tasks.

import { RLP } from '@ethereumjs/rlp'
import { bytesToBigInt } from '@ethereumjs/util'
import type { BlockRecord, ChainView } from '../../chain/view.js'
import type { BlockPrefix } from '../../exec/types.js'
import { serverError } from '../../errors.js'
import { bytesToHex } from '../../util/hex.js'

/** `block`'s first `count` transactions, to replay on its parent's state (whose state must be kept). */
export async function blockPrefix(view: ChainView, block: BlockRecord, count: number): Promise<BlockPrefix> {
  const parent = await view.blockByNumber(block.number - 1n)
  if (parent === undefined) throw serverError(`parent block #${block.number - 1n} not found`)
  const txs: Uint8Array[] = new Array(count)
  for (let i = 0; i < count; i++) txs[i] = block.rawTx(i)
  return { headerRlp: block.header.serialize(), parentStateRoot: keptStateRoot(view, parent), txs, senders: block.senders.slice(0, count) }
}

/**
 * The kept state of the parent that a block from outside the chain names (debug_traceBlock), found as
 * geth's traceBlock finds it: by number first, then by hash. Only the header is read here; the block's
 * transactions are the call pool's to decode (exec/trace/foreign-block.ts).
 */
export async function foreignParentState(view: ChainView, blockRlp: Uint8Array): Promise<string> {
  const header = headerFields(blockRlp)
  const number = bytesToBigInt(header[8] as Uint8Array)
  if (number === 0n) throw serverError('genesis is not traceable')
  const parentHash = bytesToHex(header[0] as Uint8Array)
  let parent = await view.blockByNumber(number - 1n)
  if (parent === undefined) throw serverError(`block #${number - 1n} not found`)
  if (parent.hash !== parentHash) {
    parent = await view.blockByHash(parentHash)
    if (parent === undefined) throw serverError(`block ${parentHash} not found`)
  }
  return keptStateRoot(view, parent)
}

/**
 * The header of a block's RLP without decoding the rest: past the outer list's length prefix (a short list
 * 0xc0-0xf7, or 0xf8-0xff and that many length bytes), the library decodes the first item alone.
 */
function headerFields(blockRlp: Uint8Array): Uint8Array[] {
  const first = blockRlp[0]
  let fields: unknown
  try {
    if (first === undefined || first < 0xc0) throw new Error('the block is not a list')
    fields = RLP.decode(blockRlp.subarray(first <= 0xf7 ? 1 : 1 + first - 0xf7), true).data
  } catch (err) {
    throw serverError(`could not decode block: ${(err as Error).message}`)
  }
  const valid = Array.isArray(fields) && fields.length >= 15 && fields.every((f) => f instanceof Uint8Array) && (fields[0] as Uint8Array).length === 32
  if (!valid) throw serverError('could not decode block: the header is not a list of its fields')
  return fields as Uint8Array[]
}

function keptStateRoot(view: ChainView, block: BlockRecord): string {
  const root = bytesToHex(block.header.stateRoot)
  if (!view.hasStateOf(block.number)) throw serverError(`historical state ${root} is not available`)
  return root
}

/** geth's StateAtTransaction: the block up to its transaction at `txIndex`, which must be one of its own. */
export async function prefixBefore(view: ChainView, block: BlockRecord, txIndex: number): Promise<BlockPrefix> {
  if (block.number === 0n) throw serverError('no transaction in genesis')
  if (txIndex < 0 || txIndex >= block.txHashes.length) throw serverError(`transaction index ${txIndex} out of range for block ${block.hash}`)
  return blockPrefix(view, block, txIndex)
}
