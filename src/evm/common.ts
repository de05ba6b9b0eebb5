// The chain's Common: chain id and hardfork schedule from a geth-format genesis, with fast crypto.

import { paramsBlock } from '@ethereumjs/block'
import { Common, createCommonFromGethGenesis, Hardfork } from '@ethereumjs/common'
import type { CustomCrypto } from '@ethereumjs/common'
import { paramsTx } from '@ethereumjs/tx'
import { memoizeEipLookups } from './eip-memo.js'
import { primeCommonParams } from './params-memo.js'
import type { CommonParams } from './params-memo.js'
import type { GethGenesis } from './geth-genesis.js'

/**
 * `vmParams`: the VM's parameter set (paramsVM) in a thread that runs the VM. The main thread passes none,
 * so that it never loads @ethereumjs/vm and the EVM (about a quarter of the modules it would load).
 */
export function createChainCommon(genesis: GethGenesis, customCrypto: CustomCrypto, vmParams?: CommonParams): Common {
  const normalised = {
    ...genesis,
    nonce: genesis.nonce ?? '0x0',
    difficulty: genesis.difficulty ?? '0x0',
    timestamp: genesis.timestamp ?? '0x0',
    extraData: genesis.extraData ?? '0x',
  }
  const common = createCommonFromGethGenesis(normalised as never, { chain: 'keel', customCrypto })
  common.setHardforkBy({ blockNumber: 0n, timestamp: BigInt(normalised.timestamp) })
  primeCommonParams(common, vmParams === undefined ? [paramsTx, paramsBlock] : [paramsTx, paramsBlock, vmParams])
  memoizeEipLookups()
  if (!common.gteHardfork(Hardfork.London)) {
    throw new Error('genesis config: Keel needs London (EIP-1559) active from block 0 (set londonBlock: 0)')
  }
  return common
}
