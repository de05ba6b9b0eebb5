// The read side of the chain, used by the RPC layer on the main thread. It never writes: the head moves
// when the producer announces a block, and everything else is read from LevelDB (multithreading handle)
// through a cache of recently used blocks. Blocks are immutable once written (single producer, no
// reorgs), so whatever is cached, including encoded JSON, stays valid.

import { createBlockHeaderFromRLP } from '@ethereumjs/block'
import type { BlockHeader } from '@ethereumjs/block'
import type { Common } from '@ethereumjs/common'
import { bytesToHex, hexToBytes } from '@ethereumjs/util'
import { blockRlpSize, decodeBody } from './body.js'
import type { StoredBody } from './body.js'
import { encodeBlockRlp } from './block-rlp.js'
import type { HeadInfo, NewBlockEvent } from './messages.js'
import { decodeReceipts } from './receipts.js'
import type { ReceiptRecord } from './receipts.js'
import type { ChainLevel } from './store/level.js'
import { decodeNumber, decodeTxLookup, Keys } from './store/schema.js'
import { LruMap } from '../util/lru.js'
import { NotMinedTxs } from './not-mined-txs.js'
import { RecentTxIndex } from './recent-txs.js'

/** Transactions whose block and index are kept in memory (about 4 MiB; ~50 full blocks of transfers). */
const RECENT_TXS = 32_768

/** Hashes the transaction index was asked for and did not hold (about 1 MiB). */
const NOT_MINED_HASHES = 8_192

/** Block hashes whose number is kept in memory (about 1 MiB): eth_getBlockByHash and log consumers' lookups. */
const BLOCK_NUMBERS_BY_HASH = 8_192

/**
 * Blocks kept in memory are weighed by their transactions (each carries its raw bytes and whatever JSON
 * was asked of it, 1-3 KiB) plus a share for the header: ~16k transactions, or 2,048 empty blocks.
 * Bounded by count alone (512 blocks) the cache grew with block size.
 */
const BLOCK_CACHE_WEIGHT = 16_384
const blockWeight = (block: BlockRecord): number => 8 + block.txHashes.length

export interface BlockRecord {
  number: bigint
  hash: string
  header: BlockHeader
  size: number
  /** 0x hashes, in block order */
  txHashes: string[]
  senders: string[]
  /**
   * A transaction's bytes as the block holds them (EIP-2718: type byte + payload, or a legacy RLP list).
   * The RPC layer reads what it needs from them and keeps what it derives (JSON text, fee samples), a
   * fraction of the size of decoded transaction objects.
   */
  rawTx(index: number): Uint8Array
  receipts(): ReceiptRecord[]
  /** the receipts as stored (src/chain/receipts.ts), for readers that walk them in place */
  readonly receiptsRlp: Uint8Array
  /** uncle headers' RLP (a block from another client: keel import; Keel's own blocks have none) */
  uncles: readonly Uint8Array[]
  /** withdrawals as [index, validator, address, amount] (likewise only in imported blocks) */
  withdrawals: readonly Uint8Array[][]
  /** per-block memo for encoded JSON and derived objects, owned by the RPC layer */
  memo: Map<string, unknown>
}

class LoadedBlock implements BlockRecord {
  readonly number: bigint
  readonly hash: string
  readonly memo = new Map<string, unknown>()
  readonly txHashes: string[]
  readonly senders: string[]

  constructor(
    readonly header: BlockHeader,
    readonly size: number,
    private readonly rawTxs: Uint8Array[],
    senders: Uint8Array[],
    readonly receiptsRlp: Uint8Array,
    keccak: (b: Uint8Array) => Uint8Array,
    knownTxHashes?: string[],
    readonly uncles: readonly Uint8Array[] = [],
    readonly withdrawals: readonly Uint8Array[][] = [],
  ) {
    this.number = header.number
    this.hash = bytesToHex(header.hash())
    // loops rather than closures made per block: see StorageTrieNodes (store/bulk-flush-sm.ts)
    this.senders = new Array(senders.length)
    for (let i = 0; i < senders.length; i++) this.senders[i] = bytesToHex(senders[i])
    if (knownTxHashes !== undefined) this.txHashes = knownTxHashes
    else {
      this.txHashes = new Array(rawTxs.length)
      for (let i = 0; i < rawTxs.length; i++) this.txHashes[i] = bytesToHex(keccak(rawTxs[i]))
    }
  }

  rawTx(index: number): Uint8Array {
    return this.rawTxs[index]
  }

  receipts(): ReceiptRecord[] {
    return decodeReceipts(this.receiptsRlp)
  }
}

/** eth_getBlock's `size`: counted from the lengths, or encoded when the body has uncles or withdrawals. */
function sizeOf(headerRlp: Uint8Array, body: StoredBody, withWithdrawals: boolean): number {
  if (body.uncles === undefined) return blockRlpSize(headerRlp.length, body.txs, withWithdrawals)
  return encodeBlockRlp(headerRlp, body, withWithdrawals).length
}

export class ChainView {
  private headInfo: HeadInfo
  private headBlock: BlockRecord | undefined
  private readonly cache = new LruMap<bigint, BlockRecord>(BLOCK_CACHE_WEIGHT, blockWeight)
  private readonly recentTxs = new RecentTxIndex(RECENT_TXS)
  private readonly notMined = new NotMinedTxs(NOT_MINED_HASHES)
  private readonly numbersByHash = new LruMap<string, bigint>(BLOCK_NUMBERS_BY_HASH)
  private readonly headListeners: Array<(block: BlockRecord) => void> = []

  constructor(
    readonly level: ChainLevel,
    readonly common: Common,
    private readonly keccak: (b: Uint8Array) => Uint8Array,
    head: HeadInfo,
    readonly genesisHash: string,
    /** Blocks behind the head whose state is kept (0 = archive). */
    private readonly stateHistory = 0,
  ) {
    this.headInfo = head
  }

  /** Whether the state after block `number` is still stored (always, in archive mode). */
  hasStateOf(number: bigint): boolean {
    return this.stateHistory === 0 || number >= this.headInfo.number - BigInt(this.stateHistory)
  }

  get head(): HeadInfo {
    return this.headInfo
  }

  /** Called with each block the producer seals, in order. */
  applyBlock(event: NewBlockEvent): BlockRecord {
    const header = createBlockHeaderFromRLP(event.headerRlp, { common: this.common, setHardfork: true })
    const body = decodeBody(event.bodyRlp)
    const record = new LoadedBlock(
      header,
      sizeOf(event.headerRlp, body, header.withdrawalsRoot !== undefined),
      body.txs,
      body.senders,
      event.receiptsRlp,
      this.keccak,
      event.txHashes,
      body.uncles,
      body.withdrawals,
    )
    this.cache.set(record.number, record)
    this.numbersByHash.set(record.hash, record.number)
    this.recentTxs.add(record.number, record.txHashes)
    this.notMined.blockApplied(record.txHashes)
    this.headInfo = event.head
    this.headBlock = record
    for (const listener of this.headListeners) listener(record)
    return record
  }

  onHead(listener: (block: BlockRecord) => void): void {
    this.headListeners.push(listener)
  }

  async headRecord(): Promise<BlockRecord> {
    if (this.headBlock !== undefined && this.headBlock.number === this.headInfo.number) return this.headBlock
    const b = await this.blockByNumber(this.headInfo.number)
    if (b === undefined) throw new Error(`head block ${this.headInfo.number} missing`)
    this.headBlock = b
    return b
  }

  /** A block whose record is in memory, found without I/O or a promise; undefined means "ask blockByNumber". */
  cachedBlock(number: bigint): BlockRecord | undefined {
    return number < 0n || number > this.headInfo.number ? undefined : this.cache.get(number)
  }

  async blockByNumber(number: bigint): Promise<BlockRecord | undefined> {
    if (number < 0n || number > this.headInfo.number) return undefined
    const cached = this.cache.get(number)
    if (cached !== undefined) return cached
    const [headerRlp, bodyRlp, receiptsRlp] = await this.level.getMany([
      Keys.header(number),
      Keys.body(number),
      Keys.receipts(number),
    ])
    if (headerRlp === undefined || bodyRlp === undefined || receiptsRlp === undefined) return undefined
    const header = createBlockHeaderFromRLP(headerRlp, { common: this.common, setHardfork: true })
    const body = decodeBody(bodyRlp)
    const record = new LoadedBlock(
      header,
      sizeOf(headerRlp, body, header.withdrawalsRoot !== undefined),
      body.txs,
      body.senders,
      receiptsRlp,
      this.keccak,
      undefined,
      body.uncles,
      body.withdrawals,
    )
    this.cache.set(record.number, record)
    this.numbersByHash.set(record.hash, record.number)
    return record
  }

  async numberOfHash(hash: string): Promise<bigint | undefined> {
    const known = this.numbersByHash.get(hash)
    if (known !== undefined) return known
    const bytes = await this.level.get(Keys.blockNumber(hexToBytes(hash as `0x${string}`)))
    if (bytes === undefined) return undefined
    const number = decodeNumber(bytes)
    if (number > this.headInfo.number) return undefined
    this.numbersByHash.set(hash, number)
    return number
  }

  async blockByHash(hash: string): Promise<BlockRecord | undefined> {
    const number = await this.numberOfHash(hash)
    return number === undefined ? undefined : this.blockByNumber(number)
  }

  /**
   * A transaction of a recent block whose record is in memory, found without I/O; undefined means
   * "ask txLocation", not "unknown".
   */
  recentTx(hash: string): { block: BlockRecord; index: number } | undefined {
    const at = this.recentTxs.get(hash)
    if (at === undefined) return undefined
    const block = this.cache.get(at.number)
    return block === undefined ? undefined : { block, index: at.index }
  }

  /** Whether a transaction is known, without I/O, not to be mined by the head (see not-mined-txs.ts). */
  knownNotMined(hash: string): boolean {
    return this.notMined.has(hash)
  }

  /** Taken before a transaction is handed to the pool, and handed back to `acceptedNotMined`. */
  get notMinedEpoch(): number {
    return this.notMined.epoch
  }

  /** A transaction the pool accepted is not mined by the head it was handed over at (not-mined-txs.ts). */
  acceptedNotMined(hash: string, epoch: number): void {
    this.notMined.recordAccepted(hash, epoch)
  }

  async txLocation(hash: string): Promise<{ number: bigint; index: number } | undefined> {
    const recent = this.recentTxs.get(hash)
    if (recent !== undefined) return recent
    if (this.notMined.has(hash)) return undefined
    const epoch = this.notMined.epoch
    const bytes = await this.level.get(Keys.txLookup(hexToBytes(hash as `0x${string}`)))
    if (bytes === undefined) {
      this.notMined.recordMiss(hash, epoch)
      return undefined
    }
    const loc = decodeTxLookup(bytes)
    return loc.number <= this.headInfo.number ? loc : undefined
  }

  /** Blooms of the blocks with logs in a range, for log queries (one ordered range read). */
  async blooms(from: bigint, to: bigint): Promise<Array<{ number: bigint; bloom: Uint8Array }>> {
    const out: Array<{ number: bigint; bloom: Uint8Array }> = []
    for await (const [key, value] of this.level.iterator({ gte: Keys.bloom(from), lte: Keys.bloom(to) })) {
      out.push({ number: decodeNumber(key, 1), bloom: value })
    }
    return out
  }

  /** Blocks in [from, to] whose logs include this address or topic (the inverted log index). */
  async indexedBlocks(kind: 'address' | 'topic', item: Uint8Array, from: bigint, to: bigint): Promise<bigint[]> {
    const key = kind === 'address' ? Keys.logAddress : Keys.logTopic
    const out: bigint[] = []
    const offset = 1 + item.length
    for await (const k of this.level.keys({ gte: key(item, from), lte: key(item, to) })) out.push(decodeNumber(k, offset))
    return out
  }
}
