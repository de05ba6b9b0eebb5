// One atomic LevelDB write of many operations (a block's batch: trie nodes, block record, indexes).
// classic-level's array batch reads every operation's type, key and value back through N-API; its chained
// batch takes them as call arguments: a block of 500 native transfers (~5,400 operations) is written in
// 8.5 ms instead of 13.3 (bench/micro/block-batch.js). Both are one LevelDB WriteBatch: all or nothing.

import type { TimeSlicer } from '../../util/time-slicer.js'
import type { ChainLevel } from './level.js'
import type { LevelOp } from './state-db.js'

/** `turns`: the event loop gets a turn while the operations are added (the batch is written whole either way). */
export async function writeBatch(level: ChainLevel, ops: readonly LevelOp[], turns?: TimeSlicer): Promise<void> {
  const batch = level.batch()
  try {
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i]!
      if (op.type === 'put') batch.put(op.key, op.value)
      else batch.del(op.key)
      // a block of 2,000 ERC20 transfers adds ~40,000 operations: 25-45 ms
      if (turns !== undefined && (i & 511) === 511 && turns.due) await turns.turn()
    }
  } catch (err) {
    await batch.close()
    throw err
  }
  await batch.write()
}
