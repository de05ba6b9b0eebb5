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
    // a terminal total difficulty of 0 is reached at genesis (geth): merged from block 0
    config: isZero(genesis.config.terminalTotalDifficulty) ? { ...genesis.config, terminalTotalDifficultyPassed: true } : genesis.config,
  }
  const common = createCommonFromGethGenesis(normalised as never, { chain: 'keel', customCrypto })
  completeBpoParams(common, genesis)
  common.setHardforkBy({ blockNumber: 0n, timestamp: BigInt(normalised.timestamp) })
  primeCommonParams(common, vmParams === undefined ? [paramsTx, paramsBlock] : [paramsTx, paramsBlock, vmParams])
  memoizeEipLookups()
  return common
}

/**
 * Keel seals blocks under London's fee rules only (its pool, fee oracle and builder price by base fee): a
 * chain whose next block is before London can be imported and served (--no-seal), not extended.
 */
export function assertSealable(common: Common, next: { number: bigint; timestamp: bigint }): void {
  const c = common.copy()
  c.setHardforkBy({ blockNumber: next.number, timestamp: next.timestamp })
  if (!c.gteHardfork(Hardfork.London)) {
    throw new Error(`genesis config: block ${next.number} is before London (config.londonBlock ${String(c.hardforkBlock(Hardfork.London) ?? 'unset')}); Keel seals blocks under London's rules only: set londonBlock: 0, or serve the chain with --no-seal`)
  }
}

/**
 * @ethereumjs 10.1.3 turns a geth blobSchedule entry into targetBlobGasPerBlock/maxBlobGasPerBlock
 * parameters, which replace a BPO fork's own `target` and `max` (what getBlobGasSchedule reads from
 * BPO1 on): a BPO fork from a genesis file would have no blob limits. Put them back from the entry.
 */
function completeBpoParams(common: Common, genesis: GethGenesis): void {
  const schedule = genesis.config.blobSchedule as Record<string, { target: number; max: number }> | undefined
  if (schedule === undefined) return
  for (const [name, changes] of (common as unknown as { HARDFORK_CHANGES: [string, unknown][] }).HARDFORK_CHANGES) {
    const entry = schedule[name]
    if (!name.startsWith('bpo') || entry === undefined) continue
    const hf = changes as { params?: Record<string, unknown> }
    hf.params = { ...hf.params, target: entry.target, max: entry.max }
  }
}

const isZero = (v: unknown): boolean => (typeof v === 'number' || typeof v === 'string') && v !== '' && BigInt(v) === 0n
