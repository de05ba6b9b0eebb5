// The block producer: the only writer of the chain. It owns the txpool, seals blocks on a timer (or per
// arriving batch in automine mode) with the lean builder, and writes each block in one LevelDB batch.

import { createBlockHeaderFromRLP } from '@ethereumjs/block'
import type { BlockHeader } from '@ethereumjs/block'
import type { Common } from '@ethereumjs/common'
import type { EVMMockBlockchainInterface } from '@ethereumjs/evm'
import { createMPT } from '@ethereumjs/mpt'
import { Account, Address, bytesToHex, hexToBytes, ValueEncoding } from '@ethereumjs/util'
import type { KeelConfig } from '../config/types.js'
import { createChainCommon } from '../evm/common.js'
import type { GethGenesis } from '../evm/geth-genesis.js'
import { fastCrypto, loadFastCrypto } from '../evm/crypto.js'
import { assertEvmPatched } from '../evm/speedups.js'
import { importEthereumjsModule } from '../evm/evm-internals.js'
import type { CommonParams } from '../evm/params-memo.js'
import { blockHashSource } from '../evm/block-hashes.js'
import { FixedMerkleStateManager } from '../evm/state-manager.js'
import { RpcError, toShape } from '../errors.js'
import { encodeBody } from './body.js'
import { nextGasLimit } from './gas-limit.js'
import { genesisHeader } from './genesis-header.js'
import type { BuiltBlock } from './builder.js'
import type { BlockVM } from './block-vm.js'
import type { HeadInfo, NewBlockEvent, PoolQuery, TxWire } from './messages.js'
import { fromWire, toWire } from './pooled-tx.js'
import { pendingRpcTransaction } from './tx-object.js'
import type { PooledTx } from './pooled-tx.js'
import { encodeReceipts, encodeStoredReceipt } from './receipts.js'
import { pushBlockRecord } from './block-record.js'
import type { BlockWriteSet, WriteSetSink } from './write-set.js'
import type { ChainLevel } from './store/level.js'
import { decodeHead, decodeNumber, encodeHead, encodeNumber, Keys } from './store/schema.js'
import { createNodeCache, rawTrieKey, ReadOnlyTrieDB, trieKey, WritableTrieDB } from './store/state-db.js'
import type { LevelOp } from './store/state-db.js'
import { GroupCommit } from './store/group-commit.js'
import { StorageWriteError, WriteGuard } from './store/write-guard.js'
import { writeBatch } from './store/write-batch.js'
import { TimeSlicer } from '../util/time-slicer.js'
import type { Turns } from '../util/time-slicer.js'
import { joinRlpList } from '../util/rlp-list.js'
import { SEAL_TURN_MS } from './seal-turns.js'
import { storageUnavailable } from '../errors.js'
import type { StorageStatus } from './messages.js'
import { HeadAccountReader } from './head-account-reader.js'
import { yieldWhileWriting } from './store/yielding-trie.js'
import { StateDiffRecorder } from './state-diff.js'
import { BulkFlushStateManager } from './store/bulk-flush-sm.js'
import { builderCaches } from './store/builder-caches.js'
import { TxPool } from './txpool.js'
import type { BlockOrder } from './block-order.js'
import { trustedHexToBytes } from '../util/hex.js'
import { RLP } from '@ethereumjs/rlp'
import { FrameRecorder } from '../indexes/frames.js'
import { indexedPooledTxs, pushIndexOps } from '../indexes/block-indexes.js'
import { markIndexStart } from '../indexes/progress.js'

export interface ProducerEvents {
  onBlock(event: NewBlockEvent): void
  onPendingTx(hashes: string[]): void
  onFatal(message: string): void
  /** The database became unwritable or writable again (store/write-guard.ts). */
  onStorage?(status: StorageStatus): void
}

export interface ProducerOptions {
  /** Plain value transfers skip the EVM (default true; turned off only to compare both paths). */
  plainTransfers?: boolean
  /** Receives each block's write set (the block stream's publisher, with --stream-url). */
  writeSets?: WriteSetSink
}

const BLOCKHASH_WINDOW = 256
const PRUNE_MARGIN_BLOCKS = 16n

export function headInfo(header: BlockHeader): HeadInfo {
  return {
    number: header.number,
    hash: bytesToHex(header.hash()),
    timestamp: header.timestamp,
    baseFeePerGas: header.baseFeePerGas ?? 0n,
    gasLimit: header.gasLimit,
    gasUsed: header.gasUsed,
    stateRoot: bytesToHex(header.stateRoot),
  }
}

export class Producer {
  private head!: BlockHeader
  private sealing: Promise<void> | undefined
  private blockVMLoading: Promise<BlockVM> | undefined
  /** Pending while a block's transactions have left the pool and its event is not posted yet (see query). */
  private poolSettling: Promise<void> | undefined
  private sealAgain = false
  private timer: NodeJS.Timeout | undefined
  /** when the next tick is due (Date.now() ms) */
  private tickDueAt = 0
  /** the slot of the last block built (Date.now() ms): a block built ahead takes a later one */
  private lastSlotAt = 0
  /** the order of the block being built (ended early by close()) */
  private order: BlockOrder | undefined
  private closed = false
  private readonly journal: GroupCommit
  /** Stops sealing and submissions while the database cannot be written; resumes them. */
  readonly writes: WriteGuard
  private extraData = new Uint8Array(0)
  private coinbase = new Address(new Uint8Array(20))
  /** call frames of the block being built, for the explorer's indexes */
  private readonly frames = new FrameRecorder()

  private constructor(
    private readonly config: KeelConfig,
    private readonly level: ChainLevel,
    readonly common: Common,
    private readonly trieDb: WritableTrieDB,
    private readonly sm: BulkFlushStateManager,
    private readonly blockchain: EVMMockBlockchainInterface,
    private readonly reader: HeadAccountReader,
    private readonly diffs: StateDiffRecorder,
    private readonly recentHashes: Map<bigint, Uint8Array>,
    readonly pool: TxPool,
    private readonly events: ProducerEvents,
    private readonly options: ProducerOptions,
  ) {
    this.journal = new GroupCommit(level, (err) => this.writes.writeFailed(err))
    this.writes = new WriteGuard(level.location, config.minFreeDisk * 1024 * 1024, {
      probe: () => level.batch([{ type: 'del', key: Keys.meta('write-probe') }]),
      onChange: (status) => events.onStorage?.(status),
      onResume: () => this.scheduleSeal(),
    })
  }

  static async open(
    config: KeelConfig,
    genesis: GethGenesis,
    level: ChainLevel,
    events: ProducerEvents,
    options: ProducerOptions = {},
  ): Promise<Producer> {
    const crypto = await loadFastCrypto()
    assertEvmPatched()
    // the VM's parameters alone (not the package): the chain's Common is primed with them before any copy is made
    const { paramsVM } = await importEthereumjsModule<{ paramsVM: CommonParams }>('@ethereumjs/vm', 'params.js')
    const common = createChainCommon(genesis, crypto.customCrypto, paramsVM)
    const nodeCache = createNodeCache(50_000)
    const trieDb = new WritableTrieDB(level, nodeCache, config.stateHistory > 0)
    const trie = await createMPT({
      db: trieDb,
      useKeyHashing: true,
      common,
      valueEncoding: ValueEncoding.Bytes,
      useNodePruning: config.stateHistory > 0,
    })
    // the bulk flush (archive mode) applies the account writes at once; the MPT path writes them one by one
    if (config.stateHistory > 0) yieldWhileWriting(trie)
    const sm = new BulkFlushStateManager({ trie, common, prefixStorageTrieKeys: true, caches: builderCaches() })
    const diffs = new StateDiffRecorder()
    diffs.attach(trie, sm)
    const committedNodes = new ReadOnlyTrieDB(level, nodeCache)
    // get(), not fetch(): the raw node cache holds what the producer just wrote, the new head's nodes
    const reader = new HeadAccountReader({ fetch: (key) => committedNodes.get(key) }, crypto.keccak256)
    const recentHashes = new Map<bigint, Uint8Array>()
    const blockchain = blockHashSource(async (n) => recentHashes.get(n) ?? (await level.get(Keys.canonicalHash(n))))
    const producer = new Producer(
      config,
      level,
      common,
      trieDb,
      sm,
      blockchain,
      reader,
      diffs,
      recentHashes,
      new TxPool({
        maxSlots: config.txpoolMaxSlots,
        maxQueuedPerAccount: config.txpoolMaxQueuedPerAccount,
        maxPendingPerAccount: config.txpoolMaxPendingPerAccount,
        priceBumpPercent: config.txpoolPriceBumpPercent,
        lifetimeMs: config.txpoolLifetimeSeconds * 1000,
      }),
      events,
      options,
    )
    if (genesis.coinbase !== undefined) producer.coinbase = new Address(hexToBytes(genesis.coinbase as `0x${string}`))
    await producer.initChain(genesis, sm)
    diffs.discard()
    await producer.restorePool()
    return producer
  }

  /** No block is being sealed and none of the pool's transactions could go in one. */
  get idle(): boolean {
    return this.sealing === undefined && this.pool.status().pending === 0
  }

  get headHeader(): BlockHeader {
    return this.head
  }

  get hardfork(): string {
    return this.common.hardfork()
  }

  /** The senders with transactions in the pool (those restored from the journal, at start). */
  pooledSenders(): string[] {
    return this.pool.senderAddresses()
  }

  private async initChain(genesis: GethGenesis, sm: FixedMerkleStateManager): Promise<void> {
    const stored = await this.level.get(Keys.meta('head'))
    if (stored === undefined) {
      await this.writeGenesis(genesis, sm)
    } else {
      const { number } = decodeHead(stored)
      const headerRlp = await this.level.get(Keys.header(number))
      if (headerRlp === undefined) throw new Error(`database corrupt: head block ${number} has no header`)
      this.head = createBlockHeaderFromRLP(headerRlp, { common: this.common, setHardfork: true })
      await sm.setStateRoot(this.head.stateRoot)
      for (let n = number; n >= 0n && n > number - BigInt(BLOCKHASH_WINDOW); n--) {
        const hash = await this.level.get(Keys.canonicalHash(n))
        if (hash !== undefined) this.recentHashes.set(n, hash)
      }
    }
    await markIndexStart(this.level, this.head.number)
    this.common.setHardforkBy({ blockNumber: this.head.number, timestamp: this.head.timestamp })
    this.reader.setRoot(this.head.stateRoot)
  }

  private async writeGenesis(genesis: GethGenesis, sm: FixedMerkleStateManager): Promise<void> {
    const big = (v: string | undefined, fallback = 0n): bigint => (v === undefined ? fallback : BigInt(v))
    this.trieDb.capture()
    await sm.checkpoint()
    for (const [addr, acct] of Object.entries(genesis.alloc)) {
      const address = new Address(hexToBytes((addr.startsWith('0x') ? addr : `0x${addr}`) as `0x${string}`))
      await sm.putAccount(address, new Account(big(acct.nonce), big(acct.balance)))
      if (acct.code !== undefined && acct.code !== '0x' && acct.code !== '') {
        await sm.putCode(address, hexToBytes((acct.code.startsWith('0x') ? acct.code : `0x${acct.code}`) as `0x${string}`))
      }
      for (const [slot, value] of Object.entries(acct.storage ?? {})) {
        const key = hexToBytes(`0x${slot.replace(/^0x/, '').padStart(64, '0')}`)
        const val = hexToBytes(`0x${value.replace(/^0x/, '').padStart(64, '0')}`)
        await sm.putStorage(address, key, val)
      }
    }
    const stateRoot = await sm.getStateRoot()
    await sm.commit()
    const header = genesisHeader(genesis, this.common, stateRoot)
    const trie = await this.trieOps(0n)
    const ops = [...trie.nodes, ...trie.prune]
    const hash = header.hash()
    ops.push(
      { type: 'put', key: Keys.canonicalHash(0n), value: hash },
      { type: 'put', key: Keys.blockNumber(hash), value: encodeNumber(0n) },
      { type: 'put', key: Keys.header(0n), value: header.serialize() },
      { type: 'put', key: Keys.body(0n), value: encodeBody([], []) },
      { type: 'put', key: Keys.receipts(0n), value: encodeReceipts([]) },
      { type: 'put', key: Keys.meta('genesis'), value: hash },
      { type: 'put', key: Keys.meta('config'), value: new TextEncoder().encode(JSON.stringify(genesis)) },
      { type: 'put', key: Keys.meta('head'), value: encodeHead(0n, hash) },
    )
    await this.level.batch(ops)
    this.trieDb.release()
    this.head = header
    this.recentHashes.set(0n, hash)
  }

  private async restorePool(): Promise<void> {
    const journaled: Array<{ key: Uint8Array; ptx: PooledTx }> = []
    for await (const [key, value] of this.level.iterator(Keys.pooledTxRange)) {
      try {
        journaled.push({ key, ptx: fromWire(decodeWire(value)) })
      } catch {
        await this.level.del(key)
      }
    }
    // each sender's in nonce order: the journal is keyed by hash, and the pool refuses a transaction
    // more than maxQueuedPerAccount nonces past what it holds of the sender (so a sender with more
    // pooled than that would lose the ones restored ahead of their predecessors)
    journaled.sort((a, b) => compareSenderNonce(a.ptx, b.ptx))
    let restored = 0
    for (const { key, ptx } of journaled) {
      try {
        await this.pool.add(ptx, this.reader, this.nextBaseFee())
        restored++
      } catch {
        await this.level.del(key)
      }
    }
    if (restored > 0) this.scheduleSeal()
  }

  /**
   * The block's trie writes as LevelDB ops. With --state-history, each written node also records the
   * block that wrote it, the nodes the block superseded are listed under the block, and the list of the
   * block that just fell out of the window is pruned: a listed node is deleted unless a later block wrote
   * it again (content-addressed nodes come back when state returns to an earlier value).
   */
  private async trieOps(number: bigint, turns?: Turns): Promise<{ nodes: LevelOp[]; prune: LevelOp[] }> {
    const { ops: nodes, superseded } = this.trieDb.takeCaptured()
    const ops: LevelOp[] = []
    const done = { nodes, prune: ops }
    const history = BigInt(this.config.stateHistory)
    if (history === 0n) return done
    const numberBytes = encodeNumber(number)
    for (const node of nodes) {
      if (turns?.due) await turns.turn()
      ops.push({ type: 'put', key: Keys.lastWritten(rawTrieKey(node.key)), value: numberBytes })
    }
    if (superseded.length > 0) ops.push({ type: 'put', key: Keys.superseded(number), value: RLP.encode(superseded) })
    // prune a little later than the window RPC serves, so that a request already running on the
    // oldest served state, or a view one block behind the producer, never finds a node gone
    const expiring = number - history - PRUNE_MARGIN_BLOCKS
    if (expiring <= 0n) return done
    const listed = await this.level.get(Keys.superseded(expiring))
    if (listed === undefined) return done
    const keys = RLP.decode(listed) as unknown as Uint8Array[]
    const lastWritten = await this.level.getMany(keys.map((k) => Keys.lastWritten(k)))
    const rewrittenNow = new Set(nodes.map((node) => bytesToHex(rawTrieKey(node.key))))
    for (let i = 0; i < keys.length; i++) {
      if (turns?.due) await turns.turn()
      const last = lastWritten[i]
      if (rewrittenNow.has(bytesToHex(keys[i])) || (last !== undefined && decodeNumber(last) > expiring)) continue
      ops.push({ type: 'del', key: trieKey(bytesToHex(keys[i]).slice(2)) }, { type: 'del', key: Keys.lastWritten(keys[i]) })
    }
    ops.push({ type: 'del', key: Keys.superseded(expiring) })
    return done
  }

  start(): void {
    if (this.config.blockTime > 0 && !this.config.noSeal) this.scheduleTick()
  }

  private nextBaseFee(): bigint {
    return this.head.calcNextBaseFee()
  }

  private scheduleTick(): void {
    if (this.closed) return
    const intervalMs = this.config.blockTime * 1000
    const now = Date.now()
    // ticks keep to a fixed grid: a block built ahead is stamped with its slot's second (nextSlot()), and
    // a grid that drifted with each late timer would skip a second now and then; after a stall, one
    // late tick fires at once and the rest of the missed ones are skipped
    let due = this.tickDueAt === 0 ? now + intervalMs : this.tickDueAt + intervalMs
    while (due + intervalMs <= now) due += intervalMs
    this.tickDueAt = due
    this.timer = setTimeout(() => this.onTick(), Math.max(0, due - now))
  }

  private onTick(): void {
    const hasWork = this.pool.status().pending > 0
    const idleFor = Date.now() / 1000 - Number(this.head.timestamp)
    const emptyDue = this.config.emptyBlockPeriod > 0 && idleFor >= this.config.emptyBlockPeriod - 0.001
    if ((hasWork || emptyDue) && this.writes.writable) void this.seal(this.nextSlot())
    this.scheduleTick()
  }

  /**
   * Automine: one block per arriving batch; arrivals during a build go into the next block. With a
   * block time: the next slot's block starts building now if none is (block-order.ts).
   */
  private scheduleSeal(): void {
    if (this.config.noSeal || this.closed) return
    if (this.config.blockTime > 0) {
      if (this.sealing === undefined && this.buildsAhead() && this.pool.status().pending > 0) void this.seal(this.nextSlot())
      return
    }
    if (this.sealing !== undefined) {
      this.sealAgain = true
      return
    }
    setImmediate(() => void this.seal())
  }

  /** A block time, ticks running (start()), and the database writable. */
  private buildsAhead(): boolean {
    return this.config.blockTime > 0 && this.timer !== undefined && !this.closed && this.writes.writable
  }

  /**
   * The first tick more than half a block time after the last block's slot: a build that ends before
   * its slot's tick has fired sees that tick still due, and a tick that fires late is still the same slot.
   */
  private nextSlot(): number {
    const intervalMs = this.config.blockTime * 1000
    let at = this.tickDueAt
    while (at <= this.lastSlotAt + intervalMs / 2) at += intervalMs
    return at
  }

  /** `nextBlock`: automine only, the transaction can go in the block sealed next (no nonce gap, pays the base fee). */
  async submit(wire: TxWire): Promise<{ hash: string; nextBlock: boolean }> {
    if (this.closed) throw new RpcError(-32000, 'node is shutting down')
    this.writes.assertWritable()
    const ptx = fromWire(wire)
    const result = await this.pool.add(ptx, this.reader, this.nextBaseFee())
    // journal it so that a crash or restart does not lose a transaction whose hash we returned
    const ops: LevelOp[] = [{ type: 'put', key: Keys.pooledTx(trustedHexToBytes(ptx.hash)), value: encodeWire(toWire(ptx)) }]
    for (const gone of [...(result.replaced ? [result.replaced] : []), ...result.removed]) {
      ops.push({ type: 'del', key: Keys.pooledTx(trustedHexToBytes(gone.hash)) })
    }
    try {
      await this.journal.write(ops)
    } catch (err) {
      // not journalled, so not acknowledged: it leaves the pool, and what it pushed out comes back
      throw this.unjournalled(ptx, result, err)
    }
    this.events.onPendingTx([ptx.hash])
    this.scheduleSeal()
    const nextBlock = this.config.blockTime === 0 && !this.config.noSeal && this.pool.pendingAt(ptx.sender, ptx.nonce) === ptx && ptx.maxFeePerGas >= this.nextBaseFee()
    return { hash: ptx.hash, nextBlock }
  }

  private unjournalled(ptx: PooledTx, result: { replaced?: PooledTx; removed: PooledTx[] }, err: unknown): Error {
    this.pool.remove(ptx.hash)
    for (const back of [...(result.replaced ? [result.replaced] : []), ...result.removed]) {
      this.pool.add(back, this.reader, this.nextBaseFee()).catch(() => {})
    }
    this.writes.writeFailed(err)
    return storageUnavailable(this.writes.status().reason ?? 'a database write failed')
  }

  /**
   * Answers reflect the pool before a block or after its event is posted, never in between: an answer
   * posted once the block's transactions had left the pool but ahead of the block event would reach the
   * main thread before the block does, and a mined transaction would be neither in its index nor in the
   * pool's answer.
   */
  async query(query: PoolQuery): Promise<unknown> {
    if (this.poolSettling !== undefined) await this.poolSettling
    switch (query.q) {
      case 'status':
        return this.pool.status()
      case 'content':
        return this.pool.content((ptx) => pendingRpcTransaction(ptx, this.common))
      case 'inspect':
        return this.pool.inspect()
      case 'contentFrom':
        return this.pool.contentFrom(query.address, (ptx) => pendingRpcTransaction(ptx, this.common))
      case 'nonces':
        return Promise.all(query.addresses.map(async (address) => this.pool.pendingNonce(address, await this.reader.getNonce(address))))
      case 'get': {
        const ptx = this.pool.get(query.hash)
        return ptx === undefined ? null : toWire(ptx)
      }
      case 'pendingHashes':
        return this.pool.pendingHashes()
    }
  }

  /**
   * The VM blocks are built with (block-vm.ts), loaded on the first call: the producer thread asks for it
   * once the ready message is posted, and a block sealed before it has loaded waits for it.
   */
  blockVM(): Promise<BlockVM> {
    this.blockVMLoading ??= import('./block-vm.js').then(({ loadBlockVM }) => loadBlockVM(this.common, this.sm, this.blockchain))
    return this.blockVMLoading
  }

  /**
   * Seals one block; concurrent calls coalesce. `slotAt` (Date.now() ms, default now): the block's slot,
   * which sets its timestamp; a block built ahead of it takes arrivals until then and is sealed then.
   */
  seal(slotAt = Date.now()): Promise<void> {
    if (this.sealing !== undefined) {
      this.sealAgain = true
      return this.sealing
    }
    let sealed = false
    const sealing = this.sealOnce(slotAt)
      .then(() => {
        sealed = true
      })
      .catch((err: unknown) =>
        // a failed write stops sealing until the write guard's retry succeeds; anything else is a bug
        err instanceof StorageWriteError ? this.writes.writeFailed(err) : this.events.onFatal(`block production failed: ${(err as Error).stack ?? err}`),
      )
      .finally(() => {
        this.sealing = undefined
        const again = this.sealAgain
        this.sealAgain = false
        if (!sealed) return
        // with a block time the next slot's block starts now, so what is pending (and what arrives)
        // goes in as it comes; a slot passed during this build is sealed as soon as it is built
        if (this.config.blockTime > 0) this.scheduleSeal()
        else if (again && this.pool.status().pending > 0) void this.seal()
      })
    this.sealing = sealing
    return sealing
  }

  private async sealOnce(slotAt: number): Promise<void> {
    if (this.closed || !this.writes.writable) return
    const parent = this.head
    this.lastSlotAt = slotAt
    const slotSec = BigInt(Math.floor(slotAt / 1000))
    const timestamp = slotSec > parent.timestamp ? slotSec : parent.timestamp + 1n
    const baseFee = parent.calcNextBaseFee()
    const candidates = this.pool.orderForBlock(baseFee, this.config.blockTime > 0 ? slotAt : undefined)
    this.order = candidates
    this.trieDb.capture()
    let built: BuiltBlock
    const buildStartedAt = performance.now()
    try {
      const { vm, buildBlock } = await this.blockVM()
      built = await buildBlock(vm, this.common, {
        parent,
        candidates,
        timestamp,
        coinbase: this.coinbase,
        gasLimit: nextGasLimit(parent.gasLimit, this.config.blockGasLimit),
        extraData: this.extraData,
        plainTransfers: this.options.plainTransfers,
        frames: this.frames,
      })
      // not sealed before its slot; what arrives meanwhile goes in the next block
      await candidates.deadline()
    } catch (err) {
      this.pool.built(candidates)
      this.order = undefined
      await this.dropBuild(parent)
      throw err
    }
    this.pool.built(candidates)
    this.order = undefined
    if (Date.now() < slotAt) {
      // closing before the slot (close() ended the wait): no block ahead of its time; the transactions
      // stay in the pool's journal for the next start
      await this.dropBuild(parent)
      return
    }
    await this.commitBlock(built, performance.now() - buildStartedAt - candidates.waitedMs)
  }

  /** Forgets a block built but not committed: its recorded frames, trie nodes, state diff and state. */
  private async dropBuild(parent: BlockHeader): Promise<void> {
    this.frames.take()
    this.trieDb.discard()
    this.diffs.discard()
    await this.sm.setStateRoot(parent.stateRoot, true)
  }

  private async commitBlock(built: BuiltBlock, buildMs: number): Promise<void> {
    const commitStartedAt = performance.now()
    // the commit (encodings, block record, indexes, the batch's operations) ran 110-160 ms for 2,000 ERC20
    // transfers without waiting on I/O: submissions get turns in it instead of waiting for all of it
    const turns = new TimeSlicer(SEAL_TURN_MS)
    const { header, receipts, included, invalid } = built
    const number = header.number
    const hash = header.hash()
    const headerRlp = header.serialize()
    // loops rather than closures made per block: see StorageTrieNodes (store/bulk-flush-sm.ts)
    const senders: Uint8Array[] = new Array(included.length)
    const txHashes: string[] = new Array(included.length)
    const txHashBytes: Uint8Array[] = new Array(included.length)
    for (let i = 0; i < included.length; i++) {
      senders[i] = trustedHexToBytes(included[i].sender)
      txHashes[i] = included[i].hash
      txHashBytes[i] = trustedHexToBytes(txHashes[i])
    }
    const bodyRlp = encodeBody(built.encodedTxs, senders)
    const receiptItems: Uint8Array[] = new Array(receipts.length)
    for (let i = 0; i < receipts.length; i++) {
      if (turns.due) await turns.turn()
      receiptItems[i] = encodeStoredReceipt(receipts[i])
    }
    const receiptsRlp = joinRlpList(receiptItems)
    if (turns.due) await turns.turn()
    const trie = await this.trieOps(number, turns)
    const ops: LevelOp[] = [...trie.nodes, ...trie.prune]
    await pushBlockRecord(ops, {
      number,
      hash,
      headerRlp,
      bodyRlp,
      receiptsRlp,
      txHashes: txHashBytes,
      receipts,
      logsBloom: header.logsBloom,
    }, turns)
    if (turns.due) await turns.turn()
    const frames = this.frames.take()
    pushIndexOps(ops, number, indexedPooledTxs(included, senders, txHashBytes, receipts), frames)
    for (let i = 0; i < txHashBytes.length; i++) {
      if (turns.due) await turns.turn()
      ops.push({ type: 'del', key: Keys.pooledTx(txHashBytes[i]) })
    }
    for (const ptx of invalid) ops.push({ type: 'del', key: Keys.pooledTx(trustedHexToBytes(ptx.hash)) })
    if (turns.due) await turns.turn()
    // taken before the batch: a sink's outbox entry holds it; a failed batch discards it as before
    const stateDiff = this.diffs.take(this.head.stateRoot, header.stateRoot)
    const writeSet: BlockWriteSet | undefined =
      this.options.writeSets === undefined
        ? undefined
        : { number, hash, headerRlp, bodyRlp, receiptsRlp, trieNodes: trie.nodes, pruneOps: trie.prune, stateDiff, frames, committedAt: Date.now() }
    if (writeSet !== undefined) ops.push(...this.options.writeSets!.prepare(writeSet))
    // pool journal writes of transactions in this block must land before their deletion below
    await this.journal.flush()
    const writeStartedAt = performance.now()
    try {
      // a journal write that just failed took its transactions out of the pool, not out of this block;
      // a disk found full since the build began: the block is dropped, and built again on resuming
      if (!this.writes.writable) throw new StorageWriteError()
      await writeBatch(this.level, ops, turns)
    } catch (err) {
      this.trieDb.discard()
      this.diffs.discard()
      await this.sm.setStateRoot(this.head.stateRoot, true)
      throw err instanceof StorageWriteError ? err : new StorageWriteError(err)
    }
    if (writeSet !== undefined) this.options.writeSets!.committed(writeSet)
    const writeMs = performance.now() - writeStartedAt
    this.trieDb.release()
    this.head = header
    this.recentHashes.set(number, hash)
    this.recentHashes.delete(number - BigInt(BLOCKHASH_WINDOW) - 1n)
    this.reader.setRoot(header.stateRoot)
    let settled!: () => void
    this.poolSettling = new Promise<void>((resolve) => (settled = resolve))
    try {
      const evicted = await this.pool.onBlock(included, invalid, this.reader, header.calcNextBaseFee())
      if (evicted.length > 0) {
        // the block is written and must still be announced; a journal entry left behind is refused at restart
        await this.level.batch(evicted.map((p) => ({ type: 'del' as const, key: Keys.pooledTx(trustedHexToBytes(p.hash)) }))).catch((err: unknown) => this.writes.writeFailed(err))
      }
      const stats = { buildMs, commitMs: performance.now() - commitStartedAt, writeMs, droppedTxs: invalid.length, plainTransfers: built.plainTransfers }
      // the pool's senders as of this message: taken when it is posted, after the block's transactions left
      const pooledSenders = this.pool.senderAddresses()
      this.events.onBlock({ kind: 'block', head: headInfo(header), headerRlp, bodyRlp, receiptsRlp, txHashes, stats, stateDiff, pooledSenders })
    } finally {
      this.poolSettling = undefined
      settled()
    }
  }

  /** Stops sealing, lets a block past its slot finish (one built ahead is dropped), and leaves the pool journalled on disk. */
  async close(): Promise<void> {
    this.closed = true
    this.writes.close()
    if (this.timer !== undefined) clearTimeout(this.timer)
    // a block built ahead of its slot is dropped, not sealed early
    this.order?.end()
    if (this.sealing !== undefined) await this.sealing
    await this.journal.flush()
  }
}

export function encodeWire(wire: TxWire): Uint8Array {
  return RLP.encode([wire.raw, trustedHexToBytes(wire.sender), wire.senderPubKey, BigInt(wire.arrivedAt)])
}

export function decodeWire(bytes: Uint8Array): TxWire {
  const [raw, sender, pub, arrived] = RLP.decode(bytes) as unknown as Uint8Array[]
  let arrivedAt = 0
  for (const b of arrived) arrivedAt = arrivedAt * 256 + b
  return { raw, sender: bytesToHex(sender), senderPubKey: pub, arrivedAt, hash: bytesToHex(fastCrypto().keccak256(raw)) }
}

export const errorShape = (err: unknown) =>
  err instanceof RpcError ? toShape(err) : { code: -32603, message: (err as Error)?.message ?? String(err) }

function compareSenderNonce(a: PooledTx, b: PooledTx): number {
  if (a.sender !== b.sender) return a.sender < b.sender ? -1 : 1
  return a.nonce < b.nonce ? -1 : a.nonce > b.nonce ? 1 : 0
}
