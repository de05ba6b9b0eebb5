// LevelDB key layout. One database, binary keys, a 1-byte prefix per table, block numbers as 8-byte
// big-endian so that range scans walk blocks in order.
//
//   s + trie key             trie node RLP (account and storage tries) and contract code
//   H + num(8)               canonical block hash (32)
//   n + hash(32)             block number (8)
//   h + num(8)               header RLP
//   b + num(8)               body RLP: [[tx bytes...], [sender(20)...]]
//   r + num(8)               receipts RLP: [[status, cumulativeGasUsed, logs]...]
//   B + num(8)               logs bloom (256), only for a block with logs (before 2026-11-22: every block)
//   A + address(20) + num(8) empty: the block has a log from this address (inverted log index)
//   T + topic(32) + num(8)   empty: the block has a log with this topic (any position)
//   t + txHash(32)           num(8) + txIndex(4)
//   p + txHash(32)           a pooled (not yet mined) transaction, in wire form
//   D + num(8)               (pruning) RLP list of trie keys the block superseded, deleted `history` blocks later
//   L + trie key             (pruning) the last block that wrote this trie node, num(8)
//   R + num(8)               (--stream-url) a block not yet acknowledged by the block stream: its
//                            trie keys, pruning ops and state diff (replication/outbox.ts)
//   I + address(20) + num(8) + txIndex(4)   empty: the transaction touched the address (explorer index:
//                            from/to of a call frame, created contract, selfdestruct beneficiary)
//   N + sender(20) + nonce(8) the transaction's hash (32)
//   C + contract(20)         the creating transaction's hash (32) + the direct creator (20)
//   m + name                 metadata: head, genesis hash, schema version, lowest block indexed (indexes)

const enc = new TextEncoder()

export const Prefix = {
  trie: 0x73, // s
  canonicalHash: 0x48, // H
  blockNumber: 0x6e, // n
  header: 0x68, // h
  body: 0x62, // b
  receipts: 0x72, // r
  bloom: 0x42, // B
  logAddress: 0x41, // A
  logTopic: 0x54, // T
  txLookup: 0x74, // t
  pooledTx: 0x70, // p
  superseded: 0x44, // D
  lastWritten: 0x4c, // L
  outbox: 0x52, // R
  meta: 0x6d, // m
  appearance: 0x49, // I
  senderNonce: 0x4e, // N
  creator: 0x43, // C
} as const

export const SCHEMA_VERSION = 1

function withNumber(prefix: number, num: bigint): Uint8Array {
  const key = new Uint8Array(9)
  key[0] = prefix
  new DataView(key.buffer).setBigUint64(1, num)
  return key
}

function withBytes(prefix: number, bytes: Uint8Array): Uint8Array {
  const key = new Uint8Array(1 + bytes.length)
  key[0] = prefix
  key.set(bytes, 1)
  return key
}

function withBytesAndNumber(prefix: number, bytes: Uint8Array, num: bigint): Uint8Array {
  const key = new Uint8Array(1 + bytes.length + 8)
  key[0] = prefix
  key.set(bytes, 1)
  new DataView(key.buffer).setBigUint64(1 + bytes.length, num)
  return key
}

export const Keys = {
  canonicalHash: (num: bigint) => withNumber(Prefix.canonicalHash, num),
  blockNumber: (hash: Uint8Array) => withBytes(Prefix.blockNumber, hash),
  header: (num: bigint) => withNumber(Prefix.header, num),
  body: (num: bigint) => withNumber(Prefix.body, num),
  receipts: (num: bigint) => withNumber(Prefix.receipts, num),
  bloom: (num: bigint) => withNumber(Prefix.bloom, num),
  txLookup: (hash: Uint8Array) => withBytes(Prefix.txLookup, hash),
  logAddress: (address: Uint8Array, num: bigint) => withBytesAndNumber(Prefix.logAddress, address, num),
  logTopic: (topic: Uint8Array, num: bigint) => withBytesAndNumber(Prefix.logTopic, topic, num),
  pooledTx: (hash: Uint8Array) => withBytes(Prefix.pooledTx, hash),
  superseded: (num: bigint) => withNumber(Prefix.superseded, num),
  lastWritten: (rawTrieKey: Uint8Array) => withBytes(Prefix.lastWritten, rawTrieKey),
  /** a trie node (or code) by its raw trie key; the trie DB's own reads go through state-db.ts trieKey */
  trieNode: (rawTrieKey: Uint8Array) => withBytes(Prefix.trie, rawTrieKey),
  outbox: (num: bigint) => withNumber(Prefix.outbox, num),
  outboxRange: { gte: Uint8Array.of(Prefix.outbox), lt: Uint8Array.of(Prefix.outbox + 1) },
  pooledTxRange: { gte: Uint8Array.of(Prefix.pooledTx), lt: Uint8Array.of(Prefix.pooledTx + 1) },
  /** 'write-probe' is only ever deleted (never stored): the write guard's probe of LevelDB's write path */
  meta: (name: 'head' | 'genesis' | 'schema' | 'config' | 'indexes' | 'write-probe') => withBytes(Prefix.meta, enc.encode(name)),
  appearance: (address: Uint8Array, num: bigint, index: number) => {
    const key = new Uint8Array(33)
    key[0] = Prefix.appearance
    key.set(address, 1)
    const view = new DataView(key.buffer)
    view.setBigUint64(21, num)
    view.setUint32(29, index)
    return key
  },
  senderNonce: (sender: Uint8Array, nonce: bigint) => withBytesAndNumber(Prefix.senderNonce, sender, nonce),
  creator: (contract: Uint8Array) => withBytes(Prefix.creator, contract),
}

export function encodeNumber(num: bigint): Uint8Array {
  const out = new Uint8Array(8)
  new DataView(out.buffer).setBigUint64(0, num)
  return out
}

export function decodeNumber(bytes: Uint8Array, offset = 0): bigint {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getBigUint64(offset)
}

export function encodeTxLookup(num: bigint, index: number): Uint8Array {
  const out = new Uint8Array(12)
  const view = new DataView(out.buffer)
  view.setBigUint64(0, num)
  view.setUint32(8, index)
  return out
}

export function decodeTxLookup(bytes: Uint8Array): { number: bigint; index: number } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  return { number: view.getBigUint64(0), index: view.getUint32(8) }
}

/** head pointer: number(8) + hash(32) */
export function encodeHead(num: bigint, hash: Uint8Array): Uint8Array {
  const out = new Uint8Array(40)
  new DataView(out.buffer).setBigUint64(0, num)
  out.set(hash, 8)
  return out
}

export function decodeHead(bytes: Uint8Array): { number: bigint; hash: Uint8Array } {
  return { number: decodeNumber(bytes), hash: bytes.slice(8, 40) }
}
