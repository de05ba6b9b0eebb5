// Geth genesis files read in full: the hive test chain's genesis (Frontier at 0, every fork by block and
// time up to Osaka and BPO2, a proof-of-work genesis without a base fee) gives the genesis hash its
// chain.rlp builds on; impossible schedules are refused with a message naming the field.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { validateGenesis } from '../../dist/chain/genesis.js'
import { keelCli } from '../helpers/keel-cli.js'
import { HIVE } from '../import/hive-chain.js'

const hive = () => JSON.parse(readFileSync(join(HIVE, 'genesis.json'), 'utf8'))
// chain.rlp's block 1 names this parent
const HIVE_GENESIS_HASH = '0x44fd89d504659cd58f48f4796b77a7e7012cf296a2409afa2f6c3cb99b5b3d99'

test('the hive genesis is accepted: null fields are absent, chain id from the config', () => {
  const g = validateGenesis(hive(), 'hive')
  assert.equal(g.config.chainId, 3503995874084926)
  assert.equal('baseFeePerGas' in g, false)
  assert.equal(g.config.blobSchedule.bpo2.max, 21)
})

test('keel init on the hive genesis writes the block 0 that chain.rlp builds on', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-geth-genesis-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const out = await keelCli(['init', '--genesis', join(HIVE, 'genesis.json'), '--data-dir', join(dir, 'data')])
  assert.equal(out.stderr, '')
  assert.equal(out.code, 0)
  assert.match(out.stdout, new RegExp(`chain id 3503995874084926, genesis ${HIVE_GENESIS_HASH}`))
})

test('impossible values in a geth genesis config are refused, naming the field', () => {
  const refuse = (mutate, message) => {
    const g = hive()
    mutate(g)
    assert.throws(() => validateGenesis(g, 'g.json'), (err) => {
      assert.equal(err.message, `genesis g.json: ${message}`)
      return true
    })
  }
  refuse((g) => { g.config.byzantiumBlock = 2 }, 'config.byzantiumBlock (2) is before config.eip158Block (6): forks activate in order')
  refuse((g) => { delete g.config.istanbulBlock }, 'config.muirGlacierBlock is set but config.istanbulBlock is not: forks activate in order')
  refuse((g) => { g.config.cancunTime = 10 }, 'config.cancunTime (10) is before config.shanghaiTime (390): forks activate in order')
  refuse((g) => { g.config.eip158Block = 7 }, 'config.eip155Block and config.eip158Block must be equal (both are Spurious Dragon)')
  refuse((g) => { g.config.londonBlock = -1 }, 'config.londonBlock must be a non-negative integer')
  refuse((g) => { g.config.osakaTime = '480' }, 'config.osakaTime must be a non-negative integer')
  refuse((g) => { delete g.config.blobSchedule.bpo1 }, 'config.bpo1Time needs its entry in config.blobSchedule')
  refuse((g) => { g.config.blobSchedule.bpo9 = { target: 1, max: 2, baseFeeUpdateFraction: 3 } }, 'config.blobSchedule.bpo9: not a fork with blobs (cancun, prague, osaka, bpo1, bpo2, bpo3, bpo4, bpo5)')
  refuse((g) => { g.config.blobSchedule.bpo1.target = 16 }, 'config.blobSchedule.bpo1: target 16 is above max 15')
  refuse((g) => { g.config.blobSchedule.cancun.baseFeeUpdateFraction = 0 }, 'config.blobSchedule.cancun.baseFeeUpdateFraction must be a positive integer')
  refuse((g) => { g.config.terminalTotalDifficulty = 'soon' }, 'config.terminalTotalDifficulty must be a non-negative integer')
  refuse((g) => { delete g.config.mergeNetsplitBlock }, 'config.terminalTotalDifficulty 4732352 needs config.mergeNetsplitBlock, the first block after the merge: Keel places the merge by block number')
  refuse((g) => { g.config.depositContractAddress = '0x12' }, 'config.depositContractAddress must be a 0x-prefixed 20-byte address')
  refuse((g) => { delete g.config.londonBlock; delete g.config.arrowGlacierBlock; delete g.config.grayGlacierBlock; delete g.config.mergeNetsplitBlock; delete g.config.terminalTotalDifficulty }, 'config.shanghaiTime needs londonBlock: the timestamped forks come after London')
  refuse((g) => { g.mixHash = '0x00' }, '"mixHash" must be 32 bytes of 0x-prefixed hex')
  refuse((g) => { g.coinbase = 'nobody' }, '"coinbase" must be a 0x-prefixed 20-byte address')
  refuse((g) => { g.number = '0x5' }, '"number" must be 0: a genesis is block 0')
  refuse((g) => { g.nonce = '0x10000000000000000' }, '"nonce" must fit in 8 bytes')
})

test('an ethash genesis without difficulty gets geth\'s 0x20000: the hive genesis without it hashes the same', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-geth-genesis-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const g = hive()
  assert.equal(g.difficulty, '0x20000')
  delete g.difficulty
  const file = join(dir, 'genesis.json')
  writeFileSync(file, JSON.stringify(g))
  const out = await keelCli(['init', '--genesis', file, '--data-dir', join(dir, 'data')])
  assert.equal(out.code, 0, out.stderr)
  assert.match(out.stdout, new RegExp(`genesis ${HIVE_GENESIS_HASH}`))
})

test('keel start refuses to seal on a chain whose next block is before London, and says --no-seal serves it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-geth-genesis-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const out = await keelCli(['start', '--genesis', join(HIVE, 'genesis.json'), '--data-dir', join(dir, 'data'), '--port', '0', '--metrics-port', '0'])
  assert.equal(out.code, 1)
  assert.match(out.stderr, /^keel: genesis config: block 1 is before London \(config\.londonBlock 27\); Keel seals blocks under London's rules only: set londonBlock: 0, or serve the chain with --no-seal$/m)
  assert.doesNotMatch(out.stderr, /\n\s+at /, 'no stack trace')
})

test('a terminal total difficulty of 0 is reached at genesis: no proof-of-work rules (and rewards) after it', async () => {
  const { createChainCommon } = await import('../../dist/evm/common.js')
  const { loadFastCrypto } = await import('../../dist/evm/crypto.js')
  const crypto = await loadFastCrypto()
  const config = { chainId: 9, homesteadBlock: 0, eip150Block: 0, eip155Block: 0, eip158Block: 0, byzantiumBlock: 0,
    constantinopleBlock: 0, petersburgBlock: 0, istanbulBlock: 0, berlinBlock: 0, londonBlock: 0, terminalTotalDifficulty: 0 }
  const common = createChainCommon(validateGenesis({ config, gasLimit: '0x1c9c380', alloc: {} }, 'ttd0'), crypto.customCrypto)
  common.setHardforkBy({ blockNumber: 5n, timestamp: 50n })
  assert.equal(common.gteHardfork('paris'), true)
  assert.equal(common.consensusType(), 'pos')
})
