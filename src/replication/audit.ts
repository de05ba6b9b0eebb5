// --replica-verify execute: a replica runs every block itself, on its own state of the parent block, before
// the block is applied, and refuses it unless it checks out against its header field by field, as
// `keel import` checks a block from a chain file (chain/block-check.ts: state, receipts and transactions
// roots, bloom, gas, base fee, requests hash), every receipt comes out as the producer's, and every
// transaction's call frames (the explorer's indexes) as the producer recorded them. The default checks
// (verify.ts) take the state root and the frames on the producer's word; this takes nothing on trust, at
// the cost of executing every block again (the producer's own cost of building it: bench/README.md).

import { Block, createBlockHeaderFromRLP } from '@ethereumjs/block'
import type { Common } from '@ethereumjs/common'
import { createTxFromRLP } from '@ethereumjs/tx'
import { bytesToHex, equalsBytes } from '@ethereumjs/util'
import { BlockMismatch, runCheckedBlock } from '../chain/block-check.js'
import type { ChainLevel } from '../chain/store/level.js'
import { Keys } from '../chain/store/schema.js'
import { createNodeCache, ReadOnlyTrieDB } from '../chain/store/state-db.js'
import { blockHashSource } from '../evm/block-hashes.js'
import { scratchVM } from '../exec/scratch-vm.js'
import { FrameRecorder, recordTransactions } from '../indexes/frames.js'
import type { TxFrames } from '../indexes/frames.js'
import { ReplicationError } from './errors.js'
import type { VerifiedBlock } from './verify.js'

export function blockAuditor(level: ChainLevel, common: Common): (block: VerifiedBlock) => Promise<void> {
  const trieDb = new ReadOnlyTrieDB(level, createNodeCache(50_000))
  const blockchain = blockHashSource((n) => level.get(Keys.canonicalHash(n)))
  return async (verified) => {
    const header = verified.header
    const at = `block ${header.number} (${bytesToHex(verified.hash)})`
    const parentRlp = await level.get(Keys.header(header.number - 1n))
    if (parentRlp === undefined) throw new ReplicationError('state-root-mismatch', `${at}: its parent's header is not in the database`)
    const blockCommon = common.copy()
    const parent = createBlockHeaderFromRLP(parentRlp, { common: blockCommon.copy(), setHardfork: true })
    blockCommon.setHardforkBy({ blockNumber: header.number, timestamp: header.timestamp })
    // the scratch VM's writes stay in memory and go with it: the block's own trie nodes come with it
    const vm = await scratchVM(trieDb, blockCommon, parent.stateRoot, blockchain)
    const txs = verified.body.txs.map((raw) => createTxFromRLP(raw, { common: blockCommon }))
    for (let i = 0; i < txs.length; i++) {
      // the sender recovered here, not the one the body records
      if (!equalsBytes(txs[i].getSenderAddress().bytes, verified.body.senders[i])) {
        throw new ReplicationError('state-root-mismatch', `${at}: transaction ${i} is signed by ${txs[i].getSenderAddress().toString()}, the body records ${bytesToHex(verified.body.senders[i])}`)
      }
    }
    const block = new Block(header, txs, [], blockCommon.isActivatedEIP(4895) ? [] : undefined, { common: blockCommon })
    // each transaction's frames, as the producer records them (the fork's system calls run outside a transaction)
    const recorder = new FrameRecorder()
    const stopRecording = recordTransactions(vm, recorder)
    let result
    try {
      result = await runCheckedBlock(vm, block, parent)
    } catch (err) {
      if (err instanceof BlockMismatch) throw new ReplicationError('state-root-mismatch', err.message)
      throw err
    } finally {
      stopRecording()
    }
    for (let i = 0; i < result.receipts.length; i++) {
      const r = result.receipts[i] as { status?: 0 | 1; cumulativeBlockGasUsed: bigint }
      const stored = verified.receipts[i]
      if (stored.status !== (r.status ?? 1) || stored.cumulativeGasUsed !== r.cumulativeBlockGasUsed) {
        throw new ReplicationError('state-root-mismatch', `${at}: transaction ${i} gives status ${r.status ?? 1}, cumulative gas ${r.cumulativeBlockGasUsed}; the block says ${stored.status}, ${stored.cumulativeGasUsed}`)
      }
    }
    const frames = recorder.take()
    if (verified.frames !== undefined) {
      if (frames.length !== verified.frames.length) {
        throw new ReplicationError('state-root-mismatch', `${at}: ${frames.length} transactions ran, the producer sent call frames of ${verified.frames.length}`)
      }
      for (let i = 0; i < frames.length; i++) {
        if (framesKey(frames[i]) !== framesKey(verified.frames[i])) {
          throw new ReplicationError('state-root-mismatch', `${at}: transaction ${i}'s call frames are not the ones the producer sent for the explorer's indexes`)
        }
      }
    }
  }
}

/** A transaction's frames in a form that compares them as sets (the order they were met in aside). */
function framesKey(f: TxFrames): string {
  const addresses = f.addresses.map((a) => bytesToHex(a)).sort()
  const creations = f.creations.map(([c, by]) => `${bytesToHex(c)}<${bytesToHex(by)}`).sort()
  return `${addresses.join(',')};${creations.join(',')}`
}
