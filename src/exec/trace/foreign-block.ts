// debug_traceBlock's block, which the chain does not hold: decoded here in the call pool, with its
// senders recovered, since a block of the largest request holds ~25,000 transactions (seconds of sender
// recovery, which the main thread must not spend). A sender that does not recover is the zero address,
// as geth's TransactionToMessage leaves it; its replay then fails as geth's does.

import { createBlockFromRLP } from '@ethereumjs/block'
import type { Block } from '@ethereumjs/block'
import type { Common } from '@ethereumjs/common'
import type { TypedTransaction } from '@ethereumjs/tx'
import { serverError } from '../../errors.js'
import type { TraceBlockTask, TraceForeignBlockTask } from '../types.js'

const NO_SENDER = '0x0000000000000000000000000000000000000000'

/** The replay of every transaction of the block (geth's traceBlock), as for a block of the chain. */
export function foreignBlockTask(task: TraceForeignBlockTask, common: Common): TraceBlockTask {
  const block = decodeForeignBlock(task.blockRlp, common)
  const txs = block.transactions
  return {
    kind: 'traceBlock',
    mode: 'block',
    headerRlp: block.header.serialize(),
    parentStateRoot: task.parentStateRoot,
    txs: txs.map((tx) => tx.serialize()),
    senders: txs.map(senderOf),
    traced: txs.map((_, i) => i),
    options: task.options,
  }
}

/** geth's rlp.DecodeBytes into a types.Block, at the hardfork of the block's own number and time. */
function decodeForeignBlock(blockRlp: Uint8Array, common: Common): Block {
  try {
    return createBlockFromRLP(blockRlp, { common, setHardfork: true })
  } catch (err) {
    throw serverError(`could not decode block: ${(err as Error).message}`)
  }
}

function senderOf(tx: TypedTransaction): string {
  try {
    return tx.getSenderAddress().toString()
  } catch {
    return NO_SENDER
  }
}
