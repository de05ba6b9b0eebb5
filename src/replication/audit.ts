// --replica-verify execute: a replica runs every block's transactions itself, on its own state of the
// parent block, before the block is applied, and refuses it unless the state root, the gas and every
// receipt come out as the producer's, and every transaction's call frames (the explorer's indexes) as the
// producer recorded them. The default checks (verify.ts) take the state root and the frames on the
// producer's word; this takes nothing on trust, at the cost of executing every block again (the
// producer's own cost of building it: bench/README.md has the figure).

import { Block, createBlockHeaderFromRLP } from '@ethereumjs/block'
import type { Common } from '@ethereumjs/common'
import { createTxFromRLP } from '@ethereumjs/tx'
import { bytesToHex, equalsBytes } from '@ethereumjs/util'
import { runTx } from '@ethereumjs/vm'
import type { ChainLevel } from '../chain/store/level.js'
import { Keys } from '../chain/store/schema.js'
import { createNodeCache, ReadOnlyTrieDB } from '../chain/store/state-db.js'
import { beforeTransactions, requestsHashAfterTransactions } from '../chain/system-calls.js'
import type { ReceiptRecord } from '../chain/receipts.js'
import { blockHashSource } from '../evm/block-hashes.js'
import { scratchVM } from '../exec/scratch-vm.js'
import { FrameRecorder } from '../indexes/frames.js'
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
    const parent = createBlockHeaderFromRLP(parentRlp, { common: blockCommon, setHardfork: true })
    blockCommon.setHardforkBy({ blockNumber: header.number, timestamp: header.timestamp })
    const vm = await scratchVM(trieDb, blockCommon, parent.stateRoot, blockchain)
    const block = new Block(header, [], [], blockCommon.isActivatedEIP(4895) ? [] : undefined, { common: blockCommon })
    await beforeTransactions(vm, blockCommon, header)
    const recorder = new FrameRecorder()
    recorder.attach(vm.evm)
    const receipts: ReceiptRecord[] = []
    let gasUsed = 0n
    for (let i = 0; i < verified.body.txs.length; i++) {
      const tx = createTxFromRLP(verified.body.txs[i], { common: blockCommon })
      // the sender recovered here, not the one the body records
      if (!equalsBytes(tx.getSenderAddress().bytes, verified.body.senders[i])) {
        throw new ReplicationError('state-root-mismatch', `${at}: transaction ${i} is signed by ${tx.getSenderAddress().toString()}, the body records ${bytesToHex(verified.body.senders[i])}`)
      }
      let result
      recorder.beginTx()
      try {
        result = await runTx(vm, { tx, block, blockGasUsed: gasUsed, skipHardForkValidation: true })
        recorder.endTx()
      } catch (err) {
        throw new ReplicationError('state-root-mismatch', `${at}: transaction ${i} does not run: ${(err as Error).message}`)
      }
      gasUsed += result.totalGasSpent
      const r = result.receipt as { status?: 0 | 1; logs: ReceiptRecord['logs'] }
      receipts.push({ status: r.status ?? 1, cumulativeGasUsed: gasUsed, logs: r.logs })
      const stored = verified.receipts[i]
      if (stored.status !== (r.status ?? 1) || stored.cumulativeGasUsed !== gasUsed) {
        throw new ReplicationError('state-root-mismatch', `${at}: transaction ${i} gives status ${r.status ?? 1}, cumulative gas ${gasUsed}; the block says ${stored.status}, ${stored.cumulativeGasUsed}`)
      }
    }
    const frames = recorder.take()
    recorder.detach()
    if (verified.frames !== undefined) {
      for (let i = 0; i < frames.length; i++) {
        if (framesKey(frames[i]) !== framesKey(verified.frames[i])) {
          throw new ReplicationError('state-root-mismatch', `${at}: transaction ${i}'s call frames are not the ones the producer sent for the explorer's indexes`)
        }
      }
    }
    const requestsHash = await requestsHashAfterTransactions(vm, blockCommon, block, receipts)
    if (requestsHash !== undefined && header.requestsHash !== undefined && !equalsBytes(requestsHash, header.requestsHash)) {
      throw new ReplicationError('state-root-mismatch', `${at}: requests hash ${bytesToHex(requestsHash)}, the header's ${bytesToHex(header.requestsHash)}`)
    }
    const root = await vm.stateManager.getStateRoot()
    if (!equalsBytes(root, header.stateRoot)) {
      throw new ReplicationError('state-root-mismatch', `${at}: executed, its state root is ${bytesToHex(root)}, the header's ${bytesToHex(header.stateRoot)}`)
    }
  }
}

/** A transaction's frames in a form that compares them as sets (the order they were met in aside). */
function framesKey(f: TxFrames): string {
  const addresses = f.addresses.map((a) => bytesToHex(a)).sort()
  const creations = f.creations.map(([c, by]) => `${bytesToHex(c)}<${bytesToHex(by)}`).sort()
  return `${addresses.join(',')};${creations.join(',')}`
}
