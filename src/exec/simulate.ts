// eth_simulateV1, as geth's internal/ethapi/simulate.go: blocks built on top of a chain block, each
// with its overrides and calls, every call seeing the state the ones before it left. Each simulated
// block is a real block: system calls before and after its calls, withdrawals credited, state root,
// transactions and receipts roots, bloom and hash, so that its parent hash chains to the block before
// and BLOCKHASH inside the simulation reads the simulated hashes.
//
// The state lives in a scratch VM (scratch-vm.ts): nothing reaches the database. The calls are unsigned
// transactions (geth's ToTransaction), hashed as such, with the sender they name.

import { Block, createBlockHeader, createBlockHeaderFromRLP } from '@ethereumjs/block'
import type { BlockHeader } from '@ethereumjs/block'
import type { Common } from '@ethereumjs/common'
import { ConsensusType } from '@ethereumjs/common'
import { RLP } from '@ethereumjs/rlp'
import type { TypedTransaction } from '@ethereumjs/tx'
import { Account, Address, bytesToHex, createWithdrawal, hexToBytes } from '@ethereumjs/util'
import type { Withdrawal } from '@ethereumjs/util'
import { Bloom, runTx } from '@ethereumjs/vm'
import type { RunTxResult, VM } from '@ethereumjs/vm'
import { receiptsRoot } from '../chain/builder.js'
import { orderedTrieRoot } from '../chain/ordered-trie.js'
import type { ReceiptRecord, StoredLog } from '../chain/receipts.js'
import type { ChainLevel } from '../chain/store/level.js'
import { Keys } from '../chain/store/schema.js'
import type { ReadOnlyTrieDB } from '../chain/store/state-db.js'
import { beforeTransactions, requestsHashAfterTransactions } from '../chain/system-calls.js'
import { blockHashSource } from '../evm/block-hashes.js'
import { ErrorCode, executionReverted, internalError, invalidParams, RpcError, serverError } from '../errors.js'
import { formatBlock } from '../json/block.js'
import { formatLog } from '../json/log.js'
import { quantity } from '../util/hex.js'
import { authorizationListData } from './authorization-data.js'
import { createCallTx } from './call-tx.js'
import { callHeader } from './exec-block.js'
import { haltMessage } from './halt-message.js'
import type { HaltError } from './halt-message.js'
import { cleanRunTxError, feeCheck, fundsCheck, gasLimitCheck, MAX_NONCE, nonceCheck } from './precheck.js'
import type { PrecheckReason } from './precheck.js'
import { decodeRevertReason } from './revert.js'
import { applyStateOverrides, ownPrecompileTable, touchesPrecompiles } from './state-overrides.js'
import type { PrecompileTable } from './state-overrides.js'
import { SimulationLogTracer } from './sim-log-tracer.js'
import { scratchVM } from './scratch-vm.js'
import type { NumberedLog } from './sim-log-tracer.js'
import { DEFAULT_SENDER } from './types.js'
import type { ExecCallArgs, SimBlockOverrides, SimBlockSpec, SimulateTask } from './types.js'

/** geth's maxSimulateBlocks: how far past the base block a simulation may reach. */
export const MAX_SIMULATED_BLOCKS = 256n
/** geth's timestampIncrement: the time between simulated blocks that do not set theirs. */
const TIMESTAMP_INCREMENT = 12n
/** EIP-3860's limit on a creation's init code (geth refuses larger in a simulation with -38025). */
const MAX_INITCODE_SIZE = 49_152
const GWEI = 1_000_000_000n
const ZERO_HASH = new Uint8Array(32)

/** geth's error codes of eth_simulateV1 (internal/ethapi/errors.go). */
const SimError = {
  nonceTooLow: -38010,
  nonceTooHigh: -38011,
  feeCapTooLow: -38012,
  intrinsicGas: -38013,
  insufficientFunds: -38014,
  blockGasLimitReached: -38015,
  blockNumberInvalid: -38020,
  blockTimestampInvalid: -38021,
  maxInitCodeSizeExceeded: -38025,
  clientLimitExceeded: -38026,
  vmError: -32015,
} as const

const PRECHECK_CODES: Record<PrecheckReason, number> = {
  nonceTooHigh: SimError.nonceTooHigh,
  nonceTooLow: SimError.nonceTooLow,
  nonceMax: ErrorCode.Internal,
  tipAboveFeeCap: ErrorCode.InvalidParams,
  feeCapTooLow: SimError.feeCapTooLow,
  insufficientFunds: SimError.insufficientFunds,
  intrinsicGas: SimError.intrinsicGas,
  floorDataGas: ErrorCode.Internal,
  rejected: ErrorCode.Internal,
}

export interface SimulationContext {
  /** the chain's Common (copied: the simulation moves its fork block by block) */
  common: Common
  level: ChainLevel
  trieDb: ReadOnlyTrieDB
  /** the RPC gas cap: all calls of a simulation together use at most this much gas (geth's gas pool) */
  gasCap: bigint
}

/** A block of the request with its number and time settled (gaps filled with empty blocks). */
interface PlannedBlock {
  number: bigint
  timestamp: bigint
  overrides: SimBlockOverrides
  spec: SimBlockSpec | undefined
}

/** runTx's options with the patched (patches/) switches: no EIP-3607 sender check, geth's NoBaseFee. */
type SimRunTxOpts = Parameters<typeof runTx>[1] & { keelSkipSenderCodeCheck: boolean; keelNoBaseFee: boolean }

/** The whole answer of eth_simulateV1, as JSON text. */
export async function simulate(ctx: SimulationContext, task: SimulateTask): Promise<string> {
  const common = ctx.common.copy()
  const base = await baseHeader(ctx.level, common, task)
  const plan = planBlocks(base, task.blocks)
  const simulated = new Map<bigint, Uint8Array>()
  const level = ctx.level
  const blockchain = blockHashSource(async (n) => (n <= base.number ? level.get(Keys.canonicalHash(n)) : simulated.get(n)))
  const vm = await scratchVM(ctx.trieDb, common, base.stateRoot, blockchain)
  const run = new BlockRun(vm, common, task, ctx.gasCap)
  const out: string[] = []
  let parent = base
  for (const planned of plan) {
    common.setHardforkBy({ blockNumber: planned.number, timestamp: planned.timestamp })
    // as geth: each block starts from the fork's precompiles, and its own overrides may move them
    const precompiles = touchesPrecompiles(vm.evm, planned.spec?.stateOverrides) ? ownPrecompileTable(vm.evm) : undefined
    const { header, json } = await run.block(parent, planned, precompiles?.table)
    precompiles?.restore()
    simulated.set(header.number, header.hash())
    out.push(json)
    parent = header
  }
  return `[${out.join(',')}]`
}

async function baseHeader(level: ChainLevel, common: Common, task: SimulateTask): Promise<BlockHeader> {
  const rlp = await level.get(Keys.header(task.block.number))
  if (rlp === undefined) throw serverError(`header for number ${task.block.number} not found`)
  const header = createBlockHeaderFromRLP(rlp, { common, setHardfork: true })
  if (bytesToHex(header.hash()) !== task.block.hash) throw serverError(`block ${task.block.hash} is no longer canonical`)
  return header
}

/** geth's sanitizeChain: numbers and times strictly increase, defaults filled in, gaps made empty blocks. */
export function planBlocks(base: { number: bigint; timestamp: bigint }, blocks: readonly SimBlockSpec[]): PlannedBlock[] {
  const out: PlannedBlock[] = []
  let prevNumber = base.number
  let prevTime = base.timestamp
  for (const spec of blocks) {
    const overrides = spec.blockOverrides ?? {}
    const number = overrides.number ?? prevNumber + 1n
    if (number <= prevNumber) throw new RpcError(SimError.blockNumberInvalid, `block numbers must be in order: ${number} <= ${prevNumber}`)
    if (number - base.number > MAX_SIMULATED_BLOCKS) throw new RpcError(SimError.clientLimitExceeded, 'too many blocks')
    for (let n = prevNumber + 1n; n < number; n++) {
      prevTime += TIMESTAMP_INCREMENT
      out.push({ number: n, timestamp: prevTime, overrides: {}, spec: undefined })
    }
    prevNumber = number
    let timestamp: bigint
    if (overrides.time === undefined) {
      timestamp = prevTime + TIMESTAMP_INCREMENT
    } else {
      timestamp = overrides.time
      if (timestamp <= prevTime) throw new RpcError(SimError.blockTimestampInvalid, `block timestamps must be in order: ${timestamp} <= ${prevTime}`)
    }
    prevTime = timestamp
    out.push({ number, timestamp, overrides, spec })
  }
  return out
}

/** What one call left behind, for its block (receipt) and for the answer (result). */
interface CallOutcome {
  tx: TypedTransaction
  sender: string
  result: RunTxResult
  /** gas used before refunds (geth's MaxUsedGas) */
  maxUsedGas: bigint
  logs: NumberedLog[]
}

/** Runs the planned blocks one after the other on one state. */
class BlockRun {
  /** gas left in the simulation's budget (geth's gas pool of RPCGasCap) */
  private budget: bigint
  /** header fields that carry over from block to block once overridden (geth's makeHeaders) */
  private coinbase: Address | undefined
  private gasLimit: bigint | undefined
  private readonly tracer: SimulationLogTracer

  constructor(
    private readonly vm: VM,
    private readonly common: Common,
    private readonly task: SimulateTask,
    gasCap: bigint,
  ) {
    this.budget = gasCap
    this.tracer = new SimulationLogTracer(task.traceTransfers)
  }

  async block(parent: BlockHeader, planned: PlannedBlock, precompiles: PrecompileTable | undefined): Promise<{ header: BlockHeader; json: string }> {
    const { vm, common, task } = this
    const o = planned.overrides
    this.coinbase = o.feeRecipient !== undefined ? new Address(hexToBytes(o.feeRecipient as `0x${string}`)) : (this.coinbase ?? parent.coinbase)
    this.gasLimit = o.gasLimit ?? this.gasLimit ?? parent.gasLimit
    const gasLimit = this.gasLimit
    const london = common.isActivatedEIP(1559)
    const cancun = common.isActivatedEIP(4844)
    const withdrawals: Withdrawal[] | undefined = common.isActivatedEIP(4895)
      ? (o.withdrawals ?? []).map((w) => createWithdrawal({ index: w.index, validatorIndex: w.validatorIndex, address: w.address as `0x${string}`, amount: w.amount }))
      : undefined
    const headerData = {
      parentHash: parent.hash(),
      number: planned.number,
      timestamp: planned.timestamp,
      gasLimit,
      coinbase: this.coinbase,
      difficulty: parent.difficulty,
      mixHash: o.prevRandao !== undefined ? hexToBytes(o.prevRandao as `0x${string}`) : ZERO_HASH,
      baseFeePerGas: london ? (o.baseFeePerGas ?? (task.validation ? parent.calcNextBaseFee() : 0n)) : undefined,
      parentBeaconBlockRoot: cancun ? (o.beaconRoot !== undefined ? hexToBytes(o.beaconRoot as `0x${string}`) : ZERO_HASH) : undefined,
      excessBlobGas: cancun ? (parent.excessBlobGas !== undefined ? parent.calcNextExcessBlobGas(common) : 0n) : undefined,
      blobGasUsed: cancun ? 0n : undefined,
    }
    const pendingHeader = callHeader(headerData, common, o.blobBaseFee)
    const pending = new Block(pendingHeader, [], [], withdrawals, { common })

    await applyStateOverrides(vm.stateManager, planned.spec?.stateOverrides, precompiles)
    await beforeTransactions(vm, common, pendingHeader)
    this.tracer.attach(vm.evm)
    this.tracer.startBlock()

    const outcomes: CallOutcome[] = []
    const receipts: ReceiptRecord[] = []
    const blooms: Uint8Array[] = []
    const bloom = new Bloom(undefined, common)
    let gasUsed = 0n
    for (const args of planned.spec?.calls ?? []) {
      const outcome = await this.call(pending, args, gasUsed, gasLimit)
      gasUsed += outcome.result.totalGasSpent
      this.budget -= outcome.result.totalGasSpent
      const receiptLogs = (outcome.result.receipt as { logs: StoredLog[] }).logs
      receipts.push({ status: outcome.result.execResult.exceptionError === undefined ? 1 : 0, cumulativeGasUsed: gasUsed, logs: receiptLogs })
      blooms.push(outcome.result.bloom.bitvector)
      bloom.or(outcome.result.bloom)
      outcomes.push(outcome)
    }
    // the system calls after the transactions are no call's: their frames must not join the last one's logs
    this.tracer.reset()
    const requestsHash = await requestsHashAfterTransactions(vm, common, pending, receipts)
    for (const w of withdrawals ?? []) {
      if (w.amount === 0n) continue
      const account = (await vm.stateManager.getAccount(w.address)) ?? new Account()
      account.balance += w.amount * GWEI
      await vm.stateManager.putAccount(w.address, account)
    }
    if (common.consensusType() === ConsensusType.ProofOfWork) {
      // a block before the merge: geth's simulation finalizes it with the engine, which pays the block reward
      const account = (await vm.stateManager.getAccount(this.coinbase)) ?? new Account()
      account.balance += common.param('minerReward')
      await vm.stateManager.putAccount(this.coinbase, account)
    }
    const stateRoot = await vm.stateManager.getStateRoot()

    const keccak = common.customCrypto.keccak256!
    const txs = outcomes.map((c) => c.tx)
    const header = createBlockHeader(
      {
        ...headerData,
        stateRoot,
        transactionsTrie: orderedTrieRoot(txs.map((tx) => tx.serialize()), keccak),
        receiptTrie: receiptsRoot(receipts, blooms, txs, keccak),
        logsBloom: bloom.bitvector,
        gasUsed,
        withdrawalsRoot: withdrawals === undefined ? undefined : orderedTrieRoot(withdrawals.map((w) => RLP.encode(w.raw())), keccak),
        requestsHash,
      },
      { common, skipConsensusFormatValidation: true },
    )
    const block = new Block(header, txs, [], withdrawals, { common })
    const json = formatBlock(block, { fullTransactions: task.fullTransactions, senders: outcomes.map((c) => c.sender), size: block.serialize().length })
    json.calls = callsJson(outcomes, header)
    return { header, json: JSON.stringify(json) }
  }

  /** One call, checked as geth checks a message (in its order and words), then run as a transaction. */
  private async call(block: Block, args: ExecCallArgs, gasUsed: bigint, gasLimit: bigint): Promise<CallOutcome> {
    const { vm, common, task } = this
    const sender = args.from ?? DEFAULT_SENDER
    const from = new Address(hexToBytes(sender as `0x${string}`))
    const account = (await vm.stateManager.getAccount(from)) ?? new Account()
    const nonce = args.nonce ?? account.nonce
    let gas = args.gas ?? gasLimit - gasUsed
    if (gasUsed + gas > gasLimit) throw new RpcError(SimError.blockGasLimitReached, `block gas limit reached: ${gasUsed} >= ${gasLimit}`)
    if (gas > this.budget) gas = this.budget
    // what geth's state transition refuses, in its order, wrapped as geth's simulation wraps it
    const refuse = (code: number, reason: string) => new RpcError(code, `err: ${reason} (supplied gas ${gas})`)
    const nonceError = task.validation ? nonceCheck(sender, nonce, account.nonce) : undefined
    if (nonceError !== undefined) throw refuse(PRECHECK_CODES[nonceError.reason], nonceError.message)
    const tx = unsignedTx(common, args, gas, nonce, from)
    const feeError = feeCheck(args, block.header.baseFeePerGas ?? 0n, task.validation)
    if (feeError !== undefined) throw refuse(PRECHECK_CODES[feeError.reason], feeError.message)
    const fundsError = fundsCheck(sender, account.balance, gas, args.gasPrice ?? args.maxFeePerGas ?? 0n, args.value ?? 0n)
    if (fundsError !== undefined) throw refuse(PRECHECK_CODES[fundsError.reason], fundsError.message)
    const gasError = gasLimitCheck(gas, { intrinsic: tx.getIntrinsicGas(), minimum: tx.getMinimumGasLimit() })
    if (gasError !== undefined) throw refuse(PRECHECK_CODES[gasError.reason], gasError.message)
    const data = args.data ?? new Uint8Array(0)
    if ((args.to === undefined || args.to === null) && data.length > MAX_INITCODE_SIZE && common.isActivatedEIP(3860)) {
      throw refuse(SimError.maxInitCodeSizeExceeded, `max initcode size exceeded: code size ${data.length} limit ${MAX_INITCODE_SIZE}`)
    }

    this.tracer.reset()
    let result: RunTxResult
    try {
      const opts: SimRunTxOpts = {
        tx,
        block,
        blockGasUsed: gasUsed,
        skipNonce: true,
        // the checks above are geth's; what they let through the sender can afford, so nothing is minted
        skipBalance: true,
        skipBlockGasLimitValidation: true,
        skipHardForkValidation: true,
        keelSkipSenderCodeCheck: true,
        keelNoBaseFee: !task.validation,
      }
      result = await runTx(vm, opts)
    } catch (err) {
      throw internalError(cleanRunTxError((err as Error).message))
    }
    if (nonce === MAX_NONCE) {
      // geth's nonce is a uint64: the increment past the largest wraps to 0 (a simulation without
      // validation skips the nonce-max check), and the sender's next call runs with nonce 0
      const after = await vm.stateManager.getAccount(from)
      if (after !== undefined && after.nonce > MAX_NONCE) {
        after.nonce = 0n
        await vm.stateManager.putAccount(from, after)
      }
    }
    const executed = tx.getIntrinsicGas() + result.execResult.executionGasUsed
    const floor = tx.getMinimumGasLimit()
    const failed = result.execResult.exceptionError !== undefined
    const logs = failed ? [] : this.tracer.logs()
    return { tx, sender, result, maxUsedGas: executed > floor ? executed : floor, logs }
  }
}

/**
 * The call as geth's TransactionArgs.ToTransaction(DynamicFeeTxType) makes it: a fee-market transaction
 * unless it names a gas price (legacy, or with an access list EIP-2930) or authorizations (EIP-7702),
 * unsigned, with the chain's id. Its hash is the hash of that unsigned encoding.
 */
function unsignedTx(common: Common, args: ExecCallArgs, gasLimit: bigint, nonce: bigint, from: Address): TypedTransaction {
  // @ethereumjs refuses to build a transaction with the largest nonce, which a simulation without
  // validation runs (geth's does): built with another, given its own after
  const buildNonce = nonce < MAX_NONCE ? nonce : 0n
  const base = { nonce: buildNonce, gasLimit, to: args.to ?? undefined, value: args.value ?? 0n, data: args.data ?? new Uint8Array(0) }
  const accessList = args.accessList?.map((i) => ({ address: i.address, storageKeys: i.storageKeys }))
  let txData: Record<string, unknown>
  if (args.authorizationList !== undefined) {
    if (args.to === undefined || args.to === null) throw invalidParams('a call with an authorizationList must name a recipient (to)')
    txData = {
      ...base,
      type: 4,
      maxFeePerGas: args.maxFeePerGas ?? 0n,
      maxPriorityFeePerGas: args.maxPriorityFeePerGas ?? 0n,
      accessList: accessList ?? [],
      authorizationList: authorizationListData(args.authorizationList),
    }
  } else if (args.gasPrice !== undefined) {
    txData = accessList !== undefined ? { ...base, type: 1, gasPrice: args.gasPrice, accessList } : { ...base, type: 0, gasPrice: args.gasPrice }
  } else {
    txData = { ...base, type: 2, maxFeePerGas: args.maxFeePerGas ?? 0n, maxPriorityFeePerGas: args.maxPriorityFeePerGas ?? 0n, accessList: accessList ?? [] }
  }
  // keelNoGasLimitCap (patches/): a call may carry more gas than EIP-7825 lets a transaction carry
  // init code over EIP-3860's limit is refused by the caller, after the gas checks, as geth orders them
  const tx = createCallTx(common, txData, from, { allowUnlimitedInitCodeSize: true })
  if (buildNonce !== nonce) (tx as { nonce: bigint }).nonce = nonce
  const hash = common.customCrypto.keccak256!(tx.serialize())
  ;(tx as { hash: () => Uint8Array }).hash = () => hash
  return tx
}

/** The block's `calls`: each call's status, return data, gas and logs (geth's simCallResult). */
function callsJson(outcomes: readonly CallOutcome[], header: BlockHeader): Record<string, unknown>[] {
  const ctx = {
    blockHash: bytesToHex(header.hash()),
    blockNumber: header.number,
    blockTimestamp: header.timestamp,
    transactionHash: '',
    transactionIndex: 0,
    logIndex: 0,
    removed: false,
  }
  return outcomes.map((c, i) => {
    ctx.transactionHash = bytesToHex(c.tx.hash())
    ctx.transactionIndex = i
    const logs = c.logs.map(({ log, index }) => {
      ctx.logIndex = index
      return formatLog(log, ctx)
    })
    const exec = c.result.execResult
    const output = bytesToHex(exec.returnValue)
    const out: Record<string, unknown> = {
      // geth's ExecutionResult.Return(): nothing for a failed call (a revert's data is in its error)
      returnData: exec.exceptionError === undefined ? output : '0x',
      logs,
      gasUsed: quantity(c.result.totalGasSpent),
      maxUsedGas: quantity(c.maxUsedGas),
      status: exec.exceptionError === undefined ? '0x1' : '0x0',
    }
    const error = exec.exceptionError
    if (error !== undefined) {
      if (error.error === 'revert') {
        const reverted = executionReverted(decodeRevertReason(output), output)
        out.error = { message: reverted.message, code: reverted.code, data: output }
      } else {
        out.error = { message: haltMessage(error as HaltError), code: SimError.vmError }
      }
    }
    return out
  })
}
