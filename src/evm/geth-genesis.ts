// The geth-format genesis Keel reads, and the fork schedule a genesis Keel writes starts with. Nothing here
// imports @ethereumjs: `keel start` reads the genesis and spawns the producer before the EVM modules load.

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
  number?: string
  gasUsed?: string
  excessBlobGas?: string
  blobGasUsed?: string
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
