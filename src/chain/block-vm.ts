// The VM the producer builds blocks with, loaded once the chain is served rather than before: @ethereumjs/vm
// and the EVM are about a quarter of the producer thread's modules, and nothing before the first block
// needs them (the genesis, the restored pool and its checks go through the state manager and the head
// reader). Loading them ahead of the ready message held the node's first answer back by ~100-150 ms.

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
