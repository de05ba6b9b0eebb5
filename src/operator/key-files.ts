// Where operator keys live in a data folder: the plain <dataDir>/operator.key written by the default
// genesis, and v3 keystore files in <dataDir>/keystore/. Loading the key that signs operator transactions.

import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync, chmodSync } from 'node:fs'
import { join } from 'node:path'
import { OPERATOR_KEY_FILE, readOperatorKey } from '../chain/genesis.js'
import { addressOfKey, decryptKeystore, keystoreFileName } from './keystore.js'
import type { KeystoreV3 } from './keystore.js'
import { Refusal } from './refusal.js'

export const KEYSTORE_DIR = 'keystore'

export interface KeystoreEntry {
  address: string
  path: string
}

export function keystoreDir(dataDir: string): string {
  return join(dataDir, KEYSTORE_DIR)
}

export function operatorKeyPath(dataDir: string): string {
  return join(dataDir, OPERATOR_KEY_FILE)
}

/** Keystore files of the data folder, oldest first (geth's names sort by time); unreadable files are skipped. */
export function listKeystores(dataDir: string): KeystoreEntry[] {
  const dir = keystoreDir(dataDir)
  if (!existsSync(dir)) return []
  const entries: KeystoreEntry[] = []
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name)
    try {
      const json = JSON.parse(readFileSync(path, 'utf8')) as { version?: unknown; address?: unknown }
      if (Number(json.version) === 3 && typeof json.address === 'string') {
        entries.push({ address: `0x${json.address.replace(/^0x/, '').toLowerCase()}`, path })
      }
    } catch {
      // not a keystore file
    }
  }
  return entries
}

/** Writes the keystore as <dataDir>/keystore/UTC--...--<address>, readable by the owner only. */
export function saveKeystore(dataDir: string, keystore: KeystoreV3): string {
  const dir = keystoreDir(dataDir)
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const path = join(dir, keystoreFileName(keystore.address))
  writeFileSync(path, `${JSON.stringify(keystore)}\n`, { mode: 0o600, flag: 'wx' })
  chmodSync(path, 0o600)
  return path
}

export function readKeystoreFile(path: string): unknown {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (err) {
    throw new Refusal(`cannot read keystore ${path}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`)
  }
  try {
    return JSON.parse(text)
  } catch {
    throw new Refusal(`${path} is not a JSON keystore file`)
  }
}

export interface SigningKey {
  privateKey: Uint8Array
  address: string
  /** Where the key came from, for messages. */
  source: string
}

/**
 * The operator's signing key: the keystore given, else <dataDir>/operator.key, else the only keystore
 * in <dataDir>/keystore/. The passphrase is asked for only when a keystore is used.
 */
export async function loadSigningKey(opts: {
  dataDir: string
  keystore?: string
  passphrase: (purpose: string) => Promise<string>
}): Promise<SigningKey> {
  if (opts.keystore !== undefined) return unlock(opts.keystore, opts.passphrase)
  const plain = readOperatorKey(opts.dataDir)
  if (plain !== undefined) return { privateKey: plain, address: addressOfKey(plain), source: operatorKeyPath(opts.dataDir) }
  const stored = listKeystores(opts.dataDir)
  if (stored.length === 1) return unlock(stored[0]!.path, opts.passphrase)
  if (stored.length > 1) {
    throw new Refusal(`${keystoreDir(opts.dataDir)} holds ${stored.length} keystores; choose one with --keystore FILE`)
  }
  throw new Refusal(`no operator key: neither ${operatorKeyPath(opts.dataDir)} nor a keystore in ${keystoreDir(opts.dataDir)}; pass --data-dir or --keystore FILE`)
}

async function unlock(path: string, passphrase: (purpose: string) => Promise<string>): Promise<SigningKey> {
  const json = readKeystoreFile(path)
  const privateKey = await decryptKeystore(json, await passphrase(`passphrase for ${path}`), path)
  return { privateKey, address: addressOfKey(privateKey), source: path }
}
