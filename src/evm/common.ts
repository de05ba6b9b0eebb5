// The chain's Common: chain id and hardfork schedule from a geth-format genesis, with fast crypto.

import { Common, createCommonFromGethGenesis, Hardfork } from '@ethereumjs/common'
import type { CustomCrypto } from '@ethereumjs/common'
import { memoizeEipLookups } from './eip-memo.js'
import { primeCommonParams } from './params-memo.js'
import type { GethGenesis } from './geth-genesis.js'

export function createChainCommon(genesis: GethGenesis, customCrypto: CustomCrypto): Common {
  const normalised = {
    ...genesis,
    nonce: genesis.nonce ?? '0x0',
    difficulty: genesis.difficulty ?? '0x0',
    timestamp: genesis.timestamp ?? '0x0',
    extraData: genesis.extraData ?? '0x',
  }
  const common = createCommonFromGethGenesis(normalised as never, { chain: 'keel', customCrypto })
  common.setHardforkBy({ blockNumber: 0n, timestamp: BigInt(normalised.timestamp) })
  primeCommonParams(common)
  memoizeEipLookups()
  if (!common.gteHardfork(Hardfork.London)) {
    throw new Error('genesis config: Keel needs London (EIP-1559) active from block 0 (set londonBlock: 0)')
  }
  return common
}
