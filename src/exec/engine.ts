// Executes eth_call, eth_estimateGas and eth_createAccessList against the state root of a block,
// inside an outer checkpoint that is always reverted: nothing a call does reaches the database.
// Thread-agnostic: the piscina workers run it, and so can any thread with a read handle on the DB.

import { Block, paramsBlock } from '@ethereumjs/block'
import type { Common } from '@ethereumjs/common'
import { Hardfork } from '@ethereumjs/common'
import { getCalldataFloorGas, paramsTx } from '@ethereumjs/tx'
import type { TypedTransaction } from '@ethereumjs/tx'
import { Account, Address, bytesToHex, hexToBytes } from '@ethereumjs/util'
import type { PrefixedHexString } from '@ethereumjs/util'
import type { EVM, EVMMockBlockchainInterface } from '@ethereumjs/evm'
import { createVM, runTx } from '@ethereumjs/vm'
import type { RunTxResult, VM } from '@ethereumjs/vm'
import type { ChainLevel } from '../chain/store/level.js'
import { Keys } from '../chain/store/schema.js'
import type { FixedMerkleStateManager } from '../evm/state-manager.js'
import { ErrorCode, executionReverted, RpcError, serverError, toShape } from '../errors.js'
import { decodeRevertReason } from './revert.js'
import { messageGas } from '../evm/intrinsic-gas.js'
import type { MessageGas } from '../evm/intrinsic-gas.js'
import { StateReader } from './state-reader.js'
import { callHeader } from './exec-block.js'
import type { StateDiff } from '../chain/state-diff.js'
import { blockHashSource } from '../evm/block-hashes.js'
import { GasWatch, SSTORE_SENTRY } from './gas-watch.js'
import { ColdAccesses } from './cold-accesses.js'
import type { WarmingJournal } from './cold-accesses.js'
import { haltMessage } from './halt-message.js'
import { cleanRunTxError, feeCheck, gasLimitCheck, insufficientFunds, PrecheckError } from './precheck.js'
import type { HaltError } from './halt-message.js'
import type { WatchedEvm } from './gas-watch.js'
import { authorizationListData } from './authorization-data.js'
import { DEFAULT_SENDER } from './types.js'
import type { CallSpec, CallTask, ExecAccessListItem, ExecBlock, ExecCallArgs, ExecLimits, ExecResult, ExecTask, SimulateTask, TraceCallTask } from './types.js'
import { storageRangeJson } from './storage-range.js'
import { foreignBlockTask } from './trace/foreign-block.js'
import { stateWithin, traceBlock } from './trace/replay.js'
import type { ReplayContext } from './trace/replay.js'
import { createTracer } from './trace/tracers.js'
import { Deadline, TraceTimeout, traceTimeoutError, TraceTooLarge, txStart, withinLimit } from './trace/tracer.js'
import type { TxTracer } from './trace/tracer.js'
import { simulate } from './simulate.js'
import { scratchVM } from './scratch-vm.js'
import { reportCoinbaseTouches } from './coinbase-touches.js'
import type { ReportingJournal } from './coinbase-touches.js'
import { createCallTx } from './call-tx.js'
import { LruMap } from '../util/lru.js'
import { applyStateOverrides, ownPrecompileTable, touchesPrecompiles } from './state-overrides.js'

/** EIP-7825 (Osaka): no transaction may use more gas than this. */
const TX_GAS_CAP_OSAKA = 1n << 24n
/** geth stops the estimate binary search within 1.5% of the answer. */
const ESTIMATE_ERROR_RATIO = 0.015
const CALL_STIPEND = 2300n
const EMPTY = new Uint8Array(0)

/**
 * The addresses calls name, by their hex: senders and targets repeat call after call, and each decode
 * ran @ethereumjs/util's validating regex. Nothing in the EVM writes into an Address's bytes.
 */
const addresses = new LruMap<string, Address>(4096)

function addressOf(hex: string): Address {
  let address = addresses.get(hex)
  if (address === undefined) {
    address = new Address(hexToBytes(hex as `0x${string}`))
    addresses.set(hex, address)
  }
  return address
}

/** The journal's key of an address (unprefixed hex), kept with the Address: callers and coinbases repeat. */
const journalKeys = new WeakMap<Address, string>()

function journalKeyOf(address: Address): string {
  let key = journalKeys.get(address)
  if (key === undefined) {
    key = address.toString().slice(2)
    journalKeys.set(address, key)
  }
  return key
}

/**
 * The warm slots of an address a call's access list does not name: none. One set serves every such
 * address of every call; only an access list adds slots to these sets, and a call with one takes the
 * journal's own path (a set per address), so an add here would be a bug, and throws.
 */
class NoWarmSlots extends Set<string> {
  override add(): this {
    throw new Error('internal error: a warm slot was added to the shared empty set')
  }
}
const NO_WARM_SLOTS: Set<string> = new NoWarmSlots()

/** journal.addAlwaysWarmAddress for a key in the journal's form, with the given (or a new) slot set. */
function warmAddress(warm: Map<string, Set<string>>, key: string, slots: Set<string> | undefined): void {
  if (!warm.has(key)) warm.set(key, slots ?? new Set())
}

/** A VM and its state manager over the state at one root (the engine keeps those of the last few roots). */
interface StateVm {
  sm: FixedMerkleStateManager
  vm: VM
}

/**
 * `needed`: the gas the execution consumed before refunds (at least the intrinsic minimum). With a limit
 * below it the same execution runs out of gas; with exactly it, it usually succeeds.
 */
type Outcome =
  | { kind: 'success'; result: RunTxResult; needed: bigint }
  | { kind: 'revert'; result: RunTxResult; needed: bigint }
  | { kind: 'evmError'; result: RunTxResult; message: string; needed: bigint }

export class ExecEngine {
  private readonly blocks = new Map<string, Block>()
  /** the block whose fork each state VM's Common was last set to (setHardforkBy walks every fork) */
  private readonly hardforkSetFor = new WeakMap<Common, Block>()
  private readonly stateVms = new Map<string, StateVm>()
  private queue: Promise<unknown> = Promise.resolve()
  private readonly reader: StateReader
  /** BLOCKHASH's answers for every VM the engine makes: the canonical hashes in the chain database */
  private readonly canonicalHashes: EVMMockBlockchainInterface

  constructor(
    private readonly common: Common,
    private readonly level: ChainLevel,
    private readonly limits: ExecLimits,
    opts: { syncReads?: boolean } = {},
  ) {
    // a cached branch weighs ~800 bytes (its encoding and the entry): 16 MiB holds the top four levels of a
    // million-account trie (4,369 branches) and ~16,000 nodes more
    this.reader = new StateReader(common, level, { nodeCacheBytes: 16 << 20, slots: 64_000, maxOpenRoots: 4, syncReads: opts.syncReads })
    this.canonicalHashes = blockHashSource((n) => level.get(Keys.canonicalHash(n)))
  }

  /** How many writes the call path attempted against the DB (must stay 0). */
  get writesAttempted(): number {
    return this.reader.trieDb.writesAttempted
  }

  /** Trie nodes read from LevelDB so far, for benchmarks and tests. */
  get trieNodeReads(): number {
    return this.reader.trieDb.fetches
  }

  /** Read-cache effectiveness, for benchmarks and tests. */
  get readCacheStats(): { slots: number; slotHits: number; slotMisses: number } {
    const slots = this.reader.shared.slots
    return { slots: slots.size, slotHits: slots.hits, slotMisses: slots.misses }
  }

  /** A new head's state diff from the producer: keeps calls at the head off the trie. */
  applyStateDiff(diff: StateDiff): void {
    this.reader.applyDiff(diff)
  }

  /** Runs tasks one at a time: a state manager's checkpoints must not interleave. */
  run(task: ExecTask): Promise<ExecResult> {
    const next = this.queue.then(() => this.execute(task))
    this.queue = next.catch(() => undefined)
    return next
  }

  private async execute(task: ExecTask): Promise<ExecResult> {
    try {
      switch (task.kind) {
        case 'call': {
          const gas = this.callGas(task)
          let outcome: Outcome
          try {
            outcome = await this.withState(task, (s, block) => (isPlainMessage(task.args) ? this.plainCall(s, block, task, gas) : this.runOnce(s, block, task, gas)))
          } catch (err) {
            // geth's eth_call: "err: %w (supplied gas %d)" around what ApplyMessage refused
            if (err instanceof PrecheckError) throw serverError(`err: ${err.message} (supplied gas ${gas})`)
            throw err
          }
          return { ok: true, kind: 'call', returnData: this.callResult(outcome) }
        }
        case 'estimateGas':
          return { ok: true, kind: 'estimateGas', gas: await this.estimate(task) }
        case 'createAccessList':
          return await this.accessList(task)
        case 'simulate':
          return { ok: true, kind: 'simulate', json: await this.simulate(task) }
        case 'traceBlock':
          return { ok: true, kind: 'trace', json: await traceBlock(this.replayContext(), task, this.traceBudget()) }
        case 'traceForeignBlock':
          return { ok: true, kind: 'trace', json: await traceBlock(this.replayContext(), foreignBlockTask(task, this.common.copy()), this.traceBudget()) }
        case 'traceCall':
          return { ok: true, kind: 'trace', json: await this.traceCall(task) }
        case 'storageRange':
          return { ok: true, kind: 'storageRange', json: await storageRangeJson(await stateWithin(this.replayContext(), task.at, this.common.copy()), task) }
      }
    } catch (err) {
      if (err instanceof TraceTimeout) return { ok: false, error: toShape(traceTimeoutError()) }
      if (err instanceof TraceTooLarge) return { ok: false, error: { code: ErrorCode.ResponseTooLarge, message: err.message } }
      if (err instanceof RpcError) return { ok: false, error: toShape(err) }
      return { ok: false, error: { code: ErrorCode.Server, message: (err as Error).message ?? String(err) } }
    }
  }

  private simulate(task: SimulateTask): Promise<string> {
    return simulate({ common: this.common, level: this.level, trieDb: this.reader.trieDb, gasCap: this.limits.gasCap }, task)
  }

  private replayContext(): ReplayContext {
    return { common: this.common, trieDb: this.reader.trieDb, blockchain: this.canonicalHashes }
  }

  /**
   * A trace's whole time: the pool's limit on a call, less a little, so that a trace out of time answers
   * geth's "execution timeout" before the pool's watchdog ends the worker.
   */
  private traceBudget(): Deadline {
    return Deadline.after(this.limits.timeoutMs - Math.min(100, this.limits.timeoutMs / 10))
  }

  /**
   * debug_traceCall: the call as eth_call runs it through runTx, reported by the tracer the task names,
   * on the state after its block or, with `within`, before one of the block's transactions (the block
   * replayed up to it). It runs in a scratch VM of its own, not in the calls' shared state: a trace
   * stopped inside the EVM (out of time, too large) leaves the EVM's checkpoints open.
   */
  private async traceCall(task: TraceCallTask): Promise<string> {
    const gas = this.callGas(task)
    const deadline = Deadline.earliest(this.traceBudget(), task.options.timeoutMs)
    const common = this.common.copy()
    const vm =
      task.within === undefined
        ? await scratchVM(this.reader.trieDb, common, hexToBytes(task.block.stateRoot as `0x${string}`), this.canonicalHashes)
        : await stateWithin(this.replayContext(), task.within, common)
    const s: StateVm = { sm: vm.stateManager as FixedMerkleStateManager, vm }
    const block = this.makeBlock(common, task, paysFee(task.args))
    const precompiles = touchesPrecompiles(vm.evm, task.stateOverrides) ? ownPrecompileTable(vm.evm) : undefined
    await applyStateOverrides(s.sm, task.stateOverrides, precompiles?.table)
    const tracer = createTracer(task.options, gas, deadline)
    let outcome: Outcome
    try {
      outcome = await this.runOnce(s, block, task, gas, undefined, false, tracer)
    } catch (err) {
      if (err instanceof PrecheckError) throw serverError(`tracing failed: ${err.message}`)
      throw err
    }
    return withinLimit(tracer.result(outcome.result), task.options.maxBytes)
  }

  private async stateVm(root: string): Promise<StateVm> {
    let state = this.stateVms.get(root)
    if (state !== undefined) return state
    const sm = await this.reader.at(hexToBytes(root as `0x${string}`))
    const vm = await createVM({ common: this.common.copy(), stateManager: sm, blockchain: this.canonicalHashes })
    // zero-value frames skip the unchanged account writes (patched evm.js): only for calls, whose state is
    // thrown away; the producer keeps the stock path, where the touch matters to EIP-161's cleanup
    ;(vm.evm as typeof vm.evm & { keelSkipZeroValueTouch?: boolean }).keelSkipZeroValueTouch = true
    shareCommon(vm.common)
    state = { sm, vm }
    this.stateVms.set(root, state)
    if (this.stateVms.size > 4) this.stateVms.delete(this.stateVms.keys().next().value as string)
    return state
  }

  /** Opens the state at the task's block, applies overrides, runs `fn`, and reverts everything. */
  private async withState<T>(task: CallSpec, fn: (s: StateVm, block: Block) => Promise<T>): Promise<T> {
    const s = await this.stateVm(task.block.stateRoot)
    const block = this.blockFor(s.vm.common, task)
    const precompiles = touchesPrecompiles(s.vm.evm, task.stateOverrides) ? ownPrecompileTable(s.vm.evm) : undefined
    await s.vm.evm.journal.checkpoint()
    try {
      await applyStateOverrides(s.sm, task.stateOverrides, precompiles?.table)
      return await fn(s, block)
    } finally {
      await s.vm.evm.journal.revert()
      s.vm.evm.journal.cleanJournal()
      precompiles?.restore()
    }
  }

  private blockFor(common: Common, task: CallSpec): Block {
    const b: ExecBlock = task.block
    const pays = paysFee(task.args)
    if (task.blockOverrides === undefined) {
      // the same few blocks serve call after call: build each execution context once
      const key = pays ? b.hash : `${b.hash}:nofee`
      let block = this.blocks.get(key)
      if (block === undefined) {
        block = this.makeBlock(common, task, pays)
        this.blocks.set(key, block)
        if (this.blocks.size > 16) this.blocks.delete(this.blocks.keys().next().value as string)
        this.hardforkSetFor.set(common, block)
      } else if (this.hardforkSetFor.get(common) !== block) {
        // ~4% of a call when done every time; the common only moves when a call names another block
        common.setHardforkBy({ blockNumber: block.header.number, timestamp: block.header.timestamp })
        this.hardforkSetFor.set(common, block)
      }
      return block
    }
    const block = this.makeBlock(common, task, pays)
    this.hardforkSetFor.set(common, block)
    return block
  }

  private makeBlock(common: Common, task: CallSpec, pays: boolean): Block {
    const b: ExecBlock = task.block
    const o = task.blockOverrides ?? {}
    const timestamp = o.time ?? b.timestamp
    const number = o.number ?? b.number
    common.setHardforkBy({ blockNumber: number, timestamp })
    const baseFee = o.baseFeePerGas ?? (pays ? b.baseFeePerGas : 0n)
    const header = callHeader(
      {
        parentHash: hexToBytes(b.parentHash as `0x${string}`),
        number,
        timestamp,
        gasLimit: o.gasLimit ?? b.gasLimit,
        baseFeePerGas: baseFee,
        coinbase: new Address(hexToBytes((o.feeRecipient ?? b.coinbase) as `0x${string}`)),
        mixHash: hexToBytes((o.prevRandao ?? b.prevRandao) as `0x${string}`),
      },
      common,
      o.blobBaseFee,
    )
    return new Block(header, [], [], common.isActivatedEIP(4895) ? [] : undefined, { common })
  }

  /** The most gas one call may use: the RPC gas cap, and since Osaka the per-transaction cap. */
  private gasCeiling(common: Common): bigint {
    const cap = this.limits.gasCap
    return common.gteHardfork(Hardfork.Osaka) && cap > TX_GAS_CAP_OSAKA ? TX_GAS_CAP_OSAKA : cap
  }

  /**
   * The gas eth_call and eth_createAccessList run a message with: what it names, at most the RPC gas cap.
   * geth's skip the transaction checks, EIP-7825's per-transaction cap among them (estimates keep it).
   */
  private callGas(task: CallSpec): bigint {
    const cap = this.limits.gasCap
    const gas = task.args.gas
    return gas === undefined || gas > cap ? cap : gas
  }

  private buildTx(common: Common, args: ExecCallArgs, gasLimit: bigint, nonce: bigint, accessList?: ExecAccessListItem[]): TypedTransaction {
    const to = args.to === undefined || args.to === null ? undefined : args.to
    const base = { nonce, gasLimit, to, value: args.value ?? 0n, data: args.data ?? new Uint8Array(0) }
    const list = (accessList ?? args.accessList)?.map((i) => ({ address: i.address, storageKeys: i.storageKeys }))
    let txData: Record<string, unknown>
    if (args.authorizationList !== undefined) {
      txData = {
        ...base,
        type: 4,
        maxFeePerGas: args.maxFeePerGas ?? args.gasPrice ?? 0n,
        maxPriorityFeePerGas: args.maxPriorityFeePerGas ?? 0n,
        accessList: list ?? [],
        authorizationList: authorizationListData(args.authorizationList),
      }
    } else if (args.gasPrice !== undefined) {
      txData = list !== undefined ? { ...base, type: 1, gasPrice: args.gasPrice, accessList: list } : { ...base, type: 0, gasPrice: args.gasPrice }
    } else {
      const maxFee = args.maxFeePerGas ?? 0n
      txData = {
        ...base,
        type: 2,
        maxFeePerGas: maxFee,
        maxPriorityFeePerGas: args.maxPriorityFeePerGas ?? (maxFee === 0n ? 0n : maxFee),
        accessList: list ?? [],
      }
    }
    return createCallTx(common, txData, addressOf(args.from ?? DEFAULT_SENDER))
  }

  private async runOnce(
    s: StateVm,
    block: Block,
    task: CallSpec,
    gasLimit: bigint,
    accessList?: ExecAccessListItem[],
    reportAccessList = false,
    tracer?: TxTracer,
  ): Promise<Outcome> {
    const args = task.args
    const feeError = feeCheck(args, block.header.baseFeePerGas ?? 0n)
    if (feeError !== undefined) throw feeError
    const { account } = await this.fundedSender(s, args, gasLimit)
    const tx = this.buildTx(s.vm.common, args, gasLimit, args.nonce ?? account.nonce, accessList)
    const gasError = gasLimitCheck(gasLimit, { intrinsic: tx.getIntrinsicGas(), minimum: tx.getMinimumGasLimit() })
    if (gasError !== undefined) throw gasError
    if (tracer?.begin !== undefined) await tracer.begin(txStart(tx, s.sm, block.header.coinbase))
    await s.vm.evm.journal.checkpoint()
    let result: RunTxResult
    try {
      const opts: CallRunTxOpts = {
        tx,
        block,
        skipNonce: true,
        skipBalance: true,
        skipBlockGasLimitValidation: true,
        skipHardForkValidation: true,
        keelSkipSenderCodeCheck: true,
        reportAccessList,
      }
      if (tracer === undefined) {
        result = await runTx(s.vm, opts)
      } else {
        tracer.attach(s.vm.evm as EVM)
        try {
          result = await runTx(s.vm, opts)
        } finally {
          tracer.detach()
        }
        await tracer.end?.(s.sm)
      }
    } catch (err) {
      // a tracer's stop (debug_traceCall) is not the call's
      if (err instanceof TraceTimeout || err instanceof TraceTooLarge) throw err
      throw new PrecheckError(cleanRunTxError((err as Error).message), 'rejected')
    } finally {
      await s.vm.evm.journal.revert()
    }
    const used = tx.getIntrinsicGas() + result.execResult.executionGasUsed
    const minimum = tx.getMinimumGasLimit()
    return outcomeOf(result, used > minimum ? used : minimum)
  }

  private async affords(s: StateVm, args: ExecCallArgs, gasLimit: bigint): Promise<boolean> {
    try {
      await this.fundedSender(s, args, gasLimit)
      return true
    } catch (err) {
      if (err instanceof PrecheckError) return false
      throw err
    }
  }

  /** The sender, which must afford gas * price + value as geth's buyGas demands (also for eth_call). */
  private async fundedSender(s: StateVm, args: ExecCallArgs, gasLimit: bigint): Promise<{ address: Address; account: Account }> {
    const address = addressOf(args.from ?? DEFAULT_SENDER)
    const account = (await s.sm.getAccount(address)) ?? new Account()
    const cost = gasLimit * (args.maxFeePerGas ?? args.gasPrice ?? 0n) + (args.value ?? 0n)
    if (account.balance < cost) {
      throw insufficientFunds(address.toString(), account.balance, cost)
    }
    return { address, account }
  }

  /**
   * The common eth_call: a message to an address that names no fee and no authorizations. For it,
   * runTx's bookkeeping (fee debit, miner credit, receipt, bloom) cannot change the result, so the EVM runs
   * the message directly after the same preparation: intrinsic gas taken, origin, precompiles, target and
   * coinbase warm (EIP-2929/3651), the access list warm. About half the cost of going through runTx.
   */
  private async plainCall(s: StateVm, block: Block, task: CallTask, gasLimit: bigint): Promise<Outcome> {
    const args = task.args
    const { account } = await this.fundedSender(s, args, gasLimit)
    const gas = messageGas(s.vm.common, args.data ?? EMPTY, args.accessList) ?? this.txGas(s, args, gasLimit, account.nonce)
    const gasError = gasLimitCheck(gasLimit, gas)
    if (gasError !== undefined) throw gasError
    return this.runDirect(s, block, args, account, gasLimit, gas)
  }

  /** Intrinsic gas, the least gas limit and the floor, from a transaction object (forks messageGas does not model). */
  private txGas(s: StateVm, args: ExecCallArgs, gasLimit: bigint, nonce: bigint): MessageGas {
    const tx = this.buildTx(s.vm.common, args, gasLimit, nonce)
    return { intrinsic: tx.getIntrinsicGas(), minimum: tx.getMinimumGasLimit(), floor: getCalldataFloorGas(tx, addressOf(args.from ?? DEFAULT_SENDER)) }
  }

  /** Runs a plain message in the EVM with runTx's preparation and gas accounting (see isPlainMessage). */
  private async runDirect(s: StateVm, block: Block, args: ExecCallArgs, sender: Account, gasLimit: bigint, gas: MessageGas): Promise<Outcome> {
    const caller = addressOf(args.from ?? DEFAULT_SENDER)
    const to = addressOf(args.to as string)
    const evm = s.vm.evm
    const journal = evm.journal
    // set directly by their unprefixed hex (the precompiles' keys are): addAlwaysWarmAddress would run a
    // regex on each, and give each its own empty set of warm slots
    const warm = (journal as unknown as { alwaysWarmJournal: Map<string, Set<string>> }).alwaysWarmJournal
    const accessList = args.accessList
    const slots = accessList === undefined ? NO_WARM_SLOTS : undefined
    for (const address of evm.precompiles.keys()) warmAddress(warm, address, slots)
    warmAddress(warm, journalKeyOf(caller), slots)
    warmAddress(warm, journalKeyOf(to), slots)
    if (s.vm.common.isActivatedEIP(3651)) warmAddress(warm, journalKeyOf(block.header.coinbase), slots)
    for (const item of accessList ?? []) {
      journal.addAlwaysWarmAddress(item.address, true)
      for (const key of item.storageKeys) journal.addAlwaysWarmSlot(item.address, key, true)
    }
    s.sm.originalStorageCache.clear()
    // runTx bumps the sender's nonce first; no opcode can see it unless the sender has (EIP-7702
    // delegated) code that CREATEs, so for a plain EOA the journal write is skipped
    const { execResult } = await evm.runCall({
      block,
      gasPrice: 0n,
      caller,
      origin: caller,
      to,
      value: args.value ?? 0n,
      data: args.data ?? EMPTY,
      gasLimit: gasLimit - gas.intrinsic,
      skipBalance: true,
      skipNonceIncrement: !sender.isContract(),
    })
    s.sm.originalStorageCache.clear()
    const used = gas.intrinsic + execResult.executionGasUsed
    const refund = execResult.gasRefund ?? 0n
    const spent = gasSpent(used, refund, gas.floor)
    const needed = used > gas.minimum ? used : gas.minimum
    return outcomeOf({ execResult, totalGasSpent: spent, gasRefund: refund } as RunTxResult, needed)
  }

  /**
   * A plain message (see isPlainMessage) run in the EVM directly with `list` as its access list, reporting
   * what it touched as runTx's reportAccessList does: the listed entries, and the addresses and slots
   * the code reached that were not warm from the start (sender, recipient, precompiles, coinbase).
   */
  private async listingRun(s: StateVm, block: Block, task: CallTask, gasLimit: bigint, list: ExecAccessListItem[]): Promise<Outcome> {
    const journal = s.vm.evm.journal as typeof s.vm.evm.journal & ListingJournal
    // what an earlier run of the task warmed for good (its list) must not carry over: runTx starts clean too
    journal.alwaysWarmJournal = new Map()
    journal.startReportingAccessList()
    await journal.checkpoint()
    try {
      const outcome = await this.plainCall(s, block, { ...task, args: { ...task.args, accessList: list } }, gasLimit)
      const touched: NonNullable<RunTxResult['accessList']> = []
      for (const [address, slots] of journal.accessList!) {
        const storageKeys: PrefixedHexString[] = []
        for (const slot of slots) storageKeys.push(`0x${slot}`)
        touched.push({ address: `0x${address}`, storageKeys })
      }
      outcome.result.accessList = touched
      return outcome
    } finally {
      await journal.revert()
      journal.accessList = undefined
    }
  }

  private callResult(outcome: Outcome): string {
    const ret = bytesToHex(outcome.result.execResult.returnValue)
    if (outcome.kind === 'success') return ret
    if (outcome.kind === 'revert') throw executionReverted(decodeRevertReason(ret), ret)
    throw serverError(outcome.message)
  }

  private async estimate(task: CallTask): Promise<bigint> {
    return this.withState(task, async (s, block) => {
      const args = task.args
      const ceiling = this.gasCeiling(s.vm.common)
      // geth: the gas the request names if it is at least 21000, else the block's gas limit
      const named = args.gas !== undefined && args.gas >= 21000n ? args.gas : undefined
      let hi = named !== undefined && named < ceiling ? named : ceiling
      if (block.header.gasLimit < hi && named === undefined) hi = block.header.gasLimit
      // a fee-paying sender cannot buy more gas than its balance allows
      const feeCap = args.maxFeePerGas ?? args.gasPrice ?? 0n
      if (feeCap > 0n) {
        const from = addressOf(args.from ?? DEFAULT_SENDER)
        const balance = (await s.sm.getAccount(from))?.balance ?? 0n
        const value = args.value ?? 0n
        if (value >= balance) throw serverError('insufficient funds for transfer')
        const allowance = (balance - value) / feeCap
        if (allowance < hi) hi = allowance
      }
      // a plain transfer to an account without code costs exactly 21000, if the sender can send it at that
      // (else the search below fails as geth's does)
      if (args.to && (args.data === undefined || args.data.length === 0) && args.authorizationList === undefined && hi >= 21000n) {
        const code = await s.sm.getCode(addressOf(args.to as string))
        if (code.length === 0 && feeCheck(args, block.header.baseFeePerGas ?? 0n) === undefined && (await this.affords(s, args, 21000n))) return 21000n
      }
      const tryLimit = await this.prober(s, block, task)
      // geth's estimator: "failed with %d gas: %w" around what ApplyMessage refused
      const probe = async (limit: bigint): Promise<Outcome> => {
        try {
          return await tryLimit(limit)
        } catch (err) {
          if (err instanceof PrecheckError) throw serverError(`failed with ${limit} gas: ${err.message}`)
          throw err
        }
      }
      const evm = s.vm.evm as typeof s.vm.evm & WatchedEvm
      const watch = new GasWatch()
      evm.keelGasWatch = watch
      let first: Outcome
      try {
        first = await probe(hi)
      } finally {
        evm.keelGasWatch = undefined
      }
      if (first.kind === 'revert') this.callResult(first)
      if (first.kind !== 'success') {
        if (first.kind === 'evmError' && first.message !== 'out of gas') throw serverError(first.message)
        throw serverError(`gas required exceeds allowance (${hi})`)
      }
      // Below the gas the execution consumed before refunds it cannot succeed; at exactly that it
      // succeeds when no step depended on the gas left (see gas-watch.ts), and usually does anyway,
      // which makes most estimates one or two executions and the answer the true minimum. Otherwise
      // (gas-dependent paths: the 63/64 rule, a stipend) geth's search from there on.
      const needed = first.needed
      let lo = needed - 1n
      if (needed < hi) {
        if (watch.sameWith(hi - needed)) return needed
        if ((await probe(needed)).kind === 'success') return needed
        lo = needed
        const optimistic = ((needed + CALL_STIPEND) * 64n) / 63n
        if (optimistic < hi) {
          if ((await probe(optimistic)).kind === 'success') hi = optimistic
          else lo = optimistic
        }
      }
      while (lo + 1n < hi) {
        if (Number(hi - lo) / Number(hi) < ESTIMATE_ERROR_RATIO) break
        let mid = (hi + lo) / 2n
        if (mid > lo * 2n) mid = lo * 2n
        if ((await probe(mid)).kind === 'success') hi = mid
        else lo = mid
      }
      return hi
    })
  }

  /**
   * How the estimate tries one gas limit: a plain message (see isPlainMessage) runs in the EVM directly,
   * anything else through runTx; each probe in its own checkpoint, reverted.
   */
  private async prober(s: StateVm, block: Block, task: CallTask): Promise<(gas: bigint) => Promise<Outcome>> {
    const args = task.args
    const gas = isPlainMessage(args) ? messageGas(s.vm.common, args.data ?? EMPTY, args.accessList) : undefined
    if (gas === undefined) return (limit) => this.runAt(s, block, task, limit)
    const journal = s.vm.evm.journal
    return async (limit) => {
      if (limit < gas.minimum) return { kind: 'evmError', result: undefined as never, message: 'out of gas', needed: gas.minimum }
      const { account } = await this.fundedSender(s, args, limit)
      await journal.checkpoint()
      try {
        return await this.runDirect(s, block, args, account, limit, gas)
      } finally {
        await journal.revert()
      }
    }
  }

  /** One probe of the estimate: an intrinsic-gas failure counts as "too little gas". */
  private async runAt(s: StateVm, block: Block, task: CallTask, gas: bigint): Promise<Outcome> {
    try {
      return await this.runOnce(s, block, task, gas)
    } catch (err) {
      if (err instanceof RpcError && /intrinsic gas|gas limit|floor data gas/i.test(err.message)) {
        return { kind: 'evmError', result: undefined as never, message: 'out of gas', needed: gas + 1n }
      }
      throw err
    }
  }

  private async accessList(task: CallTask): Promise<ExecResult> {
    return this.withState(task, async (s, block) => {
      const gas = this.callGas(task)
      const from = (task.args.from ?? DEFAULT_SENDER).toLowerCase()
      const to = task.args.to?.toLowerCase()
      let list = task.args.accessList ?? []
      let outcome: Outcome | undefined
      // geth iterates until the list stops changing (adding entries changes gas and can change paths) and
      // answers the gas of the run that listed what it ran with
      const plain = isPlainMessage(task.args)
      let gasUsed: bigint | undefined
      const stopReporting = reportCoinbaseTouches(s.vm.evm.journal as unknown as ReportingJournal, block.header.coinbase.bytes)
      try {
        for (let i = 0; i < 4 && outcome === undefined; i++) {
          // a first run without a list, of a message (no creation, no authorizations), is watched: the run
          // with what it finds may be derivable from it
          const watched = i === 0 && list.length === 0 && isMessage(task.args) ? new WatchedListing(s) : undefined
          const listing = plain ? () => this.listingRun(s, block, task, gas, list) : () => this.runOnce(s, block, task, gas, list, true)
          const run = watched === undefined ? await listing() : await watched.during(listing)
          const reported = (run.result.accessList ?? [])
            .map((item) => ({ address: item.address.toLowerCase(), storageKeys: item.storageKeys.map((k) => k.toLowerCase()) }))
            // geth's tracer leaves out the sender, the recipient and precompiles as bare addresses only:
            // the slots a call reads or writes are listed whoever holds them, the recipient's too
            .filter((item) => item.storageKeys.length > 0 || (item.address !== from && item.address !== to && !isPrecompile(item.address)))
          if (sameList(reported, list)) {
            outcome = run
            break
          }
          list = reported
          gasUsed = watched?.gasWithList(run, task.args.data ?? EMPTY, list, gas)
          if (gasUsed !== undefined) outcome = run
        }
      } finally {
        stopReporting()
      }
      outcome ??= await this.runOnce(s, block, task, gas, list)
      const result: ExecResult = { ok: true, kind: 'createAccessList', accessList: list, gasUsed: gasUsed ?? outcome.result.totalGasSpent }
      if (outcome.kind === 'revert') result.error = 'execution reverted'
      else if (outcome.kind === 'evmError') result.error = outcome.message
      return result
    })
  }
}

/** The journal's fields a listing run resets (both are plain properties of @ethereumjs/evm's Journal). */
interface ListingJournal {
  alwaysWarmJournal: Map<string, Set<string>>
  accessList: Map<string, Set<string>> | undefined
}

/** runTx's options with the patched (patches/) EIP-3607 switch: geth's eth_call lets a contract be the sender. */
type CallRunTxOpts = Parameters<typeof runTx>[1] & { keelSkipSenderCodeCheck: boolean }

/**
 * A listing run watched for what its gas depended on and what it touched cold (cold-accesses.ts): when
 * nothing depended on the gas, the run with the list it found takes the same path, so its gas is this
 * run's less what the list makes warm, plus the list's intrinsic gas, with runTx's accounting.
 */
class WatchedListing {
  private readonly watch = new GasWatch()
  private readonly cold: ColdAccesses

  constructor(private readonly s: StateVm) {
    this.cold = new ColdAccesses(s.vm.common)
  }

  async during(run: () => Promise<Outcome>): Promise<Outcome> {
    const evm = this.s.vm.evm as typeof this.s.vm.evm & WatchedEvm
    const stop = this.cold.watch(evm.journal as unknown as WarmingJournal, this.watch)
    evm.keelGasWatch = this.watch
    try {
      return await run()
    } finally {
      evm.keelGasWatch = undefined
      stop()
    }
  }

  /** The gas a run with `list` would answer, or undefined when only running it can tell. */
  gasWithList(run: Outcome, data: Uint8Array, list: ExecAccessListItem[], gasLimit: bigint): bigint | undefined {
    if (run.kind !== 'success' && run.kind !== 'revert') return undefined
    if (this.watch.steps === 0 || this.watch.gasDependent || this.cold.unknown) return undefined
    const before = messageGas(this.s.vm.common, data, [])
    const listed = messageGas(this.s.vm.common, data, list)
    if (before === undefined || listed === undefined) return undefined
    const { execResult } = run.result
    // the listed run starts with less gas (the list's intrinsic gas) and gains it back as it goes; with at
    // least that, and SSTORE's 2300 sentry, left at the end of this run, no step of it can fall short
    const left = gasLimit - before.intrinsic - execResult.executionGasUsed
    if (left <= listed.intrinsic - before.intrinsic + SSTORE_SENTRY) return undefined
    return gasSpent(listed.intrinsic + execResult.executionGasUsed - this.cold.saving, execResult.gasRefund ?? 0n, listed.floor)
  }
}

/**
 * runTx's accounting of the gas a transaction pays: refunds capped at a fifth of the gas used, then the
 * EIP-7623 floor (refunds may take it below the intrinsic gas, not below the floor).
 */
function gasSpent(used: bigint, refund: bigint, floor: bigint): bigint {
  const spent = used - (refund < used / 5n ? refund : used / 5n)
  return spent < floor ? floor : spent
}

/** A call to an address (not a creation) that carries no authorizations. */
function isMessage(a: ExecCallArgs): boolean {
  return a.to !== undefined && a.to !== null && a.authorizationList === undefined
}

/** A call that names no fee pays none (geth's NoBaseFee): it runs against a zero base fee. */
function paysFee(a: ExecCallArgs): boolean {
  return (a.gasPrice ?? 0n) > 0n || (a.maxFeePerGas ?? 0n) > 0n
}

/** A message that pays no fee: see plainCall. */
function isPlainMessage(a: ExecCallArgs): boolean {
  return isMessage(a) && !paysFee(a) && (a.maxPriorityFeePerGas ?? 0n) === 0n
}

function outcomeOf(result: RunTxResult, needed: bigint): Outcome {
  const error = result.execResult.exceptionError
  if (error === undefined) return { kind: 'success', result, needed }
  if (error.error === 'revert') return { kind: 'revert', result, needed }
  return { kind: 'evmError', result, message: haltMessage(error as HaltError), needed }
}

/**
 * Every tx and header constructor copies its Common and re-merges its parameter tables (updateParams
 * rebuilds the whole params cache): ~40% of a simple call's time. A state VM's Common already holds
 * every table, and a call's tx and header only read it, so they may share it as it is.
 */
function shareCommon(common: Common): void {
  common.updateParams(paramsTx)
  common.updateParams(paramsBlock)
  const shared = common as Common & { copy(): Common; updateParams(): Common }
  shared.copy = () => common
  shared.updateParams = () => common
}

function isPrecompile(address: string): boolean {
  const n = BigInt(address)
  return n > 0n && n <= 0x11n || n === 0x100n
}

function sameList(a: ExecAccessListItem[], b: ExecAccessListItem[]): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) {
    if (a[i].address !== b[i].address || a[i].storageKeys.length !== b[i].storageKeys.length) return false
    for (let j = 0; j < a[i].storageKeys.length; j++) if (a[i].storageKeys[j] !== b[i].storageKeys[j]) return false
  }
  return true
}
