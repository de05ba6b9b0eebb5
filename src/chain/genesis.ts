// Genesis: the geth-format genesis.json that defines the chain, the default one written on first start
// (funding a freshly generated operator key), and --dev's (anvil's and Hardhat's ten test accounts).

import { randomBytes } from 'node:crypto'
import { existsSync, readFileSync, writeFileSync, chmodSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { bytesToHex, hexToBytes, privateToAddress } from '@ethereumjs/util'
import { latestForkConfig } from '../evm/geth-genesis.js'
import type { GethGenesis } from '../evm/geth-genesis.js'
import { checkGenesisConfig } from './genesis-config.js'
import { allocOf, HISTORY_STORAGE } from './system-contracts.js'
import { CREATE2_DEPLOYER } from './create2-deployer.js'

/**
 * The first ten accounts (m/44'/60'/0'/0/i) of the test mnemonic "test test test test test test test
 * test test test test junk": the ones anvil and Hardhat fund. Written out rather than derived at every
 * --dev start (PBKDF2, BIP-32 and ten public keys cost ~165 ms of a start's CPU); test/chain/genesis.test.js
 * derives them from the mnemonic again.
 */
export const DEV_ADDRESSES: readonly string[] = [
  '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266',
  '0x70997970c51812dc3a010c7d01b50e0d17dc79c8',
  '0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc',
  '0x90f79bf6eb2c4f870365e785982e1f101e93b906',
  '0x15d34aaf54267db7d7c367839aaf71a00a2c6a65',
  '0x9965507d1a55bcc2695c58ba16fb37d819b0a4dc',
  '0x976ea74026e726554db657fa54763abd0c3a0aa9',
  '0x14dc79964da2c08b23698b3d3cc7ca32193d9955',
  '0x23618e81e3f5cdf7f54c3d65f7fbc0abf5b21e8f',
  '0xa0ee7a142d267c1f36714e4a8f75612f20a79720',
]
export const DEV_BALANCE_WEI = 10_000n * 10n ** 18n
/** The default treasury: one billion tokens to the operator. */
export const OPERATOR_BALANCE_WEI = 1_000_000_000n * 10n ** 18n
/**
 * The gas limit of Keel's own geneses. With one block a second it is the chain's capacity: 150M holds
 * ~7,100 plain or ~2,900 token transfers a second, more than two cores execute, so the cores set the rate
 * (bench/README.md, "Where a mined transfer's time goes"); mainnet's 60M would cap token transfers at
 * ~1,167 a second. One transaction stays capped at 2^24 gas (EIP-7825).
 */
export const DEFAULT_GAS_LIMIT = 150_000_000n
export const DEFAULT_BASE_FEE = 1_000_000_000n

export const OPERATOR_KEY_FILE = 'operator.key'
export const GENESIS_FILE = 'genesis.json'

/**
 * The contracts Keel's own geneses deploy, as anvil's does. EIP-2935's system contract, which serves
 * contracts the hashes of the last 8191 blocks; the EIP-4788 beacon roots and the EIP-7002/7251 request
 * queues serve a consensus layer this chain does not have (each block would write the beacon root
 * contract's ring all the same), and a genesis file that deploys them gets them run as geth runs them
 * (system-calls.ts). And the deterministic CREATE2 deployer that Foundry deploys through.
 */
function predeployAlloc(): GethGenesis['alloc'] {
  return { [HISTORY_STORAGE.address]: allocOf(HISTORY_STORAGE), [CREATE2_DEPLOYER.address]: allocOf(CREATE2_DEPLOYER) }
}

function baseGenesis(chainId: number, alloc: GethGenesis['alloc']): GethGenesis {
  alloc = { ...predeployAlloc(), ...alloc }
  return {
    config: latestForkConfig(chainId),
    nonce: '0x0',
    timestamp: `0x${Math.floor(Date.now() / 1000).toString(16)}`,
    extraData: '0x',
    gasLimit: `0x${DEFAULT_GAS_LIMIT.toString(16)}`,
    difficulty: '0x0',
    mixHash: `0x${'00'.repeat(32)}`,
    coinbase: `0x${'00'.repeat(20)}`,
    baseFeePerGas: `0x${DEFAULT_BASE_FEE.toString(16)}`,
    alloc,
  }
}

export function devGenesis(chainId: number): GethGenesis {
  const alloc: GethGenesis['alloc'] = {}
  for (const address of DEV_ADDRESSES) alloc[address] = { balance: `0x${DEV_BALANCE_WEI.toString(16)}` }
  return baseGenesis(chainId, alloc)
}

export function operatorGenesis(chainId: number, operatorAddress: string): GethGenesis {
  return baseGenesis(chainId, { [operatorAddress]: { balance: `0x${OPERATOR_BALANCE_WEI.toString(16)}` } })
}

export interface ResolvedGenesis {
  genesis: GethGenesis
  /** Set when this start created the operator key. */
  operatorAddress?: string
  createdOperatorKey: boolean
}

/** Reads the operator key from the data folder (0x-hex private key, one line). */
export function readOperatorKey(dataDir: string): Uint8Array | undefined {
  const path = join(dataDir, OPERATOR_KEY_FILE)
  if (!existsSync(path)) return undefined
  const text = readFileSync(path, 'utf8').trim()
  if (!/^0x[0-9a-fA-F]{64}$/.test(text)) throw new Error(`${path}: not a 32-byte hex private key`)
  return hexToBytes(text as `0x${string}`)
}

function parseGenesisFile(path: string): GethGenesis {
  let parsed: unknown
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'))
  } catch (err) {
    throw new Error(`genesis ${path}: ${(err as Error).message}`)
  }
  return validateGenesis(parsed, path)
}

const HEX_OR_DEC = /^(0x[0-9a-fA-F]+|[0-9]+)$/

export function validateGenesis(value: unknown, source: string): GethGenesis {
  const fail = (what: string): never => {
    throw new Error(`genesis ${source}: ${what}`)
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail('expected a JSON object')
  // geth writes the fields a fork does not have as null (baseFeePerGas before London, the blob fields before
  // Cancun): null is "absent"
  const g = Object.fromEntries(Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== null))
  const config = g.config as Record<string, unknown> | undefined
  if (typeof config !== 'object' || config === null) fail('missing "config" object')
  checkGenesisConfig(config!, fail)
  if (typeof g.gasLimit !== 'string' || !HEX_OR_DEC.test(g.gasLimit)) fail('"gasLimit" must be a hex or decimal string')
  for (const field of ['timestamp', 'baseFeePerGas', 'nonce', 'difficulty', 'number', 'gasUsed', 'excessBlobGas', 'blobGasUsed'] as const) {
    if (g[field] !== undefined && (typeof g[field] !== 'string' || !HEX_OR_DEC.test(g[field] as string)))
      fail(`"${field}" must be a hex or decimal string`)
  }
  if (g.extraData !== undefined && (typeof g.extraData !== 'string' || !/^0x([0-9a-fA-F]{2})*$/.test(g.extraData)))
    fail('"extraData" must be 0x-prefixed hex')
  if (typeof g.extraData === 'string' && (g.extraData.length - 2) / 2 > 32) fail('"extraData" is longer than 32 bytes')
  if (g.mixHash !== undefined && (typeof g.mixHash !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(g.mixHash))) fail('"mixHash" must be 32 bytes of 0x-prefixed hex')
  if (g.coinbase !== undefined && (typeof g.coinbase !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(g.coinbase))) fail('"coinbase" must be a 0x-prefixed 20-byte address')
  if (g.number !== undefined && BigInt(g.number as string) !== 0n) fail('"number" must be 0: a genesis is block 0')
  if (g.nonce !== undefined && BigInt(g.nonce as string) >= 2n ** 64n) fail('"nonce" must fit in 8 bytes')
  if (BigInt(g.gasLimit as string) >= 2n ** 63n) fail('"gasLimit" must be below 2^63')
  const alloc = (g.alloc ?? {}) as Record<string, unknown>
  if (typeof alloc !== 'object' || alloc === null || Array.isArray(alloc)) fail('"alloc" must be an object')
  for (const [address, account] of Object.entries(alloc)) {
    if (!/^(0x)?[0-9a-fA-F]{40}$/.test(address)) fail(`alloc: "${address}" is not an address`)
    if (typeof account !== 'object' || account === null) fail(`alloc.${address} must be an object`)
    const a = account as Record<string, unknown>
    if (a.balance !== undefined && (typeof a.balance !== 'string' || !HEX_OR_DEC.test(a.balance)))
      fail(`alloc.${address}.balance must be a hex or decimal string`)
    if (a.nonce !== undefined && (typeof a.nonce !== 'string' || !HEX_OR_DEC.test(a.nonce)))
      fail(`alloc.${address}.nonce must be a hex or decimal string`)
    if (a.code !== undefined && (typeof a.code !== 'string' || !/^(0x)?([0-9a-fA-F]{2})*$/.test(a.code)))
      fail(`alloc.${address}.code must be hex`)
    if (a.storage !== undefined) {
      if (typeof a.storage !== 'object' || a.storage === null) fail(`alloc.${address}.storage must be an object`)
      for (const [slot, val] of Object.entries(a.storage as Record<string, unknown>)) {
        if (!/^(0x)?[0-9a-fA-F]{1,64}$/.test(slot) || typeof val !== 'string' || !/^(0x)?[0-9a-fA-F]{1,64}$/.test(val))
          fail(`alloc.${address}.storage: slot ${slot} must map a 32-byte hex key to a 32-byte hex value`)
      }
    }
  }
  return { ...(g as unknown as GethGenesis), alloc: alloc as GethGenesis['alloc'] }
}

function writePrivate(path: string, text: string): void {
  writeFileSync(path, text, { mode: 0o600 })
  chmodSync(path, 0o600)
}

/**
 * Decides the genesis of a node starting on `dataDir`:
 * --genesis FILE wins; else --dev; else the genesis saved by an earlier start; else a new default
 * genesis crediting a newly generated operator key (saved with 0600 permissions).
 */
export function resolveGenesis(opts: { dataDir: string; genesisFile?: string; dev: boolean; chainId: number }): ResolvedGenesis {
  mkdirSync(opts.dataDir, { recursive: true })
  if (opts.genesisFile !== undefined) return { genesis: parseGenesisFile(opts.genesisFile), createdOperatorKey: false }
  if (opts.dev) return { genesis: devGenesis(opts.chainId), createdOperatorKey: false }
  const savedPath = join(opts.dataDir, GENESIS_FILE)
  const existingKey = readOperatorKey(opts.dataDir)
  if (existsSync(savedPath)) {
    const operatorAddress = existingKey ? bytesToHex(privateToAddress(existingKey)) : undefined
    return { genesis: parseGenesisFile(savedPath), operatorAddress, createdOperatorKey: false }
  }
  let key = existingKey
  let created = false
  if (key === undefined) {
    key = new Uint8Array(randomBytes(32))
    writePrivate(join(opts.dataDir, OPERATOR_KEY_FILE), `${bytesToHex(key)}\n`)
    created = true
  }
  const operatorAddress = bytesToHex(privateToAddress(key))
  const genesis = operatorGenesis(opts.chainId, operatorAddress)
  writeFileSync(savedPath, `${JSON.stringify(genesis, null, 2)}\n`)
  return { genesis, operatorAddress, createdOperatorKey: created }
}
