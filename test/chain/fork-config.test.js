// eth_config (EIP-7910): the EIP's own sample, Hoodi before Prague, reproduced from a geth-format genesis
// with Hoodi's fork schedule and genesis hash: the Cancun configuration in effect, Prague's scheduled as
// both next and last, fork ids and blob schedules included. Then Keel's default chain, Osaka from genesis.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { hexToBytes } from '@ethereumjs/util'
import { devGenesis } from '../../dist/chain/genesis.js'
import { ethConfig } from '../../dist/chain/fork-config.js'
import { createChainCommon } from '../../dist/evm/common.js'
import { loadFastCrypto } from '../../dist/evm/crypto.js'

const PRAGUE_TIME = 1742999832
const hoodi = {
  config: {
    chainId: 560048,
    homesteadBlock: 0, eip150Block: 0, eip155Block: 0, eip158Block: 0, byzantiumBlock: 0, constantinopleBlock: 0,
    petersburgBlock: 0, istanbulBlock: 0, berlinBlock: 0, londonBlock: 0, mergeNetsplitBlock: 0,
    terminalTotalDifficulty: 0, terminalTotalDifficultyPassed: true,
    shanghaiTime: 0, cancunTime: 0, pragueTime: PRAGUE_TIME,
    depositContractAddress: '0x00000000219ab540356cBB839Cbe05303d7705Fa',
  },
  timestamp: '0x67d80ec0',
  gasLimit: '0x2255100',
  difficulty: '0x1',
  baseFeePerGas: '0x3b9aca00',
  alloc: {},
}
const HOODI_GENESIS_HASH = hexToBytes('0xbbe312868b376a3001692a646dd2d7d1e4406380dfd86b98aa8a34d1557c971b')

const CANCUN_PRECOMPILES = {
  BLAKE2F: '0x0000000000000000000000000000000000000009',
  BN254_ADD: '0x0000000000000000000000000000000000000006',
  BN254_MUL: '0x0000000000000000000000000000000000000007',
  BN254_PAIRING: '0x0000000000000000000000000000000000000008',
  ECREC: '0x0000000000000000000000000000000000000001',
  ID: '0x0000000000000000000000000000000000000004',
  KZG_POINT_EVALUATION: '0x000000000000000000000000000000000000000a',
  MODEXP: '0x0000000000000000000000000000000000000005',
  RIPEMD160: '0x0000000000000000000000000000000000000003',
  SHA256: '0x0000000000000000000000000000000000000002',
}
/** The EIP lists members in alphabetical order. */
const sorted = (members) => Object.fromEntries(Object.entries(members).sort(([a], [b]) => (a < b ? -1 : 1)))
const PRAGUE_PRECOMPILES = sorted({
  ...CANCUN_PRECOMPILES,
  BLS12_G1ADD: '0x000000000000000000000000000000000000000b',
  BLS12_G1MSM: '0x000000000000000000000000000000000000000c',
  BLS12_G2ADD: '0x000000000000000000000000000000000000000d',
  BLS12_G2MSM: '0x000000000000000000000000000000000000000e',
  BLS12_MAP_FP2_TO_G2: '0x0000000000000000000000000000000000000011',
  BLS12_MAP_FP_TO_G1: '0x0000000000000000000000000000000000000010',
  BLS12_PAIRING_CHECK: '0x000000000000000000000000000000000000000f',
})
const PRAGUE_SYSTEM_CONTRACTS = {
  BEACON_ROOTS_ADDRESS: '0x000f3df6d732807ef1319fb7b8bb8522d0beac02',
  CONSOLIDATION_REQUEST_PREDEPLOY_ADDRESS: '0x0000bbddc7ce488642fb579f8b00f3a590007251',
  DEPOSIT_CONTRACT_ADDRESS: '0x00000000219ab540356cbb839cbe05303d7705fa',
  HISTORY_STORAGE_ADDRESS: '0x0000f90827f1c53a10cb7a02335b175320002935',
  WITHDRAWAL_REQUEST_PREDEPLOY_ADDRESS: '0x00000961ef480eb55e80d19ad83579a64c007002',
}
const HOODI_CANCUN = {
  activationTime: 0,
  blobSchedule: { baseFeeUpdateFraction: 3338477, max: 6, target: 3 },
  chainId: '0x88bb0',
  forkId: '0xbef71d30',
  precompiles: CANCUN_PRECOMPILES,
  systemContracts: { BEACON_ROOTS_ADDRESS: '0x000f3df6d732807ef1319fb7b8bb8522d0beac02' },
}
const HOODI_PRAGUE = {
  activationTime: PRAGUE_TIME,
  blobSchedule: { baseFeeUpdateFraction: 5007716, max: 9, target: 6 },
  chainId: '0x88bb0',
  forkId: '0x0929e24e',
  precompiles: PRAGUE_PRECOMPILES,
  systemContracts: PRAGUE_SYSTEM_CONTRACTS,
}

test('eth_config: EIP-7910\'s sample (Hoodi with Prague scheduled), and once Prague is in effect', async () => {
  const common = createChainCommon(hoodi, (await loadFastCrypto()).customCrypto)
  const genesis = { hash: HOODI_GENESIS_HASH, timestamp: BigInt(hoodi.timestamp) }
  const before = ethConfig(common, genesis, { number: 100n, timestamp: BigInt(PRAGUE_TIME - 1) })
  // compared as JSON text: the members' order is the EIP's (alphabetical)
  assert.equal(JSON.stringify(before), JSON.stringify({ current: HOODI_CANCUN, next: HOODI_PRAGUE, last: HOODI_PRAGUE }))
  const after = ethConfig(common, genesis, { number: 200n, timestamp: BigInt(PRAGUE_TIME) })
  assert.equal(JSON.stringify(after), JSON.stringify({ current: HOODI_PRAGUE, next: null, last: null }))
})

test('eth_config: Keel\'s default chain is Osaka from genesis, P256VERIFY included, nothing scheduled', async () => {
  const genesis = devGenesis(24589)
  const common = createChainCommon(genesis, (await loadFastCrypto()).customCrypto)
  const hash = hexToBytes(`0x${'12'.repeat(32)}`)
  const config = ethConfig(common, { hash, timestamp: BigInt(genesis.timestamp) }, { number: 5n, timestamp: BigInt(genesis.timestamp) + 5n })
  assert.equal(config.next, null)
  assert.equal(config.last, null)
  assert.equal(config.current.activationTime, 0)
  assert.equal(config.current.chainId, '0x600d')
  // no fork after genesis: the fork hash is the CRC32 of the genesis hash alone
  const { crc32 } = await import('node:zlib')
  assert.equal(config.current.forkId, `0x${crc32(hash).toString(16).padStart(8, '0')}`)
  assert.deepEqual(config.current.precompiles, { ...PRAGUE_PRECOMPILES, P256VERIFY: '0x0000000000000000000000000000000000000100' })
  assert.deepEqual(config.current.systemContracts, PRAGUE_SYSTEM_CONTRACTS)
  assert.deepEqual(config.current.blobSchedule, { baseFeeUpdateFraction: 5007716, max: 9, target: 6 })
})
