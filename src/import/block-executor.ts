// `keel import`'s execution of each block of a chain file on its parent's state, checked against its
// header (chain/block-check.ts). The state's writes are held back (the trie DB's capture) and handed out
// with the block's other keys, so that the block and its state reach the database in one batch, as a
// sealed block does, with the block's explorer index entries (src/indexes/) from the frames its
// transactions ran.

import { createBlockFromRLP } from '@ethereumjs/block'
import type { Block, BlockHeader } from '@ethereumjs/block'
import type { Common } from '@ethereumjs/common'
import type { EVMMockBlockchainInterface } from '@ethereumjs/evm'
import { createMPT } from '@ethereumjs/mpt'
import { bytesToHex, ValueEncoding } from '@ethereumjs/util'
import { createVM } from '@ethereumjs/vm'
import type { VM } from '@ethereumjs/vm'
import type { ChainLevel } from '../chain/store/level.js'
import type { LevelOp } from '../chain/store/state-db.js'
import { createNodeCache, WritableTrieDB } from '../chain/store/state-db.js'
import { encodeBody } from '../chain/body.js'
import { encodeReceipts } from '../chain/receipts.js'
import type { ReceiptRecord, StoredLog } from '../chain/receipts.js'
import type { BlockRecord } from '../chain/block-record.js'
import { BulkFlushStateManager } from '../chain/store/bulk-flush-sm.js'
import { builderCaches } from '../chain/store/builder-caches.js'
import { BlockMismatch, runCheckedBlock } from '../chain/block-check.js'
import { indexedTxs, pushIndexOps } from '../indexes/block-indexes.js'
import { FrameRecorder, recordTransactions } from '../indexes/frames.js'
import { ImportError } from './import-error.js'

/** Trie nodes kept decoded between blocks (the state caches' bounds: builder-caches.ts). */
const NODE_CACHE = 100_000

export interface ExecutedBlock {
  record: BlockRecord
  /** the block's trie writes (nodes and code), with the table prefix */
  trieOps: LevelOp[]
  /** the block's explorer index entries (address appearances, sender and nonce, creators) */
  indexOps: LevelOp[]
  gasUsed: bigint
  txCount: number
}

export class BlockExecutor {
  private readonly recorder = new FrameRecorder()

  private constructor(
    private readonly common: Common,
    private readonly trieDb: WritableTrieDB,
    private readonly vm: VM,
  ) {}

  static async open(level: ChainLevel, common: Common, blockchain: EVMMockBlockchainInterface, headStateRoot: Uint8Array): Promise<BlockExecutor> {
    // the producer's trie layout and state manager (producer.ts open): hashed keys, storage tries prefixed
    // by account, a block's writes applied to the tries in bulk (a third less time than insert by insert
    // on bench/macro/import.js --quick)
    const trieDb = new WritableTrieDB(level, createNodeCache(NODE_CACHE))
    const trie = await createMPT({ db: trieDb, useKeyHashing: true, common, valueEncoding: ValueEncoding.Bytes })
    const sm = new BulkFlushStateManager({ trie, common, prefixStorageTrieKeys: true, caches: builderCaches() })
    await sm.setStateRoot(headStateRoot)
    const vm = await createVM({ common: common.copy(), stateManager: sm, blockchain, setHardfork: true })
    return new BlockExecutor(common, trieDb, vm)
  }

  /** Decodes a block with the fork rules of its number and time. */
  decode(rlp: Uint8Array, at: string): Block {
    try {
      return createBlockFromRLP(rlp, { common: this.common, setHardfork: true })
    } catch (err) {
      throw new ImportError(`${at}: not a valid block: ${(err as Error).message}`)
    }
  }

  /**
   * Executes `block` on `parent`'s state (the state the executor last left, which the caller has checked
   * is the parent's) and returns its database keys; throws an ImportError naming the first field of the
   * header that execution does not give, with nothing written.
   */
  async execute(block: Block, parent: BlockHeader): Promise<ExecutedBlock> {
    const header = block.header
    const at = `block ${header.number} (${bytesToHex(block.hash())})`
    const senders: Uint8Array[] = []
    for (let i = 0; i < block.transactions.length; i++) {
      try {
        senders.push(block.transactions[i].getSenderAddress().bytes)
      } catch (err) {
        throw new ImportError(`${at}: transaction ${i} has no valid signature: ${(err as Error).message}`, header.number)
      }
    }

    this.trieDb.capture()
    const stopRecording = recordTransactions(this.vm, this.recorder)
    let result
    try {
      result = await runCheckedBlock(this.vm, block, parent)
    } catch (err) {
      // the state moved on in the VM: back to the parent's, so that the executor can be closed or reused
      this.trieDb.discard()
      this.recorder.take()
      await this.vm.stateManager.setStateRoot(parent.stateRoot, true)
      if (err instanceof BlockMismatch) throw new ImportError(err.message, err.number)
      throw err
    } finally {
      stopRecording()
    }
    const frames = this.recorder.take()
    const receipts: ReceiptRecord[] = result.receipts.map((r) => {
      const withStatus = r as { status?: 0 | 1; stateRoot?: Uint8Array }
      return {
        status: withStatus.status ?? 1,
        ...(withStatus.stateRoot !== undefined ? { root: withStatus.stateRoot } : {}),
        cumulativeGasUsed: r.cumulativeBlockGasUsed,
        logs: r.logs as StoredLog[],
      }
    })
    const { ops } = this.trieDb.takeCaptured()
    const txHashes = block.transactions.map((tx) => tx.hash())
    const indexOps: LevelOp[] = []
    pushIndexOps(indexOps, header.number, indexedTxs(block.transactions.map((tx) => tx.serialize()), senders, txHashes, receipts), frames)
    const bodyRlp = encodeBody(
      block.transactions.map((tx) => tx.serialize()),
      senders,
      { uncles: block.uncleHeaders.map((u) => u.serialize()), withdrawals: (block.withdrawals ?? []).map((w) => w.raw() as Uint8Array[]) },
    )
    return {
      record: {
        number: header.number,
        hash: block.hash(),
        headerRlp: header.serialize(),
        bodyRlp,
        receiptsRlp: encodeReceipts(receipts),
        txHashes,
        receipts,
        logsBloom: header.logsBloom,
      },
      trieOps: ops,
      indexOps,
      gasUsed: header.gasUsed,
      txCount: block.transactions.length,
    }
  }

  /** After the block's batch is on disk: its trie nodes join the node cache. */
  written(): void {
    this.trieDb.release()
  }

}
