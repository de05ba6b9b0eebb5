// What a call task carries into the execution engine (structured-clone safe: it crosses into workers).

import type { RpcErrorShape } from '../errors.js'

/** The sender of a call that names none (geth's TransactionArgs.from()). */
export const DEFAULT_SENDER = '0x0000000000000000000000000000000000000000'

export interface ExecBlock {
  number: bigint
  hash: string
  parentHash: string
  timestamp: bigint
  baseFeePerGas: bigint
  gasLimit: bigint
  coinbase: string
  prevRandao: string
  stateRoot: string
}

export interface ExecAccessListItem {
  address: string
  storageKeys: string[]
}

export interface ExecAuthorization {
  chainId: bigint
  address: string
  nonce: bigint
  yParity: bigint
  r: bigint
  s: bigint
}

export interface ExecCallArgs {
  from?: string
  /** undefined or null: contract creation */
  to?: string | null
  gas?: bigint
  gasPrice?: bigint
  maxFeePerGas?: bigint
  maxPriorityFeePerGas?: bigint
  value?: bigint
  data?: Uint8Array
  nonce?: bigint
  accessList?: ExecAccessListItem[]
  authorizationList?: ExecAuthorization[]
}

export interface ExecAccountOverride {
  balance?: bigint
  nonce?: bigint
  code?: Uint8Array
  /** replaces the whole storage */
  state?: Record<string, string>
  /** patches individual slots */
  stateDiff?: Record<string, string>
  /** the precompile at this address moves there (geth's state override) */
  movePrecompileToAddress?: string
}

export interface ExecBlockOverrides {
  number?: bigint
  time?: bigint
  gasLimit?: bigint
  feeRecipient?: string
  prevRandao?: string
  baseFeePerGas?: bigint
  /** what BLOBBASEFEE reads instead of the price the header's excess blob gas gives */
  blobBaseFee?: bigint
}

export type ExecKind = 'call' | 'estimateGas' | 'createAccessList'

export interface CallTask {
  kind: ExecKind
  block: ExecBlock
  args: ExecCallArgs
  stateOverrides?: Record<string, ExecAccountOverride>
  blockOverrides?: ExecBlockOverrides
}

/** An EIP-4895 withdrawal a simulated block credits (amount in gwei). */
export interface ExecWithdrawal {
  index: bigint
  validatorIndex: bigint
  address: string
  amount: bigint
}

export interface SimBlockOverrides extends ExecBlockOverrides {
  withdrawals?: ExecWithdrawal[]
  beaconRoot?: string
}

/** One block of eth_simulateV1: its overrides and the calls it runs in order. */
export interface SimBlockSpec {
  blockOverrides?: SimBlockOverrides
  stateOverrides?: Record<string, ExecAccountOverride>
  calls: ExecCallArgs[]
}

/** eth_simulateV1: blocks built on top of `block`, each call seeing the state the ones before left. */
export interface SimulateTask {
  kind: 'simulate'
  block: ExecBlock
  blocks: SimBlockSpec[]
  traceTransfers: boolean
  validation: boolean
  fullTransactions: boolean
}

/**
 * How debug_trace* reports an execution (geth's TraceConfig): the default struct logger (every opcode
 * step) or a named native tracer, and the time the trace may take.
 */
export type TracerName = 'structLogger' | 'callTracer' | 'prestateTracer' | '4byteTracer' | 'noopTracer' | 'muxTracer'

export interface TraceOptions {
  tracer: TracerName
  /** geth's trace timeout (default 5 s), at most the pool's per-call limit */
  timeoutMs: number
  /** the most bytes of JSON a trace may come to (the batch response limit); 0 = no limit */
  maxBytes: number
  // the struct logger's (geth's logger.Config)
  enableMemory: boolean
  disableStack: boolean
  disableStorage: boolean
  enableReturnData: boolean
  /** the most steps recorded; 0 = all */
  limit: number
  // callTracer's tracerConfig
  onlyTopCall: boolean
  withLog: boolean
  /** prestateTracer's tracerConfig */
  prestate: { diffMode: boolean; disableCode: boolean; disableStorage: boolean }
  /** muxTracer's tracers, each with the name its result is reported under, in the order of the names */
  mux: { name: string; options: TraceOptions }[]
}

/** The start of a mined block, to replay on its parent's state: its system calls, then these transactions. */
export interface BlockPrefix {
  /** the block's header, its EVM context */
  headerRlp: Uint8Array
  /** the parent's state root, where the replay starts */
  parentStateRoot: string
  /** the block's first transactions, as the block holds them, and their senders */
  txs: Uint8Array[]
  senders: string[]
}

/**
 * debug_traceTransaction and debug_traceBlockBy*: the block's transactions (up to the last traced one)
 * replayed on its parent's state (system calls first, as the block was built), those at `traced` reported.
 */
export interface TraceBlockTask extends BlockPrefix {
  kind: 'traceBlock'
  /** one transaction's trace (debug_traceTransaction), or each transaction's with its hash */
  mode: 'transaction' | 'block'
  /** indexes of the transactions to report, ascending */
  traced: number[]
  options: TraceOptions
}

/**
 * debug_traceBlock: a block that is not the chain's, as the client sent its RLP, traced whole on the state
 * of the parent its header names. The worker decodes it and recovers its senders (trace/foreign-block.ts).
 */
export interface TraceForeignBlockTask {
  kind: 'traceForeignBlock'
  blockRlp: Uint8Array
  parentStateRoot: string
  options: TraceOptions
}

/** What a call runs, whatever the method that runs it. */
export type CallSpec = Omit<CallTask, 'kind'>

/** debug_traceCall: eth_call's message, reported by a tracer. */
export interface TraceCallTask extends CallSpec {
  kind: 'traceCall'
  options: TraceOptions
  /**
   * TraceCallConfig.txIndex: the call runs on the state within its block, before the transaction at that
   * index (the block replayed up to it), instead of the state after the block.
   */
  within?: BlockPrefix
}

/** debug_storageRangeAt: an account's storage slots from a start key, within a block before one of its transactions. */
export interface StorageRangeTask {
  kind: 'storageRange'
  /** the block up to the transaction: the slots are read on the state before it */
  at: BlockPrefix
  /** lower-case 0x address */
  address: string
  /** the hashed key to start from (as geth's hexutil.Bytes: any length) */
  start: Uint8Array
  maxResult: number
  /** the answer's limit (--batch-response-max-size; 0: none): past it, -32003 */
  maxBytes: number
}

export type ExecTask = CallTask | SimulateTask | TraceBlockTask | TraceForeignBlockTask | TraceCallTask | StorageRangeTask

export type ExecResult =
  | { ok: true; kind: 'call'; returnData: string }
  | { ok: true; kind: 'simulate'; json: string }
  /** one trace's JSON, or for a block the JSON array of its transactions' traces */
  | { ok: true; kind: 'trace'; json: string }
  /** geth's StorageRangeResult, as JSON */
  | { ok: true; kind: 'storageRange'; json: string }
  | { ok: true; kind: 'estimateGas'; gas: bigint }
  | { ok: true; kind: 'createAccessList'; accessList: ExecAccessListItem[]; gasUsed: bigint; error?: string }
  | { ok: false; error: RpcErrorShape }

export interface ExecLimits {
  gasCap: bigint
  timeoutMs: number
}
