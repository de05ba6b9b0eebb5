// The chain's Common: chain id and hardfork schedule from a geth-format genesis, with fast crypto.

import { Common, createCommonFromGethGenesis, Hardfork } from '@ethereumjs/common'
import type { CustomCrypto } from '@ethereumjs/common'
import { memoizeEipLookups } from './eip-memo.js'
import { primeCommonParams } from './params-memo.js'

export interface GethAllocAccount {
  balance?: string
  code?: string
  nonce?: string
  storage?: Record<string, string>
}

/** The subset of geth's genesis.json that Keel reads. */
export interface GethGenesis {
  config: Record<string, unknown> & { chainId: number }
  nonce?: string
  timestamp?: string
  extraData?: string
  gasLimit: string
  difficulty?: string
  mixHash?: string
  coinbase?: string
  baseFeePerGas?: string
  alloc: Record<string, GethAllocAccount>
}

/** Every fork from genesis, up to the newest one @ethereumjs 10.1 marks Final (Osaka). */
export function latestForkConfig(chainId: number): GethGenesis['config'] {
  return {
    chainId,
    homesteadBlock: 0,
    eip150Block: 0,
    eip155Block: 0,
    eip158Block: 0,
    byzantiumBlock: 0,
    constantinopleBlock: 0,
    petersburgBlock: 0,
    istanbulBlock: 0,
    berlinBlock: 0,
    londonBlock: 0,
    mergeNetsplitBlock: 0,
    terminalTotalDifficulty: 0,
    terminalTotalDifficultyPassed: true,
    shanghaiTime: 0,
    cancunTime: 0,
    pragueTime: 0,
    osakaTime: 0,
  }
}

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
