// Web3 Secret Storage v3 keystore files (the format of geth, ethers and MetaMask exports): the private
// key encrypted with AES-128-CTR under a scrypt-derived key, authenticated by keccak256(key[16..32] ++ ciphertext).

import { createCipheriv, createDecipheriv, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto'
import { pbkdf2Async } from '@noble/hashes/pbkdf2.js'
import { scryptAsync } from '@noble/hashes/scrypt.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { bytesToHex, privateToAddress } from '@ethereumjs/util'
import { Refusal } from './refusal.js'

export interface KeystoreV3 {
  version: 3
  id: string
  address: string
  crypto: {
    cipher: 'aes-128-ctr'
    cipherparams: { iv: string }
    ciphertext: string
    kdf: 'scrypt' | 'pbkdf2'
    kdfparams: Record<string, number | string>
    mac: string
  }
}

/** geth's StandardScryptN/P and LightScryptN/P. */
export const STANDARD_SCRYPT = { n: 1 << 18, r: 8, p: 1 } as const
export const LIGHT_SCRYPT = { n: 1 << 12, r: 8, p: 6 } as const

export class WrongPassphraseError extends Refusal {
  constructor(path?: string) {
    super(`wrong passphrase${path === undefined ? '' : ` for ${path}`} (keystore MAC mismatch)`)
    this.name = 'WrongPassphraseError'
  }
}

const DKLEN = 32

/** Passphrases are NFKD-normalised UTF-8, as ethers does (plain ASCII is unchanged). */
function passphraseBytes(passphrase: string): Uint8Array {
  return new TextEncoder().encode(passphrase.normalize('NFKD'))
}

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex')
}

function unhex(text: unknown, what: string): Uint8Array {
  if (typeof text !== 'string' || !/^(0x)?([0-9a-fA-F]{2})*$/.test(text)) throw new Error(`keystore: ${what} is not hex`)
  return new Uint8Array(Buffer.from(text.replace(/^0x/, ''), 'hex'))
}

function mac(derived: Uint8Array, ciphertext: Uint8Array): Uint8Array {
  const input = new Uint8Array(16 + ciphertext.length)
  input.set(derived.subarray(16, 32), 0)
  input.set(ciphertext, 16)
  return keccak_256(input)
}

function aes128ctr(key: Uint8Array, iv: Uint8Array, data: Uint8Array, encrypt: boolean): Uint8Array {
  const make = encrypt ? createCipheriv : createDecipheriv
  const cipher = make('aes-128-ctr', key.subarray(0, 16), iv)
  return new Uint8Array(Buffer.concat([cipher.update(data), cipher.final()]))
}

export function addressOfKey(privateKey: Uint8Array): string {
  return bytesToHex(privateToAddress(privateKey))
}

export async function encryptKeystore(
  privateKey: Uint8Array,
  passphrase: string,
  scrypt: { n: number; r: number; p: number } = STANDARD_SCRYPT,
): Promise<KeystoreV3> {
  if (privateKey.length !== 32) throw new Error('a private key is 32 bytes')
  const salt = new Uint8Array(randomBytes(32))
  const iv = new Uint8Array(randomBytes(16))
  const derived = await scryptAsync(passphraseBytes(passphrase), salt, { N: scrypt.n, r: scrypt.r, p: scrypt.p, dkLen: DKLEN, maxmem: 2 ** 31 })
  const ciphertext = aes128ctr(derived, iv, privateKey, true)
  return {
    version: 3,
    id: randomUUID(),
    address: addressOfKey(privateKey).slice(2),
    crypto: {
      cipher: 'aes-128-ctr',
      cipherparams: { iv: hex(iv) },
      ciphertext: hex(ciphertext),
      kdf: 'scrypt',
      kdfparams: { dklen: DKLEN, salt: hex(salt), n: scrypt.n, r: scrypt.r, p: scrypt.p },
      mac: hex(mac(derived, ciphertext)),
    },
  }
}

async function deriveKey(crypto: Record<string, unknown>, passphrase: Uint8Array): Promise<Uint8Array> {
  const params = crypto.kdfparams as Record<string, unknown> | undefined
  if (typeof params !== 'object' || params === null) throw new Error('keystore: missing kdfparams')
  const salt = unhex(params.salt, 'kdfparams.salt')
  const dkLen = Number(params.dklen ?? DKLEN)
  if (!Number.isInteger(dkLen) || dkLen < 32) throw new Error('keystore: kdfparams.dklen must be at least 32')
  const kdf = String(crypto.kdf).toLowerCase()
  if (kdf === 'scrypt') {
    const [N, r, p] = [params.n, params.r, params.p].map(Number) as [number, number, number]
    if (![N, r, p].every((v) => Number.isSafeInteger(v) && v > 0)) throw new Error('keystore: bad scrypt parameters')
    return scryptAsync(passphrase, salt, { N, r, p, dkLen, maxmem: 2 ** 31 })
  }
  if (kdf === 'pbkdf2') {
    if (params.prf !== 'hmac-sha256') throw new Error(`keystore: unsupported pbkdf2 prf ${String(params.prf)}`)
    return pbkdf2Async(sha256, passphrase, salt, { c: Number(params.c), dkLen })
  }
  throw new Error(`keystore: unsupported kdf ${String(crypto.kdf)}`)
}

/** Decrypts a v3 keystore (scrypt or pbkdf2-hmac-sha256); throws WrongPassphraseError on a MAC mismatch. */
export async function decryptKeystore(json: unknown, passphrase: string, source?: string): Promise<Uint8Array> {
  const file = json as Record<string, unknown> | null
  if (typeof file !== 'object' || file === null || Number(file.version) !== 3) throw new Error(`${source ?? 'keystore'}: not a version 3 keystore`)
  const crypto = (file.crypto ?? file.Crypto) as Record<string, unknown> | undefined
  if (typeof crypto !== 'object' || crypto === null) throw new Error(`${source ?? 'keystore'}: missing "crypto"`)
  if (String(crypto.cipher).toLowerCase() !== 'aes-128-ctr') throw new Error(`keystore: unsupported cipher ${String(crypto.cipher)}`)
  const derived = await deriveKey(crypto, passphraseBytes(passphrase))
  const ciphertext = unhex(crypto.ciphertext, 'ciphertext')
  const expected = unhex(crypto.mac, 'mac')
  const actual = mac(derived, ciphertext)
  if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) throw new WrongPassphraseError(source)
  const iv = unhex((crypto.cipherparams as Record<string, unknown> | undefined)?.iv, 'cipherparams.iv')
  const key = aes128ctr(derived, iv, ciphertext, false)
  if (typeof file.address === 'string' && file.address !== '') {
    const stated = `0x${file.address.replace(/^0x/, '').toLowerCase()}`
    if (stated !== addressOfKey(key)) throw new Error(`${source ?? 'keystore'}: decrypted key does not match the address ${stated}`)
  }
  return key
}

/** geth's file name: UTC--<ISO time with dashes>--<address without 0x>. */
export function keystoreFileName(address: string, at = new Date()): string {
  const iso = at.toISOString().replace(/:/g, '-')
  return `UTC--${iso}--${address.replace(/^0x/, '').toLowerCase()}`
}
