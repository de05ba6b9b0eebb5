// keel account new | import | list: operator keys as v3 keystore files in <dataDir>/keystore/.

import { existsSync, readFileSync, rmSync } from 'node:fs'
import { resolve } from 'node:path'
import { randomBytes } from 'node:crypto'
import { toChecksumAddress } from '@ethereumjs/util'
import { readOperatorKey } from '../../chain/genesis.js'
import { listKeystores, operatorKeyPath, saveKeystore } from '../../operator/key-files.js'
import { addressOfKey, decryptKeystore, encryptKeystore, LIGHT_SCRYPT, STANDARD_SCRYPT } from '../../operator/keystore.js'
import { Refusal } from '../../operator/refusal.js'
import { UsageError } from '../args.js'
import { ACCOUNT_COMMAND } from './summaries.js'
import type { CliCommand, CliIo } from '../command.js'
import { nodeConfig, refusalsExit2, commandArgs, stringFlag } from '../command-support.js'
import { PASSPHRASE_FILE_FLAG, passphraseSource } from '../passphrase.js'

const BOOLEAN_FLAGS = ['light-kdf', 'from-operator-key', 'delete-plain-key']
const FLAGS = ['help', 'data-dir', 'config', PASSPHRASE_FILE_FLAG, 'light-kdf', 'from-operator-key', 'delete-plain-key', 'key-file'] as const

const HELP = [
  '',
  'Subcommands:',
  '  keel account new                        create a new key and store it encrypted',
  '  keel account import <0xKEY>             store an existing private key encrypted (or --key-file FILE)',
  '  keel account import --from-operator-key convert <dataDir>/operator.key into a keystore',
  '                                           (--delete-plain-key removes the plain file afterwards)',
  '  keel account list                       list the keys of the data folder',
  '',
  'Options:',
  '  --data-dir DIR                          data folder (default ./data); keystores go in DIR/keystore/',
  `  --${PASSPHRASE_FILE_FLAG} FILE                 passphrase from the first line of FILE (else KEEL_PASSPHRASE, else a prompt)`,
  '  --light-kdf                             scrypt N=4096 instead of 262144 (faster, weaker; for tests)',
  '',
].join('\n')

const PRIVATE_KEY = /^0x[0-9a-fA-F]{64}$/

export const accountCommand: CliCommand = {
  ...ACCOUNT_COMMAND,
  async run(argv, io) {
    const args = commandArgs(accountCommand, argv, io, FLAGS, { booleanFlags: BOOLEAN_FLAGS, help: HELP })
    if (args === undefined) return 0
    const { flags, positionals } = args
    const [sub, ...rest] = positionals
    const { dataDir } = nodeConfig(flags, ['data-dir'], io)
    return refusalsExit2(io, async () => {
      switch (sub) {
        case 'list':
          if (rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}" for keel account list`)
          return listKeys(dataDir, io)
        case 'new':
          if (rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}" for keel account new`)
          return storeKey(new Uint8Array(randomBytes(32)), dataDir, flags, io, 'created')
        case 'import':
          return importKey(rest, dataDir, flags, io)
        case undefined:
          throw new UsageError('missing subcommand: keel account new | import | list')
        default:
          throw new UsageError(`unknown subcommand "${sub}" for keel account; expected new, import or list`)
      }
    })
  },
}

function listKeys(dataDir: string, io: CliIo): number {
  const plain = readOperatorKey(dataDir)
  const stored = listKeystores(dataDir)
  if (plain === undefined && stored.length === 0) {
    io.stdout(`no keys in ${dataDir}\n`)
    return 0
  }
  if (plain !== undefined) io.stdout(`${toChecksumAddress(addressOfKey(plain))}  ${operatorKeyPath(dataDir)} (plain, unencrypted)\n`)
  for (const entry of stored) io.stdout(`${toChecksumAddress(entry.address)}  ${entry.path}\n`)
  return 0
}

async function importKey(rest: string[], dataDir: string, flags: Record<string, string | boolean>, io: CliIo): Promise<number> {
  const keyFile = stringFlag(flags, 'key-file')
  if (flags['from-operator-key'] === true) {
    if (rest.length > 0 || keyFile !== undefined) throw new UsageError('--from-operator-key takes no key argument')
    const key = readOperatorKey(dataDir)
    if (key === undefined) throw new Refusal(`no plain operator key at ${operatorKeyPath(dataDir)}`)
    const code = await storeKey(key, dataDir, flags, io, 'converted')
    if (flags['delete-plain-key'] === true) {
      rmSync(operatorKeyPath(dataDir))
      io.stdout(`removed ${operatorKeyPath(dataDir)}; keel credit now asks for the keystore passphrase\n`)
    } else {
      io.stdout(`${operatorKeyPath(dataDir)} is still in place; delete it once the keystore is backed up (or rerun with --delete-plain-key)\n`)
    }
    return code
  }
  let text: string
  if (keyFile !== undefined) {
    if (rest.length > 0) throw new UsageError('give the key either as an argument or with --key-file, not both')
    const path = resolve(io.cwd, keyFile)
    if (!existsSync(path)) throw new Refusal(`cannot read key file ${path}: no such file`)
    text = readFileSync(path, 'utf8').trim()
  } else {
    if (rest.length !== 1) throw new UsageError('usage: keel account import <0xPRIVATE_KEY> | --key-file FILE | --from-operator-key')
    text = rest[0]!
  }
  if (!PRIVATE_KEY.test(text)) throw new Refusal('invalid private key: expected 0x followed by 64 hex digits')
  return storeKey(new Uint8Array(Buffer.from(text.slice(2), 'hex')), dataDir, flags, io, 'imported')
}

async function storeKey(key: Uint8Array, dataDir: string, flags: Record<string, string | boolean>, io: CliIo, verb: string): Promise<number> {
  const address = addressOfKey(key)
  const existing = listKeystores(dataDir).find((e) => e.address === address)
  if (existing !== undefined) throw new Refusal(`${toChecksumAddress(address)} already has a keystore: ${existing.path}`)
  const passphrase = await passphraseSource(flags, io).get(`passphrase for the new keystore of ${toChecksumAddress(address)}`, true)
  const keystore = await encryptKeystore(key, passphrase, flags['light-kdf'] === true ? LIGHT_SCRYPT : STANDARD_SCRYPT)
  // Read it back before reporting success: a keystore that does not open is worse than none.
  const roundTrip = await decryptKeystore(keystore, passphrase)
  if (Buffer.compare(roundTrip, key) !== 0) throw new Error('keystore round trip failed')
  const path = saveKeystore(dataDir, keystore)
  io.stdout(`${verb} ${toChecksumAddress(address)}\nkeystore ${path}\n`)
  return 0
}
