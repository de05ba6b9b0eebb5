// Hex encoding for JSON-RPC output (hot path) and decoding of hex Keel made itself. Input from clients
// goes through the validating parsers in src/rpc/params.ts instead.
// QUANTITY = 0x + minimal hex digits ("0x0" for zero); DATA = 0x + two lowercase digits per byte.

import type { Address } from '@ethereumjs/util'
import { bytesToHex as utilBytesToHex } from '@ethereumjs/util'

/** 0x-prefixed lowercase hex of `bytes` ("0x" when empty). */
export const bytesToHex: (bytes: Uint8Array) => string = utilBytesToHex

/** QUANTITY encoding of a non-negative integer: "0x0", "0x1f", never leading zeros. */
export function quantity(n: bigint | number): string {
  if (typeof n === 'number') {
    if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`quantity: not a non-negative safe integer: ${n}`)
  } else if (n < 0n) {
    throw new RangeError(`quantity: negative value ${n}`)
  }
  return '0x' + n.toString(16)
}

/** QUANTITY encoding of a big-endian unsigned integer given as bytes (e.g. signature r/s). */
export function bytesToQuantity(bytes: Uint8Array): string {
  let i = 0
  while (i < bytes.length && bytes[i] === 0) i++
  if (i === bytes.length) return '0x0'
  const hex = utilBytesToHex(bytes.subarray(i))
  // Drop a single leading zero nibble of the first byte ("0x0a" -> "0xa").
  return hex.charCodeAt(2) === 48 ? '0x' + hex.slice(3) : hex
}

/** Lowercase (checksum-less) 0x address, as geth prints addresses in JSON. */
export function addressHex(address: Address | Uint8Array): string {
  return utilBytesToHex(address instanceof Uint8Array ? address : address.bytes)
}

// 255 marks a non-hex character.
const NIBBLE = new Uint8Array(256).fill(255)
for (let c = 0; c < 10; c++) NIBBLE[48 + c] = c
for (let c = 0; c < 6; c++) {
  NIBBLE[65 + c] = 10 + c
  NIBBLE[97 + c] = 10 + c
}

/** Value of a hex digit character code, or 255 when it is not one. */
export function nibble(charCode: number): number {
  return charCode < 256 ? NIBBLE[charCode]! : 255
}

/** Index of the first non-hex character of `s` at or after `from`, or -1. */
export function firstNonHex(s: string, from = 0): number {
  for (let i = from; i < s.length; i++) if (nibble(s.charCodeAt(i)) === 255) return i
  return -1
}

/** Decodes hex digits (no prefix, even length, already validated) starting at `offset`. */
export function decodeHexDigits(s: string, offset = 0): Uint8Array {
  const out = new Uint8Array((s.length - offset) >>> 1)
  for (let i = 0, j = offset; i < out.length; i++, j += 2) {
    out[i] = (NIBBLE[s.charCodeAt(j)]! << 4) | NIBBLE[s.charCodeAt(j + 1)]!
  }
  return out
}

/**
 * Strict DATA decoding: requires the 0x prefix, an even number of digits and only hex digits.
 * Throws a plain Error (this is for trusted/internal hex; RPC input goes through src/rpc/params.ts).
 */
export function hexToBytes(hex: string): Uint8Array {
  if (typeof hex !== 'string' || hex.length < 2 || hex.charCodeAt(0) !== 48 || (hex.charCodeAt(1) | 32) !== 120) {
    throw new Error('hexToBytes: missing 0x prefix')
  }
  if (hex.length % 2 !== 0) throw new Error('hexToBytes: odd number of hex digits')
  if (firstNonHex(hex, 2) !== -1) throw new Error('hexToBytes: invalid hex digit')
  return decodeHexDigits(hex, 2)
}

/**
 * Hex to bytes for strings Keel made itself (hashes, addresses, trie keys it encoded), with or without
 * 0x: one native decode and no validation. @ethereumjs/util's hexToBytes tests a regular expression over
 * every string first, ~3-5% of sealing a block of transfers.
 */
export function trustedHexToBytes(hex: string): Uint8Array {
  return Buffer.from(hex.charCodeAt(1) === 0x78 ? hex.slice(2) : hex, 'hex')
}
