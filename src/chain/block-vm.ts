// The VM the producer builds blocks with, loaded once the chain is served rather than before: @ethereumjs/vm,
// the EVM and the block builder are 86 of the producer thread's 282 modules (0.8 of 2.2 MB of source), and
// nothing before the first block needs them (the genesis, the restored pool and its checks go through the
// state manager and the head reader). Loading them ahead of the ready message held the node's first
// answer back by ~90 ms (medians of 8 alternating starts, measured in commit 9a39117, bench/README.md
// there).

import type { Common } from '@ethereumjs/common'
import type { EVMMockBlockchainInterface } from '@ethereumjs/evm'
import { createVM } from '@ethereumjs/vm'
import type { VM } from '@ethereumjs/vm'
import { cacheJumpDestinations } from '../evm/jumpdest-cache.js'
import { buildBlock } from './builder.js'
import type { BulkFlushStateManager } from './store/bulk-flush-sm.js'

export interface BlockVM {
  vm: VM
  buildBlock: typeof buildBlock
}

/** The producer checked at start that the @ethereumjs packages are patched (assertEvmPatched). */
export async function loadBlockVM(common: Common, stateManager: BulkFlushStateManager, blockchain: EVMMockBlockchainInterface): Promise<BlockVM> {
  await cacheJumpDestinations()
  const vm = await createVM({ common, stateManager, blockchain })
  return { vm, buildBlock }
}
