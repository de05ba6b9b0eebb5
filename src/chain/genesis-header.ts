// Block 0's header from a geth genesis, with the fields of the forks active at genesis and no others
// (geth's Genesis.ToBlock): a base fee only under London, the withdrawals root from Shanghai, the blob
// fields and the beacon root from Cancun, the requests hash from Prague.

import { createBlockHeader } from '@ethereumjs/block'
import type { BlockHeader } from '@ethereumjs/block'
import type { Common } from '@ethereumjs/common'
import { Address, hexToBytes } from '@ethereumjs/util'
import type { GethGenesis } from '../evm/geth-genesis.js'

/** geth's params.GenesisDifficulty: an ethash genesis that names no difficulty (and no mixHash) has it. */
const GENESIS_DIFFICULTY = 131_072n

function defaultDifficulty(genesis: GethGenesis): bigint {
  const zeroMix = genesis.mixHash === undefined || /^0x0*$/.test(genesis.mixHash)
  return genesis.config.ethash !== undefined && genesis.config.ethash !== null && zeroMix ? GENESIS_DIFFICULTY : 0n
}

/** geth's params.InitialBaseFee: the base fee of a London genesis that names none. */
const INITIAL_BASE_FEE = 1_000_000_000n

export function genesisHeader(genesis: GethGenesis, common: Common, stateRoot: Uint8Array): BlockHeader {
  const big = (v: string | undefined, fallback = 0n): bigint => (v === undefined || v === null ? fallback : BigInt(v))
  const at0 = common.copy()
  at0.setHardforkBy({ blockNumber: 0n, timestamp: big(genesis.timestamp) })
  const withBlobs = at0.isActivatedEIP(4844)
  return createBlockHeader(
    {
      number: 0n,
      gasLimit: BigInt(genesis.gasLimit),
      timestamp: big(genesis.timestamp),
      extraData: hexToBytes((genesis.extraData ?? '0x') as `0x${string}`),
      baseFeePerGas: at0.isActivatedEIP(1559) ? big(genesis.baseFeePerGas, INITIAL_BASE_FEE) : undefined,
      coinbase: genesis.coinbase ? new Address(hexToBytes(genesis.coinbase as `0x${string}`)) : undefined,
      mixHash: genesis.mixHash ? hexToBytes(genesis.mixHash as `0x${string}`) : undefined,
      nonce: hexToBytes(`0x${big(genesis.nonce).toString(16).padStart(16, '0')}`),
      difficulty: genesis.difficulty !== undefined ? BigInt(genesis.difficulty) : defaultDifficulty(genesis),
      gasUsed: big(genesis.gasUsed),
      excessBlobGas: withBlobs ? big(genesis.excessBlobGas) : undefined,
      blobGasUsed: withBlobs ? big(genesis.blobGasUsed) : undefined,
      stateRoot,
    },
    { common: at0, setHardfork: true },
  )
}
