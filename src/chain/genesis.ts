// Genesis: the geth-format genesis.json that defines the chain, the default one written on first start
// (funding a freshly generated operator key), and --dev's (anvil's and Hardhat's ten test accounts).

import { pbkdf2Sync, randomBytes } from 'node:crypto'
import { existsSync, readFileSync, writeFileSync, chmodSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { HDKey } from '@scure/bip32'
import { bytesToHex, hexToBytes, privateToAddress, publicToAddress } from '@ethereumjs/util'
import { latestForkConfig } from '../evm/common.js'
import type { GethGenesis } from '../evm/common.js'

export const DEV_MNEMONIC = 'test test test test test test test test test test test junk'
export const DEV_ACCOUNT_COUNT = 10
export const DEV_BALANCE_WEI = 10_000n * 10n ** 18n
/** The default treasury: one billion tokens to the operator. */
export const OPERATOR_BALANCE_WEI = 1_000_000_000n * 10n ** 18n
export const DEFAULT_GAS_LIMIT = 60_000_000n
export const DEFAULT_BASE_FEE = 1_000_000_000n

export const OPERATOR_KEY_FILE = 'operator.key'
export const GENESIS_FILE = 'genesis.json'

export interface DevAccount {
  address: string
  privateKey: string
}

/**
 * The BIP-39 seed of a mnemonic without passphrase (PBKDF2-HMAC-SHA512, 2,048 rounds, salt "mnemonic"),
 * with node's native crypto: @scure/bip39's JavaScript PBKDF2 took ~70 ms of every --dev start.
 */
function bip39Seed(mnemonic: string): Uint8Array {
  return pbkdf2Sync(mnemonic.normalize('NFKD'), 'mnemonic', 2048, 64, 'sha512')
}

/** m/44'/60'/0'/0/i of the standard test mnemonic: the keys anvil and Hardhat fund. */
export function devAccounts(count = DEV_ACCOUNT_COUNT): DevAccount[] {
  // the path down to the address index once: deriving each account's whole path from the root cost five
  // public keys per account in JavaScript (~250 ms of a --dev start)
  const parent = HDKey.fromMasterSeed(bip39Seed(DEV_MNEMONIC)).derive("m/44'/60'/0'/0")
  const accounts: DevAccount[] = []
  for (let i = 0; i < count; i++) {
    const child = parent.deriveChild(i)
    const key = child.privateKey
    if (key === null || child.publicKey === null) throw new Error('HD derivation produced no key')
    // from the public key the derivation computed (decompressed), not by computing it again
    accounts.push({ address: bytesToHex(publicToAddress(child.publicKey, true)), privateKey: bytesToHex(key) })
  }
  return accounts
}

function baseGenesis(chainId: number, alloc: GethGenesis['alloc']): GethGenesis {
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
  for (const account of devAccounts()) alloc[account.address] = { balance: `0x${DEV_BALANCE_WEI.toString(16)}` }
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
  const g = value as Record<string, unknown>
  const config = g.config as Record<string, unknown> | undefined
  if (typeof config !== 'object' || config === null) fail('missing "config" object')
  if (typeof config!.chainId !== 'number' || !Number.isSafeInteger(config!.chainId) || (config!.chainId as number) <= 0)
    fail('config.chainId must be a positive integer')
  if (typeof g.gasLimit !== 'string' || !HEX_OR_DEC.test(g.gasLimit)) fail('"gasLimit" must be a hex or decimal string')
  for (const field of ['timestamp', 'baseFeePerGas', 'nonce', 'difficulty'] as const) {
    if (g[field] !== undefined && (typeof g[field] !== 'string' || !HEX_OR_DEC.test(g[field] as string)))
      fail(`"${field}" must be a hex or decimal string`)
  }
  if (g.extraData !== undefined && (typeof g.extraData !== 'string' || !/^0x([0-9a-fA-F]{2})*$/.test(g.extraData)))
    fail('"extraData" must be 0x-prefixed hex')
  if (typeof g.extraData === 'string' && (g.extraData.length - 2) / 2 > 32) fail('"extraData" is longer than 32 bytes')
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
