// geth's native callTracer (eth/tracers/native/call.go): the tree of call frames a transaction made,
// each with its type, from, to, value, gas given and used, input, output, error and revert reason;
// with `withLog`, the logs each frame emitted (with their position among its calls), and none of a
// frame that failed or of any frame below one; with `onlyTopCall`, the transaction's own frame only.
//
// The top frame's gas is the transaction's gas limit and its gasUsed the receipt's. A SELFDESTRUCT is a
// frame of its own (no gas, the balance it sends as its value), as geth reports it. So is a CALL,
// CALLCODE or creation that fails before it starts (more value than the caller holds, the call depth
// limit), for which @ethereumjs starts no message: geth enters its frame before those checks.

import type { EVM, EVMResult, Message } from '@ethereumjs/evm'
import { bytesToHex } from '@ethereumjs/util'
import type { RunTxResult } from '@ethereumjs/vm'
import { quantity } from '../../util/hex.js'
import { haltMessage } from '../halt-message.js'
import type { HaltError } from '../halt-message.js'
import { decodeRevertReason } from '../revert.js'
import { listen, stackAddress, wrapOpcodes } from './tracer.js'
import type { Deadline, OpRunState, TxTracer } from './tracer.js'
import { CALL, CALL_STIPEND, CALLCODE, CREATE, CREATE2, DELEGATECALL, LOG0, LOG4, SELFDESTRUCT, STATICCALL } from './opcodes.js'

/** @ethereumjs's stackLimit: a frame this deep starts no call */
const MAX_DEPTH = 1024
const EMPTY = new Uint8Array(0)

const TYPE_NAMES: Record<number, string> = {
  [CREATE]: 'CREATE',
  [CALL]: 'CALL',
  [CALLCODE]: 'CALLCODE',
  [DELEGATECALL]: 'DELEGATECALL',
  [CREATE2]: 'CREATE2',
  [STATICCALL]: 'STATICCALL',
  [SELFDESTRUCT]: 'SELFDESTRUCT',
}

interface CallLog {
  address: string
  topics: string[]
  data: string
  position: number
}

interface CallFrame {
  type: number
  from: string
  to: string | undefined
  gas: bigint
  gasUsed: bigint
  input: Uint8Array
  output?: Uint8Array
  error?: string
  revertReason?: string
  calls: CallFrame[]
  logs: CallLog[]
  value: bigint | undefined
}

export class CallTracer implements TxTracer {
  private stack: CallFrame[] = []
  private root: CallFrame | undefined
  /** the opcode whose handler is running and has not yet started its message */
  private pendingOp = CALL
  /** messages started so far: a call's handler that started none failed before its frame */
  private entered = 0
  /** puts the EVM's opcode table and listeners back as attach found them */
  private release: (() => void) | undefined

  constructor(
    private readonly gasLimit: bigint,
    private readonly deadline: Deadline,
    private readonly onlyTopCall: boolean,
    private readonly withLog: boolean,
  ) {}

  attach(evm: EVM): void {
    const ops = [CREATE, CALL, CALLCODE, DELEGATECALL, CREATE2, STATICCALL, SELFDESTRUCT]
    if (this.withLog) for (let op = LOG0; op <= LOG4; op++) ops.push(op)
    const restore = wrapOpcodes(evm, ops, (op, run) => {
      if (op >= LOG0 && op <= LOG4) {
        return (runState, common) => {
          run(runState, common)
          this.log(runState)
        }
      }
      if (op === SELFDESTRUCT) {
        return async (runState, common) => {
          this.selfdestruct(runState)
          await run(runState, common)
        }
      }
      return async (runState, common) => {
        this.deadline.check()
        this.pendingOp = op
        const attempt = this.failingAttempt(op, runState)
        const entered = this.entered
        await run(runState, common)
        const frame = this.stack[this.stack.length - 1]
        if (attempt !== undefined && this.entered === entered && frame !== undefined && !this.onlyTopCall) frame.calls.push(attempt)
      }
    })
    const unlisten = listen(evm, { beforeMessage: (message) => this.enter(message), afterMessage: (result) => this.exit(result) })
    this.release = () => {
      restore()
      unlisten()
    }
  }

  detach(): void {
    this.release?.()
    this.release = undefined
  }

  result(run: RunTxResult): string {
    const root = this.root
    if (root === undefined) throw new Error('internal error: the traced transaction ran no message')
    root.gas = this.gasLimit
    root.gasUsed = run.totalGasSpent
    if (this.withLog) clearFailedLogs(root, false)
    return JSON.stringify(frameJson(root))
  }

  private enter(message: Message): void {
    this.deadline.check()
    this.entered++
    const depth = message.depth
    const type = depth === 0 ? (message.to === undefined ? CREATE : CALL) : this.pendingOp
    this.pendingOp = CALL
    const frame: CallFrame = {
      type,
      // a DELEGATECALL's message keeps the caller of the frame that made it: geth names that frame's contract
      from: (type === DELEGATECALL ? message.to! : message.caller).toString(),
      to: message.to === undefined ? undefined : (type === DELEGATECALL || type === CALLCODE ? message.codeAddress : message.to).toString(),
      gas: message.gasLimit,
      gasUsed: 0n,
      // the EVM may hand a view of the caller's memory, which it writes again
      input: message.data.slice(),
      calls: [],
      logs: [],
      value: type === STATICCALL ? undefined : message.value,
    }
    if (depth === 0) this.root = frame
    this.stack.push(frame)
  }

  private exit(result: EVMResult): void {
    this.deadline.check()
    const frame = this.stack.pop()
    if (frame === undefined) return
    const exec = result.execResult
    frame.gasUsed = exec.executionGasUsed
    if (frame.to === undefined && result.createdAddress !== undefined) frame.to = result.createdAddress.toString()
    const error = exec.exceptionError
    if (error === undefined) {
      frame.output = exec.returnValue.slice()
    } else {
      const reverted = error.error === 'revert'
      frame.error = reverted ? 'execution reverted' : haltMessage(error as HaltError)
      if (frame.type === CREATE || frame.type === CREATE2) frame.to = undefined
      if (reverted && exec.returnValue.length > 0) {
        frame.output = exec.returnValue.slice()
        if (exec.returnValue.length >= 4) frame.revertReason = decodeRevertReason(bytesToHex(exec.returnValue))
      }
    }
    const parent = this.stack[this.stack.length - 1]
    if (parent !== undefined && !this.onlyTopCall) parent.calls.push(frame)
  }

  private log(runState: OpRunState): void {
    const frame = this.stack[this.stack.length - 1]
    if (frame === undefined || (this.onlyTopCall && this.stack.length > 1)) return
    const logs = runState.interpreter._result.logs
    const [address, topics, data] = logs[logs.length - 1]
    frame.logs.push({ address: bytesToHex(address), topics: topics.map((t) => bytesToHex(t)), data: bytesToHex(data), position: frame.calls.length })
  }

  /**
   * The frame geth lists for a CALL, CALLCODE or creation about to fail before it starts, if it is: one
   * that sends more than the caller holds, or one from a frame at the depth limit.
   */
  private failingAttempt(op: number, runState: OpRunState): CallFrame | undefined {
    const create = op === CREATE || op === CREATE2
    if (!create && op !== CALL && op !== CALLCODE) return undefined
    const env = runState.interpreter._env
    // the stack: [value, offset, length(, salt)] for a creation, [gas, to, value, inOffset, inLength, …] for a call
    const items = runState.stack.peek(create ? 3 : 5)
    const value = create ? items[0] : items[2]
    const deep = env.depth >= MAX_DEPTH
    if (!deep && value <= env.contract.balance) return undefined
    const [offset, length] = create ? items.slice(1) : items.slice(3)
    const gas = runState.messageGasLimit ?? 0n
    return {
      type: op,
      from: env.address.toString(),
      to: create ? undefined : stackAddress(items[1]).toString(),
      gas: !create && value > 0n ? gas + CALL_STIPEND : gas,
      gasUsed: 0n,
      input: length === 0n ? EMPTY : runState.memory.read(Number(offset), Number(length), true),
      error: deep ? 'max call depth exceeded' : 'insufficient balance for transfer',
      calls: [],
      logs: [],
      value,
    }
  }

  private selfdestruct(runState: OpRunState): void {
    const env = runState.interpreter._env
    const frame = this.stack[this.stack.length - 1]
    // a static frame's SELFDESTRUCT fails before it sends anything (geth enters no frame for it)
    if (frame === undefined || env.isStatic || this.onlyTopCall) return
    const beneficiary = stackAddress(runState.stack.peek(1)[0])
    frame.calls.push({
      type: SELFDESTRUCT,
      from: env.address.toString(),
      to: beneficiary.toString(),
      gas: 0n,
      gasUsed: 0n,
      input: new Uint8Array(0),
      calls: [],
      logs: [],
      value: env.contract.balance,
    })
  }
}

function clearFailedLogs(frame: CallFrame, parentFailed: boolean): void {
  const failed = frame.error !== undefined || parentFailed
  if (failed) frame.logs = []
  for (const call of frame.calls) clearFailedLogs(call, failed)
}

/** geth's callFrame JSON, in its field order. */
function frameJson(f: CallFrame): Record<string, unknown> {
  const out: Record<string, unknown> = {
    type: TYPE_NAMES[f.type],
    from: f.from,
    gas: quantity(f.gas),
    gasUsed: quantity(f.gasUsed),
  }
  if (f.to !== undefined) out.to = f.to
  out.input = bytesToHex(f.input)
  if (f.output !== undefined && f.output.length > 0) out.output = bytesToHex(f.output)
  if (f.error !== undefined) out.error = f.error
  if (f.revertReason !== undefined) out.revertReason = f.revertReason
  if (f.calls.length > 0) out.calls = f.calls.map(frameJson)
  if (f.logs.length > 0) out.logs = f.logs.map((l) => ({ address: l.address, topics: l.topics, data: l.data, position: quantity(l.position) }))
  if (f.value !== undefined) out.value = quantity(f.value)
  return out
}
