// The start of a mined block, as the call pool replays it on its parent's state (exec/trace/replay.ts):
// what debug_traceTransaction, debug_traceCall's txIndex and debug_storageRangeAt send with their tasks.

import type { BlockRecord, ChainView } from '../../chain/view.js'
import type { BlockPrefix } from '../../exec/types.js'
import { serverError } from '../errors.js'
import { bytesToHex } from '../hex.js'

/** `block`'s first `count` transactions, to replay on its parent's state (whose state must be kept). */
export async function blockPrefix(view: ChainView, block: BlockRecord, count: number): Promise<BlockPrefix> {
  const parent = await view.blockByNumber(block.number - 1n)
  if (parent === undefined) throw serverError(`parent block #${block.number - 1n} not found`)
  if (!view.hasStateOf(parent.number)) throw serverError(`historical state ${bytesToHex(parent.header.stateRoot)} is not available`)
  const txs: Uint8Array[] = new Array(count)
  for (let i = 0; i < count; i++) txs[i] = block.rawTx(i)
  return { headerRlp: block.header.serialize(), parentStateRoot: bytesToHex(parent.header.stateRoot), txs, senders: block.senders.slice(0, count) }
}

/** geth's StateAtTransaction: the block up to its transaction at `txIndex`, which must be one of its own. */
export async function prefixBefore(view: ChainView, block: BlockRecord, txIndex: number): Promise<BlockPrefix> {
  if (block.number === 0n) throw serverError('no transaction in genesis')
  if (txIndex < 0 || txIndex >= block.txHashes.length) throw serverError(`transaction index ${txIndex} out of range for block ${block.hash}`)
  return blockPrefix(view, block, txIndex)
}
