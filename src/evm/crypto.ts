// Native secp256k1 (libsecp256k1 through N-API) and WebAssembly keccak, handed to @ethereumjs through
// Common's customCrypto. Pure-JS ecrecover costs ~1.2 ms; this costs ~0.05 ms. Loading is explicit:
// `require('secp256k1')` silently falls back to pure JS, so we load the native bindings or refuse to start.

import { createRequire } from 'node:module'
import type { CustomCrypto } from '@ethereumjs/common'
import { createKeccak } from 'hash-wasm'
import { lazyKzg } from './kzg.js'

interface NativeSecp256k1 {
  ecdsaRecover(sig: Uint8Array, recid: number, msg32: Uint8Array, compressed?: boolean): Uint8Array
  ecdsaSign(msg32: Uint8Array, privateKey: Uint8Array): { signature: Uint8Array; recid: number }
  publicKeyCreate(privateKey: Uint8Array, compressed?: boolean): Uint8Array
  privateKeyVerify(privateKey: Uint8Array): boolean
}

export interface FastCrypto {
  secp256k1: NativeSecp256k1
  keccak256(data: Uint8Array): Uint8Array
  /** 64-byte uncompressed public key (no 0x04 prefix), as @ethereumjs expects from ecrecover. */
  ecrecover(msgHash: Uint8Array, v: bigint, r: Uint8Array, s: Uint8Array, chainId?: bigint): Uint8Array
  customCrypto: CustomCrypto
}

let loaded: FastCrypto | undefined

function loadNativeSecp256k1(): NativeSecp256k1 {
  const require = createRequire(import.meta.url)
  try {
    // secp256k1/bindings loads the N-API prebuild and throws if it cannot (no JS fallback).
    return require('secp256k1/bindings') as NativeSecp256k1
  } catch (err) {
    throw new Error(
      `the native secp256k1 binding failed to load (${(err as Error).message}); Keel refuses to run on pure-JS crypto`,
    )
  }
}

function pad32(b: Uint8Array): Uint8Array {
  if (b.length === 32) return b
  if (b.length > 32) throw new Error('Invalid signature: r or s longer than 32 bytes')
  const out = new Uint8Array(32)
  out.set(b, 32 - b.length)
  return out
}

function recoveryId(v: bigint, chainId: bigint | undefined): number {
  let rec: bigint
  if (v === 0n || v === 1n) rec = v
  else if (chainId === undefined) rec = v - 27n
  else rec = v - (chainId * 2n + 35n)
  if (rec !== 0n && rec !== 1n) throw new Error('Invalid signature v value')
  return Number(rec)
}

/** Loads (once per thread) the native secp256k1 binding and the wasm keccak. */
export async function loadFastCrypto(): Promise<FastCrypto> {
  if (loaded !== undefined) return loaded
  const secp256k1 = loadNativeSecp256k1()
  const hasher = await createKeccak(256)
  const keccak256 = (data: Uint8Array): Uint8Array => {
    hasher.init()
    hasher.update(data)
    return hasher.digest('binary')
  }
  const sig = new Uint8Array(64)
  const ecrecover = (msgHash: Uint8Array, v: bigint, r: Uint8Array, s: Uint8Array, chainId?: bigint): Uint8Array => {
    sig.set(pad32(r), 0)
    sig.set(pad32(s), 32)
    const pub = secp256k1.ecdsaRecover(sig, recoveryId(v, chainId), msgHash, false)
    return pub.subarray(1)
  }
  const ecdsaRecover = (signature: Uint8Array, recId: number, hash: Uint8Array): Uint8Array =>
    secp256k1.ecdsaRecover(signature, recId, hash, false)
  loaded = { secp256k1, keccak256, ecrecover, customCrypto: { keccak256, ecrecover, ecdsaRecover, kzg: lazyKzg } }
  return loaded
}

/** A transaction not yet signed, of any type (legacy ones take `convertV`; typed ones ignore it). */
interface UnsignedTx {
  getHashedMessageToSign(): Uint8Array
  addSignature(v: bigint, r: Uint8Array, s: Uint8Array, convertV?: boolean): { serialize(): Uint8Array }
}

/**
 * The transaction signed with the native secp256k1 and serialised (@ethereumjs's own signing is pure JS:
 * ~85 ms for the first eight transactions of a thread, measured in commit c2c94b0, bench/README.md
 * there). A legacy transaction's v becomes EIP-155's chainId * 2 + 35 + recid.
 */
export function signNatively(tx: UnsignedTx, privateKey: Uint8Array, sign: FastCrypto['secp256k1']['ecdsaSign']): Uint8Array {
  const { signature, recid } = sign(tx.getHashedMessageToSign(), privateKey)
  return tx.addSignature(BigInt(recid), signature.subarray(0, 32), signature.subarray(32), true).serialize()
}

/** The crypto of this thread; loadFastCrypto() must have resolved first. */
export function fastCrypto(): FastCrypto {
  if (loaded === undefined) throw new Error('fast crypto used before loadFastCrypto()')
  return loaded
}
