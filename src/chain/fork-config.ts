// EIP-7910 (eth_config): the configuration of the fork in effect at the head, of the next scheduled one and
// of the last scheduled one, each with its blob schedule, fork id (EIP-6122), active precompiles and system
// contracts, as geth reports them.

import { crc32 } from 'node:zlib'
import type { Common } from '@ethereumjs/common'
import { BEACON_ROOTS, CONSOLIDATION_QUEUE, depositContractOf, HISTORY_STORAGE, WITHDRAWAL_QUEUE } from './system-contracts.js'

export interface ForkConfig {
  activationTime: number
  blobSchedule?: { baseFeeUpdateFraction: number; max: number; target: number }
  chainId: string
  forkId: string
  precompiles: Record<string, string>
  systemContracts: Record<string, string>
}

export interface EthConfig {
  current: ForkConfig
  next: ForkConfig | null
  last: ForkConfig | null
}

interface ScheduledFork {
  name: string
  /** activation block of a block-numbered fork */
  block?: bigint
  /** activation time of a timestamped fork */
  time?: bigint
}

const precompile = (n: number): string => `0x${n.toString(16).padStart(40, '0')}`

/** The names EIP-7910 gives each precompile, by the fork or EIP that brings it (listed by address, kept by name). */
const PRECOMPILES: [name: string, address: string, activeIn: (c: Common) => boolean][] = ([
  ['ECREC', precompile(1), () => true],
  ['SHA256', precompile(2), () => true],
  ['RIPEMD160', precompile(3), () => true],
  ['ID', precompile(4), () => true],
  ['MODEXP', precompile(5), (c) => c.gteHardfork('byzantium')],
  ['BN254_ADD', precompile(6), (c) => c.gteHardfork('byzantium')],
  ['BN254_MUL', precompile(7), (c) => c.gteHardfork('byzantium')],
  ['BN254_PAIRING', precompile(8), (c) => c.gteHardfork('byzantium')],
  ['BLAKE2F', precompile(9), (c) => c.gteHardfork('istanbul')],
  ['KZG_POINT_EVALUATION', precompile(0x0a), (c) => c.isActivatedEIP(4844)],
  ['BLS12_G1ADD', precompile(0x0b), (c) => c.isActivatedEIP(2537)],
  ['BLS12_G1MSM', precompile(0x0c), (c) => c.isActivatedEIP(2537)],
  ['BLS12_G2ADD', precompile(0x0d), (c) => c.isActivatedEIP(2537)],
  ['BLS12_G2MSM', precompile(0x0e), (c) => c.isActivatedEIP(2537)],
  ['BLS12_PAIRING_CHECK', precompile(0x0f), (c) => c.isActivatedEIP(2537)],
  ['BLS12_MAP_FP_TO_G1', precompile(0x10), (c) => c.isActivatedEIP(2537)],
  ['BLS12_MAP_FP2_TO_G2', precompile(0x11), (c) => c.isActivatedEIP(2537)],
  ['P256VERIFY', precompile(0x100), (c) => c.isActivatedEIP(7951)],
] satisfies [string, string, (c: Common) => boolean][]).sort((a, b) => (a[0] < b[0] ? -1 : 1))

/** The forks of the chain's schedule, in order; the merge (by total difficulty) has no activation of its own. */
function schedule(common: Common): ScheduledFork[] {
  const forks: ScheduledFork[] = []
  for (const hf of common.hardforks()) {
    if (hf.name === 'paris') continue
    if (hf.timestamp !== undefined && hf.timestamp !== null) forks.push({ name: hf.name, time: BigInt(hf.timestamp) })
    else if (hf.block !== undefined && hf.block !== null) forks.push({ name: hf.name, block: BigInt(hf.block) })
  }
  return forks
}

const sameActivation = (a: ScheduledFork, b: ScheduledFork): boolean =>
  a.time !== undefined ? a.time === b.time : b.time === undefined && a.block === b.block

const isActive = (fork: ScheduledFork, head: { number: bigint; timestamp: bigint }): boolean =>
  fork.time !== undefined ? fork.time <= head.timestamp : fork.block! <= head.number

/**
 * EIP-6122's FORK_HASH of the chain once `upTo` is active: CRC32 of the genesis hash and then of each
 * activation (8 bytes, big-endian) up to it, block numbers first, then times; activations at genesis
 * are left out and several forks at one activation count once (geth's forkid.NewID). @ethereumjs's
 * Common.forkHash leaves out only activations at 0, so a fork timed at a non-zero genesis time would count.
 */
function forkHash(forks: ScheduledFork[], upTo: number, genesisHash: Uint8Array, genesisTime: bigint): string {
  const blocks: bigint[] = []
  const times: bigint[] = []
  for (let i = 0; i <= upTo; i++) {
    const { block, time } = forks[i]
    if (block !== undefined && block > 0n && blocks[blocks.length - 1] !== block) blocks.push(block)
    if (time !== undefined && time > genesisTime && times[times.length - 1] !== time) times.push(time)
  }
  let hash = crc32(genesisHash)
  const word = Buffer.alloc(8)
  for (const activation of [...blocks, ...times]) {
    word.writeBigUInt64BE(activation)
    hash = crc32(word, hash)
  }
  return `0x${hash.toString(16).padStart(8, '0')}`
}

function configOf(common: Common, forks: ScheduledFork[], index: number, genesisHash: Uint8Array, genesisTime: bigint): ForkConfig {
  const fork = forks[index]
  const c = common.copy()
  c.setHardfork(fork.name)
  const precompiles: Record<string, string> = {}
  for (const [name, address, activeIn] of PRECOMPILES) {
    if (activeIn(c)) precompiles[name] = address
  }
  const systemContracts: Record<string, string> = {}
  if (c.isActivatedEIP(4788)) systemContracts.BEACON_ROOTS_ADDRESS = BEACON_ROOTS.address
  if (c.isActivatedEIP(7685)) {
    systemContracts.CONSOLIDATION_REQUEST_PREDEPLOY_ADDRESS = CONSOLIDATION_QUEUE.address
    systemContracts.DEPOSIT_CONTRACT_ADDRESS = depositContractOf(common)
    systemContracts.HISTORY_STORAGE_ADDRESS = HISTORY_STORAGE.address
    systemContracts.WITHDRAWAL_REQUEST_PREDEPLOY_ADDRESS = WITHDRAWAL_QUEUE.address
  }
  let blobSchedule: ForkConfig['blobSchedule']
  if (c.isActivatedEIP(4844)) {
    const perBlob = c.param('blobGasPerBlob')
    blobSchedule = {
      baseFeeUpdateFraction: Number(c.param('blobGasPriceUpdateFraction')),
      max: Number(c.param('maxBlobGasPerBlock') / perBlob),
      target: Number(c.param('targetBlobGasPerBlock') / perBlob),
    }
  }
  // members in alphabetical order, as EIP-7910 presents them
  return {
    // a fork in effect from genesis reports 0
    activationTime: fork.time !== undefined && fork.time > genesisTime ? Number(fork.time) : 0,
    ...(blobSchedule !== undefined ? { blobSchedule } : {}),
    chainId: `0x${c.chainId().toString(16)}`,
    forkId: forkHash(forks, index, genesisHash, genesisTime),
    precompiles,
    systemContracts,
  }
}

/** eth_config at a head: `genesis` is block 0's hash and timestamp. */
export function ethConfig(common: Common, genesis: { hash: Uint8Array; timestamp: bigint }, head: { number: bigint; timestamp: bigint }): EthConfig {
  const forks = schedule(common)
  let current = 0
  while (current + 1 < forks.length && isActive(forks[current + 1], head)) current++
  // the next configuration is that of the last fork among those sharing the next activation
  let next = current + 1 < forks.length ? current + 1 : -1
  while (next >= 0 && next + 1 < forks.length && sameActivation(forks[next], forks[next + 1])) next++
  const at = (i: number): ForkConfig => configOf(common, forks, i, genesis.hash, genesis.timestamp)
  return { current: at(current), next: next < 0 ? null : at(next), last: next < 0 ? null : at(forks.length - 1) }
}
