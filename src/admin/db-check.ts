// `keel db check`: walks a chain database and reports the first problem it finds.
//  1. the head pointer, the genesis and the stored genesis config;
//  2. every block from genesis to head, in chunks read with one getMany each: the canonical hash is the
//     header's keccak, the header's number is its own, the parent hash is the previous block's hash, the
//     number-by-hash entry points back, the body's transactions and the receipts hash to the header's
//     roots, the gas used matches the receipts, each transaction's lookup entry names this block and index;
//  3. the head's state trie: every node reachable from the header's state root (accounts, each contract's
//     storage trie, its code) is present and stored under the keccak of its value;
//  4. the index tables (number by hash, transaction lookups, log address / topic index, blooms, the
//     explorer's address appearances) name no block past the head; the explorer's (sender, nonce) and
//     creator entries name transactions that a block holds.
// Read-only, from one LevelDB snapshot.

import { RLP } from '@ethereumjs/rlp'
import { bytesToBigInt, bytesToHex, concatBytes, equalsBytes, KECCAK256_NULL, KECCAK256_RLP } from '@ethereumjs/util'
import type { Common } from '@ethereumjs/common'
import type { TransactionType } from '@ethereumjs/tx'
import { decodeBody } from '../chain/body.js'
import { logsBloomOf, receiptsRoot } from '../chain/builder.js'
import { orderedTrieRoot } from '../chain/ordered-trie.js'
import { decodeReceipts } from '../chain/receipts.js'
import type { ChainLevel } from '../chain/store/level.js'
import { decodeHead, decodeNumber, decodeTxLookup, Keys, Prefix } from '../chain/store/schema.js'

export interface DbCheckReport {
  ok: boolean
  /** the first problem found; the walk stops there */
  problem?: string
  head?: { number: string; hash: string; stateRoot: string }
  blocks: number
  transactions: number
  stateNodes: number
  accounts: number
  contracts: number
  storageSlots: number
  indexEntries: number
  /** milliseconds per phase */
  ms: { blocks: number; state: number; indexes: number }
}

export interface DbCheckContext {
  keccak: (data: Uint8Array) => Uint8Array
  /** the chain's Common (receipts' blooms) */
  common: Common
  /** blocks walked so far, every CHUNK */
  onProgress?: (phase: 'blocks' | 'state' | 'indexes', done: number) => void
}

class Problem extends Error {}

// Blocks per getMany: big enough that LevelDB's read cost dominates, small enough to keep memory flat.
const BLOCK_CHUNK = 512
// Trie nodes per getMany in the breadth-first walk.
const NODE_CHUNK = 2_048
const HASH = 32
const CODE_PREFIX = 0x63 // 'c': @ethereumjs keeps code under 'c' + code hash (prefixCodeHashes)

const txType = (encoded: Uint8Array): TransactionType => (encoded.length > 0 && encoded[0] < 0x80 ? encoded[0] : 0) as TransactionType

export async function checkChain(level: ChainLevel, ctx: DbCheckContext): Promise<DbCheckReport> {
  const report: DbCheckReport = { ok: true, blocks: 0, transactions: 0, stateNodes: 0, accounts: 0, contracts: 0, storageSlots: 0, indexEntries: 0, ms: { blocks: 0, state: 0, indexes: 0 } }
  const snapshot = level.snapshot()
  try {
    const [headBytes, genesisBytes] = await level.getMany([Keys.meta('head'), Keys.meta('genesis')], { snapshot })
    if (headBytes === undefined) throw new Problem('no head pointer (m head): the database holds no chain, or lost its meta table')
    if (genesisBytes === undefined) throw new Problem('no genesis hash (m genesis)')
    const head = decodeHead(headBytes)
    let t = performance.now()
    const stateRoot = await walkBlocks(level, snapshot, head, genesisBytes, ctx, report)
    report.head = { number: head.number.toString(), hash: bytesToHex(head.hash), stateRoot: bytesToHex(stateRoot) }
    report.ms.blocks = Math.round(performance.now() - t)
    t = performance.now()
    await walkState(level, snapshot, stateRoot, ctx, report)
    report.ms.state = Math.round(performance.now() - t)
    t = performance.now()
    await walkIndexes(level, snapshot, head.number, ctx, report)
    report.ms.indexes = Math.round(performance.now() - t)
  } catch (err) {
    if (!(err instanceof Problem)) throw err
    report.ok = false
    report.problem = err.message
  } finally {
    await snapshot.close()
  }
  return report
}

type Snapshot = ReturnType<ChainLevel['snapshot']>

/** Returns the head's state root. */
async function walkBlocks(level: ChainLevel, snapshot: Snapshot, head: { number: bigint; hash: Uint8Array }, genesisHash: Uint8Array, ctx: DbCheckContext, report: DbCheckReport): Promise<Uint8Array> {
  let parentHash: Uint8Array | undefined
  let stateRoot: Uint8Array = KECCAK256_RLP
  for (let from = 0n; from <= head.number; from += BigInt(BLOCK_CHUNK)) {
    const to = from + BigInt(BLOCK_CHUNK) - 1n < head.number ? from + BigInt(BLOCK_CHUNK) - 1n : head.number
    const keys: Uint8Array[] = []
    for (let n = from; n <= to; n++) keys.push(Keys.canonicalHash(n), Keys.header(n), Keys.body(n), Keys.receipts(n))
    const values = await level.getMany(keys, { snapshot })
    const hashes: Uint8Array[] = []
    const lookups: Array<{ key: Uint8Array; number: bigint; index: number; at: string }> = []
    for (let i = 0, n = from; n <= to; n++, i += 4) {
      const [canonical, headerRlp, bodyRlp, receiptsRlp] = values.slice(i, i + 4)
      const at = `block ${n}`
      if (canonical === undefined) throw new Problem(`${at}: no canonical hash (H)`)
      if (headerRlp === undefined) throw new Problem(`${at}: no header (h)`)
      if (bodyRlp === undefined) throw new Problem(`${at}: no body (b)`)
      if (receiptsRlp === undefined) throw new Problem(`${at}: no receipts (r)`)
      const hash = ctx.keccak(headerRlp)
      if (!equalsBytes(hash, canonical)) throw new Problem(`${at}: header hashes to ${bytesToHex(hash)}, the canonical hash is ${bytesToHex(canonical)}`)
      let fields: Uint8Array[]
      try {
        fields = RLP.decode(headerRlp) as Uint8Array[]
      } catch (err) {
        throw new Problem(`${at}: header does not decode: ${(err as Error).message}`)
      }
      if (bytesToBigInt(fields[8]) !== n) throw new Problem(`${at}: the header says number ${bytesToBigInt(fields[8])}`)
      if (parentHash !== undefined && !equalsBytes(fields[0], parentHash)) {
        throw new Problem(`${at}: parent hash ${bytesToHex(fields[0])} is not block ${n - 1n}'s hash ${bytesToHex(parentHash)}`)
      }
      if (n === 0n && !equalsBytes(hash, genesisHash)) throw new Problem(`block 0 (${bytesToHex(hash)}) is not the stored genesis ${bytesToHex(genesisHash)}`)
      let body, receipts
      try {
        body = decodeBody(bodyRlp)
      } catch (err) {
        throw new Problem(`${at}: body does not decode: ${(err as Error).message}`)
      }
      try {
        receipts = decodeReceipts(receiptsRlp)
      } catch (err) {
        throw new Problem(`${at}: receipts do not decode: ${(err as Error).message}`)
      }
      const txRoot = orderedTrieRoot(body.txs, ctx.keccak)
      if (!equalsBytes(txRoot, fields[4])) throw new Problem(`${at}: the transactions hash to root ${bytesToHex(txRoot)}, the header's is ${bytesToHex(fields[4])}`)
      if (receipts.length !== body.txs.length) throw new Problem(`${at}: ${body.txs.length} transactions but ${receipts.length} receipts`)
      const rRoot = receiptsRoot(receipts, receipts.map((r) => logsBloomOf(r, ctx.common)), body.txs.map((raw) => ({ type: txType(raw) })), ctx.keccak)
      if (!equalsBytes(rRoot, fields[5])) throw new Problem(`${at}: the receipts hash to root ${bytesToHex(rRoot)}, the header's is ${bytesToHex(fields[5])}`)
      const gasUsed = receipts.length === 0 ? 0n : receipts[receipts.length - 1].cumulativeGasUsed
      if (gasUsed !== bytesToBigInt(fields[10])) throw new Problem(`${at}: the header's gas used ${bytesToBigInt(fields[10])}, the receipts' ${gasUsed}`)
      body.txs.forEach((raw, index) => lookups.push({ key: Keys.txLookup(ctx.keccak(raw)), number: n, index, at: `${at}, transaction ${index} (${bytesToHex(ctx.keccak(raw))})` }))
      hashes.push(hash)
      parentHash = hash
      stateRoot = fields[3]
      report.transactions += body.txs.length
      report.blocks++
    }
    const numbers = await level.getMany(hashes.map((h) => Keys.blockNumber(h)), { snapshot })
    numbers.forEach((v, i) => {
      const n = from + BigInt(i)
      if (v === undefined || decodeNumber(v) !== n) throw new Problem(`block ${n}: the number-by-hash entry (n) ${v === undefined ? 'is missing' : `says ${decodeNumber(v)}`}`)
    })
    const found = await level.getMany(lookups.map((l) => l.key), { snapshot })
    found.forEach((v, i) => {
      const l = lookups[i]
      if (v === undefined) throw new Problem(`${l.at}: no lookup entry (t)`)
      const { number, index } = decodeTxLookup(v)
      if (number !== l.number || index !== l.index) throw new Problem(`${l.at}: the lookup entry (t) says block ${number}, index ${index}`)
    })
    ctx.onProgress?.('blocks', report.blocks)
  }
  if (!equalsBytes(parentHash!, head.hash)) throw new Problem(`the head pointer names ${bytesToHex(head.hash)}, block ${head.number} is ${bytesToHex(parentHash!)}`)
  return stateRoot
}

type RawNode = Uint8Array | RawNode[]
interface Pending {
  /** raw trie key (storage prefix + hash, or the hash) */
  key: Uint8Array
  hash: Uint8Array
  /** account trie: the nibbles leading to the node; storage tries: undefined */
  path: number[] | undefined
  at: string
}

/** Breadth first, a chunk of nodes per getMany; each node is checked against its hash. */
async function walkState(level: ChainLevel, snapshot: Snapshot, stateRoot: Uint8Array, ctx: DbCheckContext, report: DbCheckReport): Promise<void> {
  if (equalsBytes(stateRoot, KECCAK256_RLP)) return
  let queue: Pending[] = [{ key: stateRoot, hash: stateRoot, path: [], at: 'the state root' }]
  const codes: Array<{ hash: Uint8Array; at: string }> = []
  while (queue.length > 0) {
    const chunk = queue.slice(0, NODE_CHUNK)
    queue = queue.slice(NODE_CHUNK)
    const values = await level.getMany(chunk.map((p) => Keys.trieNode(p.key)), { snapshot })
    for (let i = 0; i < chunk.length; i++) {
      const p = chunk[i]
      const value = values[i]
      if (value === undefined) throw new Problem(`state trie: node ${bytesToHex(p.hash)} (${p.at}) is missing`)
      if (!equalsBytes(ctx.keccak(value), p.hash)) throw new Problem(`state trie: node ${bytesToHex(p.hash)} (${p.at}) is not the hash of its value`)
      report.stateNodes++
      let node: RawNode
      try {
        node = RLP.decode(value) as RawNode
      } catch (err) {
        throw new Problem(`state trie: node ${bytesToHex(p.hash)} (${p.at}) does not decode: ${(err as Error).message}`)
      }
      visit(node as RawNode[], p, p.path, queue, codes, report)
    }
    ctx.onProgress?.('state', report.stateNodes)
  }
  for (let i = 0; i < codes.length; i += NODE_CHUNK) {
    const chunk = codes.slice(i, i + NODE_CHUNK)
    const values = await level.getMany(chunk.map((c) => Keys.trieNode(concatBytes(Uint8Array.of(CODE_PREFIX), c.hash))), { snapshot })
    values.forEach((code, j) => {
      if (code === undefined) throw new Problem(`state: the code of ${chunk[j].at} (${bytesToHex(chunk[j].hash)}) is missing`)
      if (!equalsBytes(ctx.keccak(code), chunk[j].hash)) throw new Problem(`state: the code of ${chunk[j].at} does not hash to ${bytesToHex(chunk[j].hash)}`)
    })
  }
}

function visit(node: RawNode[], parent: Pending, path: number[] | undefined, queue: Pending[], codes: Array<{ hash: Uint8Array; at: string }>, report: DbCheckReport): void {
  const child = (ref: RawNode, childPath: number[] | undefined) => {
    if (Array.isArray(ref)) return visit(ref, parent, childPath, queue, codes, report)
    if (ref.length === 0) return
    if (ref.length !== HASH) throw new Problem(`state trie: node ${bytesToHex(parent.hash)} (${parent.at}) names a child of ${ref.length} bytes`)
    const prefix = parent.key.subarray(0, parent.key.length - HASH)
    queue.push({ key: prefix.length === 0 ? ref : concatBytes(prefix, ref), hash: ref, path: childPath, at: parent.at })
  }
  if (node.length === 17) {
    for (let i = 0; i < 16; i++) child(node[i], path === undefined ? undefined : [...path, i])
    return
  }
  if (node.length !== 2) throw new Problem(`state trie: node ${bytesToHex(parent.hash)} (${parent.at}) has ${node.length} items`)
  const encoded = node[0] as Uint8Array
  const flag = encoded[0] >> 4
  const nibbles: number[] = []
  for (let p = flag & 1 ? 1 : 2; p < encoded.length * 2; p++) nibbles.push(p & 1 ? encoded[p >> 1] & 0x0f : encoded[p >> 1] >> 4)
  const full = path === undefined ? undefined : [...path, ...nibbles]
  if (flag < 2) return child(node[1], full)
  // a leaf: in the account trie an account, whose storage trie and code are walked too
  if (full === undefined) {
    report.storageSlots++
    return
  }
  report.accounts++
  if (full.length !== 64) throw new Problem(`state trie: an account leaf at a path of ${full.length} nibbles`)
  const hashedAddress = new Uint8Array(32)
  for (let i = 0; i < 32; i++) hashedAddress[i] = (full[2 * i] << 4) | full[2 * i + 1]
  const account = RLP.decode(node[1] as Uint8Array) as Uint8Array[]
  const [, , storageRoot, codeHash] = account
  const at = `account with hashed address ${bytesToHex(hashedAddress)}`
  if (!equalsBytes(storageRoot, KECCAK256_RLP)) {
    const key = concatBytes(hashedAddress.subarray(0, 7), storageRoot)
    queue.push({ key, hash: storageRoot, path: undefined, at: `the storage of the ${at}` })
  }
  if (!equalsBytes(codeHash, KECCAK256_NULL)) {
    report.contracts++
    codes.push({ hash: codeHash, at })
  }
}

interface IndexTable {
  name: string
  prefix: number
  /** the block an entry names */
  numberOf?: (key: Uint8Array, value: Uint8Array) => bigint
  /** the transaction an entry names (its block comes from the transaction's lookup entry) */
  txOf?: (value: Uint8Array) => Uint8Array
}

const INDEX_TABLES: IndexTable[] = [
  { name: 'number by hash (n)', prefix: Prefix.blockNumber, numberOf: (_k, v) => decodeNumber(v) },
  { name: 'transaction lookup (t)', prefix: Prefix.txLookup, numberOf: (_k, v) => decodeTxLookup(v).number },
  { name: 'log address index (A)', prefix: Prefix.logAddress, numberOf: (k) => decodeNumber(k, k.length - 8) },
  { name: 'log topic index (T)', prefix: Prefix.logTopic, numberOf: (k) => decodeNumber(k, k.length - 8) },
  { name: 'blooms (B)', prefix: Prefix.bloom, numberOf: (k) => decodeNumber(k, 1) },
  // the explorer's indexes (src/indexes/): I + address(20) + number(8) + index(4); N and C hold a tx hash
  { name: 'address appearances (I)', prefix: Prefix.appearance, numberOf: (k) => decodeNumber(k, 21) },
  { name: 'transaction by sender and nonce (N)', prefix: Prefix.senderNonce, txOf: (v) => v.subarray(0, HASH) },
  { name: 'contract creators (C)', prefix: Prefix.creator, txOf: (v) => v.subarray(0, HASH) },
]

/**
 * The index tables name no block past the head (their entries for blocks up to it were checked above), and
 * the explorer's entries that name a transaction name one some block holds.
 */
async function walkIndexes(level: ChainLevel, snapshot: Snapshot, head: bigint, ctx: DbCheckContext, report: DbCheckReport): Promise<void> {
  let txLookups = 0
  for (const { name, prefix, numberOf, txOf } of INDEX_TABLES) {
    const it = level.iterator({ gte: Uint8Array.of(prefix), lt: Uint8Array.of(prefix + 1), snapshot })
    try {
      for (;;) {
        const entries = await it.nextv(10_000)
        if (entries.length === 0) break
        if (numberOf !== undefined) {
          for (const [key, value] of entries) {
            const n = numberOf(key, value)
            if (n > head) throw new Problem(`${name}: entry ${bytesToHex(key)} names block ${n}, past the head ${head}`)
          }
        }
        if (txOf !== undefined) {
          const lookups = await level.getMany(entries.map(([, value]) => Keys.txLookup(txOf(value))), { snapshot })
          lookups.forEach((lookup, i) => {
            const [key, value] = entries[i]
            if (lookup === undefined) throw new Problem(`${name}: entry ${bytesToHex(key)} names transaction ${bytesToHex(txOf(value))}, which no block holds`)
            const n = decodeTxLookup(lookup).number
            if (n > head) throw new Problem(`${name}: entry ${bytesToHex(key)} names a transaction of block ${n}, past the head ${head}`)
          })
        }
        if (prefix === Prefix.txLookup) txLookups += entries.length
        report.indexEntries += entries.length
        ctx.onProgress?.('indexes', report.indexEntries)
      }
    } finally {
      await it.close()
    }
  }
  // every transaction of every block has its entry (checked above): more entries name transactions no block holds
  if (txLookups !== report.transactions) throw new Problem(`transaction lookup (t): ${txLookups} entries for ${report.transactions} transactions in blocks`)
}
