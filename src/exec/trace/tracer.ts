// What every debug_trace* tracer shares: the interface the replay drives, the deadline of a trace, and
// a way to see the EVM's opcodes. @ethereumjs reports messages (beforeMessage / afterMessage) and, when
// something listens, every step; which opcode started a message and the logs it emitted it does not
// report, so a tracer that needs them runs the EVM on a copy of its opcode table with those handlers
// wrapped (as sim-log-tracer.ts does), and puts the original back when it detaches.

import type { StateManagerInterface } from '@ethereumjs/common'
import type { EVM, EVMResult, InterpreterStep, Message } from '@ethereumjs/evm'
import type { TypedTransaction } from '@ethereumjs/tx'
import { Address, bigIntToBytes, bytesToHex, eoaCode7702RecoverAuthority, setLengthLeft } from '@ethereumjs/util'
import type { EOACode7702AuthorizationListBytesItem } from '@ethereumjs/util'
import type { RunTxResult } from '@ethereumjs/vm'
import { serverError } from '../../errors.js'

export interface TxTracer {
  /** listens to `evm` for the next transaction */
  attach(evm: EVM): void
  /** leaves `evm` as attach found it */
  detach(): void
  /** before the transaction runs: the state it starts from (the tracers that read state) */
  begin?(start: TxStart): Promise<void>
  /** once it has run, before the state is rolled back or moves on: the state it left */
  end?(stateManager: StateManagerInterface): Promise<void>
  /** the trace of the transaction runTx just ran, as JSON text */
  result(run: RunTxResult): string
}

/** What a transaction about to run names, for TxTracer.begin. */
export interface TxStart {
  stateManager: StateManagerInterface
  from: Address
  /** undefined: a creation */
  to: Address | undefined
  /** the sender's nonce, which a creation's address comes from */
  nonce: bigint
  coinbase: Address
  /** EIP-7702 authorities the transaction names */
  authorities: Address[]
}

/** What `tx` names as it starts, its sender as the transaction object gives it (a call's: the one it names). */
export function txStart(tx: TypedTransaction, stateManager: StateManagerInterface, coinbase: Address): TxStart {
  return {
    stateManager,
    from: tx.getSenderAddress(),
    to: tx.to,
    nonce: tx.nonce,
    coinbase,
    authorities: authoritiesOf((tx as { authorizationList?: EOACode7702AuthorizationListBytesItem[] }).authorizationList),
  }
}

/** The EIP-7702 authorities of an authorization list; one whose signature does not recover is skipped, as geth skips it. */
function authoritiesOf(list: readonly EOACode7702AuthorizationListBytesItem[] | undefined): Address[] {
  const out: Address[] = []
  for (const item of list ?? []) {
    try {
      out.push(eoaCode7702RecoverAuthority(item))
    } catch {
      // not a valid signature: the transaction's processing skips it too
    }
  }
  return out
}

/** Thrown from inside the EVM when a trace runs past its time: runTx gives it back as it is. */
export class TraceTimeout extends Error {
  constructor() {
    super('execution timeout')
  }
}

/** geth's answer to a trace that ran out of time. */
export const traceTimeoutError = () => serverError('execution timeout')

/** A trace whose JSON passed the response limit: thrown as soon as that is known, from inside the EVM too. */
export class TraceTooLarge extends Error {
  constructor(readonly maxBytes: number) {
    super(`response too large: the trace passed ${maxBytes} bytes (--batch-response-max-size); ask for fewer steps with "limit", or leave out memory, stack or storage`)
  }
}

/** The trace's JSON, unless it passed `maxBytes` (0: no limit). */
export function withinLimit(json: string, maxBytes: number): string {
  if (maxBytes > 0 && json.length > maxBytes) throw new TraceTooLarge(maxBytes)
  return json
}

/** The moment a trace must stop by (performance.now() time). */
export class Deadline {
  constructor(private readonly at: number) {}

  static after(ms: number): Deadline {
    return new Deadline(performance.now() + ms)
  }

  /** `ms` from now, or `bound`'s moment if that comes first. */
  static earliest(bound: Deadline, ms: number): Deadline {
    return new Deadline(Math.min(bound.at, performance.now() + ms))
  }

  check(): void {
    if (performance.now() >= this.at) throw new TraceTimeout()
  }
}

/** A tracer's listeners on the EVM's events; a step listener that takes a resolve() is waited for. */
export interface EvmListeners {
  step?: (step: InterpreterStep, resolve?: () => void) => void
  beforeMessage?: (message: Message) => void
  afterMessage?: (result: EVMResult) => void
}

/** Adds `listeners` to `evm`'s events; returns what takes them off again. */
export function listen(evm: EVM, listeners: EvmListeners): () => void {
  // the EVM's emitter types each event's listener; these are the ones EvmListeners names
  const events = evm.events as unknown as { on(event: string, listener: unknown): void; off(event: string, listener: unknown): void }
  const added = Object.entries(listeners)
  for (const [event, listener] of added) events.on(event, listener)
  return () => {
    for (const [event, listener] of added) events.off(event, listener)
  }
}

const ADDRESS_MASK = (1n << 160n) - 1n

/** The address a stack word names: its low 20 bytes, as the EVM reads it. */
export const stackAddress = (word: bigint): Address => new Address(setLengthLeft(bigIntToBytes(word & ADDRESS_MASK), 20))

/** What an opcode handler of @ethereumjs's table is given: the running frame's state. */
export interface OpRunState {
  stack: { peek(n: number): bigint[] }
  memory: { read(offset: number, length: number, copy?: boolean): Uint8Array }
  /** the gas a call or creation gives, as its gas handler worked it out */
  messageGasLimit?: bigint
  interpreter: {
    _result: { logs: [Uint8Array, Uint8Array[], Uint8Array][] }
    _env: { address: { bytes: Uint8Array; toString(): string }; contract: { balance: bigint; nonce: bigint }; isStatic: boolean; depth: number }
  }
}

type OpHandler = (runState: OpRunState, common: unknown) => unknown

interface OpEntry {
  opHandler: OpHandler
}

interface EvmTables {
  _opcodeMap: OpEntry[]
}

/**
 * Runs `evm` on a copy of its opcode table in which each of `ops` calls `wrap`'s handler instead of its
 * own (which it is given). Returns what puts the original table back.
 */
export function wrapOpcodes(evm: EVM, ops: readonly number[], wrap: (op: number, run: OpHandler) => OpHandler): () => void {
  const tables = evm as unknown as EvmTables
  const original = tables._opcodeMap
  const table = original.slice()
  for (const op of ops) {
    const entry = table[op]
    if (entry === undefined) continue
    table[op] = { ...entry, opHandler: wrap(op, entry.opHandler) }
  }
  tables._opcodeMap = table
  return () => {
    tables._opcodeMap = original
  }
}

/** The bytes as hex digits without 0x (geth's "%x"). */
export const hexDigits = (bytes: Uint8Array): string => bytesToHex(bytes).slice(2)
