// Hex to bytes for strings Keel made itself (hashes, addresses, trie keys it encoded), with or without
// 0x: one native decode and no validation. @ethereumjs/util's hexToBytes tests a regular expression
// over every string first, ~3-5% of sealing a block of transfers. Input from clients goes through the
// validating parsers in src/rpc/params.ts instead.

export function trustedHexToBytes(hex: string): Uint8Array {
  return Buffer.from(hex.charCodeAt(1) === 0x78 ? hex.slice(2) : hex, 'hex')
}
