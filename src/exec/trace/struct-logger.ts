// geth's struct logger (eth/tracers/logger), debug_trace*'s default: one entry per opcode step with
// the program counter, the opcode, the gas left before it and what it costs (for a call, the gas it
// gives), the call depth (1 for the transaction's own frame), the stack, and with the options the
// memory, the return data of the last call and the storage slots the contract has read or written so
// far. An opcode that fails before it runs (out of gas, the stack too short or too deep) carries the error.
//
// Formats as geth's StructLogRes: stack values as 0x quantities, memory as 32-byte words and storage
// slots as 64 hex digits, both without 0x; returnValue is the output (or revert data) without 0x.

import type { EVM, EVMResult, InterpreterStep, Message } from '@ethereumjs/evm'
import { bigIntToBytes, bytesToHex, setLengthLeft } from '@ethereumjs/util'
import type { Address } from '@ethereumjs/util'
import type { RunTxResult } from '@ethereumjs/vm'
import { haltMessage } from '../halt-message.js'
import type { HaltError } from '../halt-message.js'
import { hexDigits, listen, TraceTooLarge } from './tracer.js'
import type { Deadline, TxTracer } from './tracer.js'
import type { TraceOptions } from '../types.js'
import { CALL_STIPEND, SLOAD, SSTORE } from './opcodes.js'

const CALLS = new Set(['CALL', 'CALLCODE', 'DELEGATECALL', 'STATICCALL'])

/** The halts geth finds before an opcode runs, which it reports on that opcode's entry. */
const BEFORE_RUN = new Set(['out of gas', 'stack underflow', 'stack overflow', 'value overflow'])

/** geth's names where @ethereumjs's differ. */
const GETH_NAMES: Record<string, string> = { PREVRANDAO: 'DIFFICULTY' }

interface Entry {
  pc: number
  op: string
  gas: bigint
  cost: bigint
  depth: number
  error: string | undefined
  /** the JSON of the fields after depth (and error) */
  tail: string
}

interface Frame {
  depth: number
  /** the index of this frame's last step's entry; -1 before its first, or when that step was not recorded */
  lastEntry: number
  /** the entry of a call the frame just made, whose cost waits for the gas its message is given */
  pendingCall: Entry | undefined
  /** what RETURNDATASIZE reads: the output of the frame's last call */
  returnData: Uint8Array
}

const EMPTY = new Uint8Array(0)

export class StructLogger implements TxTracer {
  /**
   * The steps; each step's JSON after its depth is text already. What comes before may still change once
   * the step has been recorded: a call's cost (the gas it gives, known when its frame starts) and the
   * error of a step that failed before it ran.
   */
  private readonly entries: Entry[] = []
  /** about how long the JSON of the entries so far is */
  private bytes = 0
  /** what stopped the trace while an SLOAD's value was read: thrown at the next step, or by result() */
  private failure: unknown
  private readonly frames: Frame[] = []
  /** per contract, the slots read or written so far and their values (64 hex digits each) */
  private readonly storage = new Map<string, Map<string, string>>()
  private unlisten: (() => void) | undefined

  constructor(
    private readonly options: TraceOptions,
    private readonly deadline: Deadline,
  ) {}

  attach(evm: EVM): void {
    this.unlisten = listen(evm, {
      step: (step, resolve?) => this.step(step, resolve!),
      beforeMessage: (message) => this.enter(message),
      afterMessage: (result) => this.exit(result),
    })
  }

  detach(): void {
    this.unlisten?.()
    this.unlisten = undefined
  }

  result(run: RunTxResult): string {
    if (this.failure !== undefined) throw this.failure
    const exec = run.execResult
    const error = exec.exceptionError
    const returnValue = error === undefined || error.error === 'revert' ? hexDigits(exec.returnValue) : ''
    const logs: string[] = new Array(this.entries.length)
    for (let i = 0; i < logs.length; i++) {
      const e = this.entries[i]
      const err = e.error === undefined ? '' : `,"error":${JSON.stringify(e.error)}`
      logs[i] = `{"pc":${e.pc},"op":"${e.op}","gas":${e.gas},"gasCost":${e.cost},"depth":${e.depth}${err}${e.tail}}`
    }
    return `{"gas":${run.totalGasSpent},"failed":${error !== undefined},"returnValue":"${returnValue}","structLogs":[${logs.join(',')}]}`
  }

  private enter(message: Message): void {
    const caller = this.frames[this.frames.length - 1]
    const call = caller?.pendingCall
    // geth's cost of a call includes the gas it gives (its callGasTemp); the callee starts with that and,
    // for a CALL or CALLCODE with value, the stipend
    if (call !== undefined) {
      const stipend = message.value > 0n && (call.op === 'CALL' || call.op === 'CALLCODE') ? CALL_STIPEND : 0n
      call.cost += message.gasLimit - stipend
      caller!.pendingCall = undefined
    }
    this.frames.push({ depth: message.depth + 1, lastEntry: -1, pendingCall: undefined, returnData: EMPTY })
  }

  private exit(result: EVMResult): void {
    const frame = this.frames.pop()
    if (frame === undefined) return
    const exec = result.execResult
    const error = exec.exceptionError
    const last = frame.lastEntry < 0 ? undefined : this.entries[frame.lastEntry]
    if (error !== undefined && BEFORE_RUN.has(error.error) && last !== undefined && last.error === undefined) {
      last.error = haltMessage(error as HaltError)
    }
    const parent = this.frames[this.frames.length - 1]
    if (parent === undefined) return
    // EIP-211: a call leaves its output; a creation only its revert data
    const created = result.createdAddress !== undefined
    parent.returnData = created && error?.error !== 'revert' ? EMPTY : exec.returnValue.slice()
  }

  private step(step: InterpreterStep, resolve: () => void): void {
    if (this.failure !== undefined) throw this.failure
    this.deadline.check()
    const limit = this.options.limit
    const frame = this.frames[this.frames.length - 1]
    if (frame === undefined) {
      resolve()
      return
    }
    if (limit !== 0 && this.entries.length >= limit) {
      // past the limit: this step has no entry, for an error or a call's gas to land on
      frame.lastEntry = -1
      frame.pendingCall = undefined
      resolve()
      return
    }
    const op = step.opcode.code
    if (!this.options.disableStorage && (op === SLOAD || op === SSTORE) && step.stack.length >= (op === SLOAD ? 1 : 2)) {
      const top = step.stack.length - 1
      const slot = slotHex(step.stack[top])
      if (op === SSTORE) {
        this.record(step, frame, this.touch(step.address, slot, slotHex(step.stack[top - 1])))
        resolve()
        return
      }
      // the value the SLOAD will read, as the state holds it now; the EVM waits for resolve(), so what
      // stops the trace here is kept for the next step to throw
      step.stateManager
        .getStorage(step.address, setLengthLeft(bigIntToBytes(step.stack[top]), 32))
        .then((value) => this.record(step, frame, this.touch(step.address, slot, hexDigits(setLengthLeft(value, 32)))))
        .catch((err: unknown) => {
          this.failure = err
        })
        .finally(resolve)
      return
    }
    this.record(step, frame, undefined)
    resolve()
  }

  /** Records `slot = value` for `address`; its storage so far, sorted as geth's JSON sorts a map. */
  private touch(address: Address, slot: string, value: string): string {
    const key = address.toString()
    let slots = this.storage.get(key)
    if (slots === undefined) {
      slots = new Map()
      this.storage.set(key, slots)
    }
    slots.set(slot, value)
    const sorted = [...slots.keys()].sort()
    return `{${sorted.map((s) => `"${s}":"${slots.get(s)}"`).join(',')}}`
  }

  private record(step: InterpreterStep, frame: Frame, storage: string | undefined): void {
    const name = step.opcode.name
    let text = ''
    if (!this.options.disableStack) {
      const stack = step.stack
      const items: string[] = new Array(stack.length)
      for (let i = 0; i < stack.length; i++) items[i] = `"0x${stack[i].toString(16)}"`
      text += `,"stack":[${items.join(',')}]`
    }
    if (this.options.enableReturnData && frame.returnData.length > 0) text += `,"returnData":"${bytesToHex(frame.returnData)}"`
    if (this.options.enableMemory) {
      const memory = step.memory
      const words: string[] = []
      for (let at = 0; at < memory.length; at += 32) words.push(`"${hexDigits(memory.subarray(at, at + 32))}"`)
      text += `,"memory":[${words.join(',')}]`
    }
    if (storage !== undefined) text += `,"storage":${storage}`
    if (step.gasRefund > 0n) text += `,"refund":${step.gasRefund}`
    this.bytes += text.length + 80
    if (this.options.maxBytes > 0 && this.bytes > this.options.maxBytes) throw new TraceTooLarge(this.options.maxBytes)
    const entry: Entry = {
      pc: step.pc,
      op: GETH_NAMES[name] ?? name,
      gas: step.gasLeft,
      cost: step.opcode.dynamicFee ?? BigInt(step.opcode.fee),
      depth: frame.depth,
      error: undefined,
      tail: text,
    }
    frame.lastEntry = this.entries.length
    frame.pendingCall = CALLS.has(entry.op) ? entry : undefined
    this.entries.push(entry)
  }
}

const slotHex = (v: bigint): string => v.toString(16).padStart(64, '0')
