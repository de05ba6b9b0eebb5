// debug_traceTransaction and debug_traceBlockBy*: a block's transactions run again on its parent's state
// in a scratch VM (nothing reaches the database), as the producer ran them: the system calls first, then
// each transaction with runTx in the block's context. The transactions asked for run with a tracer.
//
// Each traced transaction has its own time (geth's per-transaction timeout); all of them together must
// also end within the pool's limit on a task, past which the whole request answers "execution timeout".
// In a block, a transaction whose trace ran out of time is reported with that error, as geth does. A
// trace stopped inside the EVM leaves the EVM's checkpoints open (partial writes included), so the
// replay then starts again in a new scratch VM and runs the block up to that transaction untraced, for
// the ones after it to see the state it left. debug_traceCall's `txIndex` starts its call the same way,
// on the state within a block before one of its transactions.

import { Block, createBlockHeaderFromRLP } from '@ethereumjs/block'
import type { BlockHeader } from '@ethereumjs/block'
import type { Common } from '@ethereumjs/common'
import type { EVM, EVMMockBlockchainInterface } from '@ethereumjs/evm'
import { createTxFromRLP } from '@ethereumjs/tx'
import type { TypedTransaction } from '@ethereumjs/tx'
import { bytesToHex, hexToBytes } from '@ethereumjs/util'
import { runTx } from '@ethereumjs/vm'
import type { RunTxResult, VM } from '@ethereumjs/vm'
import type { ReadOnlyTrieDB } from '../../chain/store/state-db.js'
import { beforeTransactions } from '../../chain/system-calls.js'
import { serverError } from '../../errors.js'
import { cleanRunTxError, feeCheck, fundsCheck, nonceCheck } from '../precheck.js'
import { scratchVM } from '../scratch-vm.js'
import type { BlockPrefix, TraceBlockTask } from '../types.js'
import { createTracer } from './tracers.js'
import { Deadline, TraceTimeout, traceTimeoutError, TraceTooLarge, txStart } from './tracer.js'

export interface ReplayContext {
  common: Common
  trieDb: ReadOnlyTrieDB
  /** BLOCKHASH's answers: the canonical hashes */
  blockchain: EVMMockBlockchainInterface
}

/** The traces' JSON: the one transaction's trace, or for a block `[{txHash, result | error}, ...]`. */
export async function traceBlock(ctx: ReplayContext, task: TraceBlockTask, budget: Deadline): Promise<string> {
  const common = ctx.common.copy()
  const { header, block, txs } = decodePrefix(task, common)
  let { vm, gasUsed } = await replayUpTo(ctx, common, task, header, block, txs, 0)
  const traced = new Set(task.traced)
  const results: string[] = []
  const maxBytes = task.options.maxBytes
  let size = 0
  for (let i = 0; i < txs.length; i++) {
    const tx = txs[i]
    if (!traced.has(i)) {
      gasUsed += (await run(vm, tx, block, gasUsed)).totalGasSpent
      continue
    }
    budget.check()
    const tracer = createTracer(task.options, tx.gasLimit, Deadline.earliest(budget, task.options.timeoutMs))
    await tracer.begin?.(txStart(tx, vm.stateManager, header.coinbase))
    tracer.attach(vm.evm as EVM)
    let result: RunTxResult
    try {
      result = await run(vm, tx, block, gasUsed)
      await tracer.end?.(vm.stateManager)
    } catch (err) {
      if (!(err instanceof TraceTimeout)) throw err
      budget.check()
      if (task.mode === 'transaction') throw traceTimeoutError()
      results.push(`{"txHash":"${bytesToHex(tx.hash())}","error":"execution timeout"}`)
      ;({ vm, gasUsed } = await replayUpTo(ctx, common, task, header, block, txs, i + 1))
      continue
    } finally {
      tracer.detach()
    }
    gasUsed += result.totalGasSpent
    const trace = tracer.result(result)
    results.push(task.mode === 'transaction' ? trace : `{"txHash":"${bytesToHex(tx.hash())}","result":${trace}}`)
    size += results[results.length - 1].length + 1
    if (maxBytes > 0 && size > maxBytes) throw new TraceTooLarge(maxBytes)
  }
  return task.mode === 'transaction' ? results[0] : `[${results.join(',')}]`
}

/**
 * debug_traceCall's `txIndex`: a scratch VM with the state within the block before its transaction at
 * `prefix.txs.length` (the block's system calls and the transactions before it run on the parent's state).
 */
export async function stateWithin(ctx: ReplayContext, prefix: BlockPrefix, common: Common): Promise<VM> {
  const { header, block, txs } = decodePrefix(prefix, common)
  return (await replayUpTo(ctx, common, prefix, header, block, txs, txs.length)).vm
}

/** The block's header, an empty block of it for runTx, and its transactions, each with the sender the block records. */
function decodePrefix(prefix: BlockPrefix, common: Common): { header: BlockHeader; block: Block; txs: TypedTransaction[] } {
  const header = createBlockHeaderFromRLP(prefix.headerRlp, { common, setHardfork: true })
  const block = new Block(header, [], [], common.isActivatedEIP(4895) ? [] : undefined, { common })
  const txs: TypedTransaction[] = prefix.txs.map((raw, i) => {
    const tx = createTxFromRLP(raw, { common })
    // the sender the block records (patches/@ethereumjs+tx): runTx does not recover it again
    ;(tx.cache as { keelSenderAddress?: Uint8Array }).keelSenderAddress = hexToBytes(prefix.senders[i] as `0x${string}`)
    return tx
  })
  return { header, block, txs }
}

/** A scratch VM at the block's start (its system calls run), and the block run untraced up to `end`. */
async function replayUpTo(
  ctx: ReplayContext,
  common: Common,
  prefix: BlockPrefix,
  header: BlockHeader,
  block: Block,
  txs: TypedTransaction[],
  end: number,
): Promise<{ vm: VM; gasUsed: bigint }> {
  const vm = await scratchVM(ctx.trieDb, common, hexToBytes(prefix.parentStateRoot as `0x${string}`), ctx.blockchain)
  await beforeTransactions(vm, common, header)
  let gasUsed = 0n
  for (let i = 0; i < end; i++) gasUsed += (await run(vm, txs[i], block, gasUsed)).totalGasSpent
  return { vm, gasUsed }
}

async function run(vm: VM, tx: TypedTransaction, block: Block, blockGasUsed: bigint): Promise<RunTxResult> {
  const refused = await preCheck(vm, tx, block.header.baseFeePerGas ?? 0n)
  if (refused !== undefined) throw serverError(`tracing failed: ${refused}`)
  try {
    return await runTx(vm, { tx, block, blockGasUsed, skipHardForkValidation: true })
  } catch (err) {
    if (err instanceof TraceTimeout || err instanceof TraceTooLarge) throw err
    // a block of the chain ran when it was built, so this is a block from outside (debug_traceBlock) or Keel's fault
    throw serverError(`tracing failed: ${cleanRunTxError((err as Error).message)}`)
  }
}

/**
 * geth's preCheck (the nonce and its bound, the fees against the base fee) and buyGas (the funds), in
 * geth's order and words: a block from outside the chain (debug_traceBlock) may hold a transaction out
 * of order, under the base fee, or one its sender cannot pay for. Every transaction of the chain passes.
 */
async function preCheck(vm: VM, tx: TypedTransaction, baseFee: bigint): Promise<string | undefined> {
  const sender = tx.getSenderAddress()
  const from = sender.toString()
  const account = await vm.stateManager.getAccount(sender)
  const fees = 'maxFeePerGas' in tx ? { maxFeePerGas: tx.maxFeePerGas, maxPriorityFeePerGas: tx.maxPriorityFeePerGas } : { gasPrice: tx.gasPrice }
  const refusal =
    nonceCheck(from, tx.nonce, account?.nonce ?? 0n) ??
    feeCheck({ from, ...fees }, baseFee, true) ??
    fundsCheck(from, account?.balance ?? 0n, tx.gasLimit, fees.gasPrice ?? fees.maxFeePerGas, tx.value)
  return refusal?.message
}
