// Builds the explorer's indexes of the blocks a node wrote before it kept them: from the block below the
// mark (progress.ts) down to block 1, each block runs again on its parent's state in a scratch VM with a
// frame recorder, and its index entries go to the database in one batch with the lowered mark. It runs
// in the thread that writes the chain, only while that thread has no block to build, one block per turn
// of its event loop. A block whose parent state is no longer kept (--state-history) is indexed from its
// transactions' top-level fields, and the progress says how many were.

import { createBlockHeaderFromRLP } from '@ethereumjs/block'
import { Block } from '@ethereumjs/block'
import type { Common } from '@ethereumjs/common'
import { createTxFromRLP } from '@ethereumjs/tx'
import { runTx } from '@ethereumjs/vm'
import type { EVMMockBlockchainInterface } from '@ethereumjs/evm'
import { decodeBody } from '../chain/body.js'
import { decodeReceipts } from '../chain/receipts.js'
import type { ChainLevel } from '../chain/store/level.js'
import { Keys, Prefix } from '../chain/store/schema.js'
import { createNodeCache, ReadOnlyTrieDB } from '../chain/store/state-db.js'
import type { LevelOp } from '../chain/store/state-db.js'
import { writeBatch } from '../chain/store/write-batch.js'
import type { KeelConfig } from '../config/types.js'
import { blockHashSource } from '../evm/block-hashes.js'
import { fastCrypto } from '../evm/crypto.js'
import { createLogger } from '../logging/logger.js'
import { beforeTransactions } from '../chain/system-calls.js'
import { scratchVM } from '../exec/scratch-vm.js'
import { indexedTxs, pushIndexOps } from './block-indexes.js'
import { FrameRecorder } from './frames.js'
import type { TxFrames } from './frames.js'
import { indexedFrom, indexedFromOp, indexesComplete } from './progress.js'

export interface BackfillOptions {
  level: ChainLevel
  common: Common
  trieDb: ReadOnlyTrieDB
  blockchain: EVMMockBlockchainInterface
  keccak: (data: Uint8Array) => Uint8Array
  /** whether the writer has nothing else to do (no block to build) */
  idle(): boolean
  onProgress(progress: BackfillProgress): void
  onError(err: Error): void
}

export interface BackfillProgress {
  /** the lowest block from which the indexes are complete */
  from: bigint
  done: boolean
  /** blocks indexed from top-level fields, their parent state being gone */
  shallow: number
}

/** How often the progress is reported, in blocks. */
const REPORT_EVERY = 1_000
/** How long to wait for the writer to be idle before looking again. */
const BUSY_WAIT_MS = 50

export class IndexBackfill {
  private stopped = false
  private readonly running: Promise<void>

  constructor(private readonly opts: BackfillOptions) {
    // on a failure the indexes stay as they are (complete above the mark); the chain is not affected
    this.running = this.run().catch((err: unknown) => opts.onError(err as Error))
  }

  /** Stops after the block in progress; the mark stays where it got to. */
  async stop(): Promise<void> {
    this.stopped = true
    await this.running
  }

  /** Resolves once every block is indexed or stop() was called. */
  get done(): Promise<void> {
    return this.running
  }

  private async run(): Promise<void> {
    const { level } = this.opts
    let from = (await indexedFrom(level)) ?? 0n
    let shallow = 0
    if (indexesComplete(from)) return
    this.opts.onProgress({ from, done: false, shallow })
    const recorder = new FrameRecorder()
    while (!this.stopped && !indexesComplete(from)) {
      await new Promise((resolve) => setImmediate(resolve))
      if (!this.opts.idle()) {
        await new Promise((resolve) => setTimeout(resolve, BUSY_WAIT_MS))
        continue
      }
      const number = from - 1n
      const { ops, deep } = await this.blockOps(number, recorder)
      if (this.stopped) break
      ops.push(indexedFromOp(number))
      await writeBatch(level, ops)
      if (!deep) shallow++
      from = number
      if (indexesComplete(from) || from % BigInt(REPORT_EVERY) === 0n) this.opts.onProgress({ from, done: indexesComplete(from), shallow })
    }
  }

  /** The index entries of block `number`, from its frames when its parent's state is kept. */
  private async blockOps(number: bigint, recorder: FrameRecorder): Promise<{ ops: LevelOp[]; deep: boolean }> {
    const { level, keccak } = this.opts
    const [headerRlp, bodyRlp, receiptsRlp, parentRlp] = await level.getMany([Keys.header(number), Keys.body(number), Keys.receipts(number), Keys.header(number - 1n)])
    if (headerRlp === undefined || bodyRlp === undefined || receiptsRlp === undefined || parentRlp === undefined) {
      throw new Error(`block ${number} is not in the database`)
    }
    const body = decodeBody(bodyRlp)
    const receipts = decodeReceipts(receiptsRlp)
    const txs = indexedTxs(body.txs, body.senders, body.txs.map((raw) => keccak(raw)), receipts)
    const ops: LevelOp[] = []
    const frames = body.txs.length === 0 ? [] : await this.replay(headerRlp, parentRlp, body.txs, body.senders, recorder)
    pushIndexOps(ops, number, txs, frames)
    return { ops: await this.keepNewerCreators(ops), deep: frames !== undefined }
  }

  /**
   * Blocks are indexed newest first, so a creator entry already stored is of a later creation at the same
   * address (CREATE2 again after a selfdestruct): the current incarnation's, which stays.
   */
  private async keepNewerCreators(ops: LevelOp[]): Promise<LevelOp[]> {
    const creators = ops.filter((op) => op.key[0] === Prefix.creator)
    if (creators.length === 0) return ops
    const stored = await this.opts.level.getMany(creators.map((op) => op.key))
    const newer = new Set(creators.filter((_, i) => stored[i] !== undefined))
    return newer.size === 0 ? ops : ops.filter((op) => !newer.has(op))
  }

  /** Each transaction's frames, or undefined when the block cannot run again here. */
  private async replay(headerRlp: Uint8Array, parentRlp: Uint8Array, rawTxs: Uint8Array[], senders: Uint8Array[], recorder: FrameRecorder): Promise<TxFrames[] | undefined> {
    const common = this.opts.common.copy()
    const header = createBlockHeaderFromRLP(headerRlp, { common, setHardfork: true })
    common.setHardforkBy({ blockNumber: header.number, timestamp: header.timestamp })
    const parent = createBlockHeaderFromRLP(parentRlp, { common: common.copy(), setHardfork: true })
    let vm
    try {
      vm = await scratchVM(this.opts.trieDb, common, parent.stateRoot, this.opts.blockchain)
    } catch {
      return undefined
    }
    const block = new Block(header, [], [], common.isActivatedEIP(4895) ? [] : undefined, { common })
    recorder.attach(vm.evm)
    try {
      await beforeTransactions(vm, common, header)
      let gasUsed = 0n
      for (let i = 0; i < rawTxs.length; i++) {
        const tx = createTxFromRLP(rawTxs[i], { common })
        // the sender the block records (patches/@ethereumjs+tx): runTx does not recover it again
        ;(tx.cache as { keelSenderAddress?: Uint8Array }).keelSenderAddress = senders[i]
        recorder.beginTx()
        const result = await runTx(vm, { tx, block, blockGasUsed: gasUsed, skipHardForkValidation: true })
        recorder.endTx()
        gasUsed += result.totalGasSpent
      }
      return recorder.take()
    } catch {
      recorder.take()
      return undefined
    } finally {
      recorder.detach()
    }
  }
}

/** The builder on the writer's database, logging its progress; nothing to do on a chain indexed from its start. */
export function startIndexBackfill(config: KeelConfig, level: ChainLevel, common: Common, idle: () => boolean): IndexBackfill {
  const logger = createLogger(config.logLevel).child({ component: 'indexes' })
  return new IndexBackfill({
    level,
    common,
    trieDb: new ReadOnlyTrieDB(level, createNodeCache(10_000)),
    blockchain: blockHashSource((n) => level.get(Keys.canonicalHash(n))),
    keccak: fastCrypto().keccak256,
    idle,
    onProgress: ({ from, done, shallow }) => {
      if (done) logger.info('explorer indexes built for every block', { shallowBlocks: shallow })
      else logger.info('building the explorer indexes of older blocks; ots_searchTransactions* answers for blocks from the mark on', { indexedFrom: Number(from), shallowBlocks: shallow })
    },
    onError: (err) => logger.error('building the explorer indexes of older blocks failed; they stay incomplete below the mark', { err: err.message }),
  })
}
