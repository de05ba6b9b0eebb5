// What the explorer's indexes need of each transaction's execution, recorded while the producer builds
// the block (and when a block runs again to build missing indexes): every address that is the from or
// to of a call frame, a created contract or a selfdestruct beneficiary (Erigon's rule for its trace
// index, which ots_searchTransactions* reads), and the contracts created with their direct creator.
//
// @ethereumjs reports each message (beforeMessage / afterMessage, newContract) but not SELFDESTRUCT, nor a
// call or creation that fails before its frame starts (value above the caller's balance, the depth
// limit), which geth's and Erigon's tracers still enter; so the recorder runs the EVM on a copy of its
// opcode table with those handlers wrapped (a call's target is recorded as the opcode runs, a creation's
// address, worked out as @ethereumjs and geth do before their checks, once its handler returns). A frame is
// recorded as it starts, whatever its outcome (as Erigon's tracer records it on entry); a creation
// counts only if no frame above it failed, since a reverted creation leaves no contract.

import type { EVM, EVMResult, Message } from '@ethereumjs/evm'
import { bigIntToBytes, generateAddress, generateAddress2, setLengthLeft } from '@ethereumjs/util'
import type { Address } from '@ethereumjs/util'
import type { VM } from '@ethereumjs/vm'
import { listen, stackAddress, wrapOpcodes } from '../exec/trace/tracer.js'
import type { OpRunState } from '../exec/trace/tracer.js'
import { CALL, CALLCODE, CREATE, CREATE2, DELEGATECALL, SELFDESTRUCT, STATICCALL } from '../exec/trace/opcodes.js'

/** One transaction's part of the indexes. */
export interface TxFrames {
  /** distinct addresses (20 bytes), in the order they first appeared */
  addresses: Uint8Array[]
  /** contracts the transaction created and kept, each with the account whose frame created it */
  creations: Array<[contract: Uint8Array, creator: Uint8Array]>
}

interface OpenFrame {
  caller: Address
  /** creations made by this frame and the frames below it that completed (most frames make none) */
  creations: Array<[Uint8Array, Uint8Array]> | undefined
}

/** Up to this many addresses a transaction's are compared one by one; past it they go into a set. */
const LINEAR_SCAN = 16

/** The table entries the recorder reads; @ethereumjs keeps them private. */
interface OpcodeTable {
  _opcodeMap: unknown
}

export class FrameRecorder {
  private evm: EVM | undefined
  private table: unknown
  private restore: (() => void) | undefined
  private unlisten: (() => void) | undefined
  private recording = false
  /** the transaction's addresses once it has more than LINEAR_SCAN, as latin1 strings */
  private seen: Set<string> | undefined
  private addresses: Uint8Array[] = []
  private stack: OpenFrame[] = []
  private creations: Array<[Uint8Array, Uint8Array]> = []
  private done: TxFrames[] = []

  /**
   * Listens to `evm` (again, if it rebuilt its opcode table since: it does when the hardfork changes).
   * Messages outside beginTx/endTx (the fork's system calls) are not recorded.
   */
  attach(vmEvm: VM['evm']): void {
    // VM.evm is typed as the interface; it is the EVM class, whose events and table the recorder uses
    const evm = vmEvm as EVM
    if (this.evm === evm && (evm as unknown as OpcodeTable)._opcodeMap === this.table) return
    this.detach()
    this.evm = evm
    this.restore = wrapOpcodes(evm, [SELFDESTRUCT, CALL, CALLCODE, DELEGATECALL, STATICCALL, CREATE, CREATE2], (op, run) =>
      op === SELFDESTRUCT
        ? (runState, common) => {
            // the beneficiary, on top of the stack
            if (this.recording) this.add(stackAddress(runState.stack.peek(1)[0]).bytes)
            return run(runState, common)
          }
        : op === CREATE || op === CREATE2
        ? async (runState, common) => {
            if (!this.recording) return run(runState, common)
            // read before the handler, which raises the creator's nonce; added once it returns, since a
            // handler that traps (init code over the size limit) enters no frame in geth either
            const target = creationTarget(op, runState)
            await run(runState, common)
            this.add(target)
          }
        : (runState, common) => {
            // the target, below the gas
            if (this.recording) this.add(stackAddress(runState.stack.peek(2)[1]).bytes)
            return run(runState, common)
          },
    )
    this.table = (evm as unknown as OpcodeTable)._opcodeMap
    this.unlisten = listen(evm, {
      beforeMessage: (message) => this.enter(message),
      afterMessage: (result) => this.exit(result),
    })
    const events = evm.events as unknown as { on(event: string, listener: (e: { address: Address }) => void): void; off(event: string, listener: unknown): void }
    const onNewContract = (e: { address: Address }): void => this.created(e.address)
    events.on('newContract', onNewContract)
    const unlisten = this.unlisten
    this.unlisten = () => {
      unlisten()
      events.off('newContract', onNewContract)
    }
  }

  detach(): void {
    // an EVM that rebuilt its table since keeps the new one
    if (this.evm !== undefined && (this.evm as unknown as OpcodeTable)._opcodeMap === this.table) this.restore?.()
    this.unlisten?.()
    this.restore = this.unlisten = undefined
    this.evm = this.table = undefined
  }

  /** A transaction is about to run through the EVM. */
  beginTx(): void {
    this.recording = true
    this.seen = undefined
    this.addresses = []
    this.stack = []
    this.creations = []
  }

  /** The transaction begun last is in the block. */
  endTx(): void {
    this.recording = false
    this.done.push({ addresses: this.addresses, creations: this.creations })
  }

  /** The transaction begun last stays out of the block. */
  dropTx(): void {
    this.recording = false
  }

  /** A plain value transfer, applied without the EVM: its one frame. */
  plain(sender: Uint8Array, to: Uint8Array): void {
    this.done.push({ addresses: [sender, to], creations: [] })
  }

  /** The frames of the transactions recorded since the last take, in block order. */
  take(): TxFrames[] {
    const done = this.done
    this.done = []
    this.recording = false
    return done
  }

  // Addresses are kept by reference: @ethereumjs never writes into an Address's bytes, and the frames are
  // encoded when the block is written. A transfer's two or three addresses are compared byte by byte; a
  // string key for each (the set's) cost more than the comparisons.
  private add(address: Uint8Array): void {
    const list = this.addresses
    if (this.seen === undefined) {
      for (let i = 0; i < list.length; i++) if (sameAddress(list[i], address)) return
      list.push(address)
      if (list.length > LINEAR_SCAN) this.seen = new Set(list.map(latin1))
      return
    }
    const key = latin1(address)
    if (this.seen.has(key)) return
    this.seen.add(key)
    list.push(address)
  }

  private enter(message: Message): void {
    if (!this.recording) return
    this.add(message.caller.bytes)
    if (message.to !== undefined) {
      this.add(message.to.bytes)
      // DELEGATECALL and CALLCODE run another account's code: that account is the frame's `to` for geth
      this.add(message.codeAddress.bytes)
    }
    this.stack.push({ caller: message.caller, creations: undefined })
  }

  private created(address: Address): void {
    if (!this.recording) return
    this.add(address.bytes)
    const frame = this.stack[this.stack.length - 1]
    if (frame !== undefined) (frame.creations ??= []).push([address.bytes, frame.caller.bytes])
  }

  private exit(result: EVMResult): void {
    if (!this.recording) return
    const frame = this.stack.pop()
    if (frame?.creations === undefined || result.execResult.exceptionError !== undefined) return
    const parent = this.stack[this.stack.length - 1]
    const into = parent === undefined ? this.creations : (parent.creations ??= [])
    for (const c of frame.creations) into.push(c)
  }
}

/**
 * Records the frames of every transaction `vm` runs through runTx (runBlock's included) until the returned
 * function is called: what a block from elsewhere (an import, a replica's execute check) gives the indexes.
 * It attaches before each transaction, since runBlock may change the hardfork (and the EVM its opcode table).
 */
export function recordTransactions(vm: VM, recorder: FrameRecorder): () => void {
  const begin = (): void => {
    recorder.attach(vm.evm)
    recorder.beginTx()
  }
  const end = (): void => recorder.endTx()
  vm.events.on('beforeTx', begin)
  vm.events.on('afterTx', end)
  return () => {
    vm.events.off('beforeTx', begin)
    vm.events.off('afterTx', end)
    recorder.detach()
  }
}

const ADDRESS_BYTES = 20

/** The address a CREATE or CREATE2 about to run creates, from the stack, memory and the creator's nonce. */
function creationTarget(op: number, runState: OpRunState): Uint8Array {
  const env = runState.interpreter._env
  if (op === CREATE) return generateAddress(env.address.bytes, bigIntToBytes(env.contract.nonce))
  const [, offset, length, salt] = runState.stack.peek(4)
  const code = length === 0n ? new Uint8Array(0) : runState.memory.read(Number(offset), Number(length), true)
  return generateAddress2(env.address.bytes, setLengthLeft(bigIntToBytes(salt), 32), code)
}

/** Whether two 20-byte addresses are the same. */
export function sameAddress(a: Uint8Array, b: Uint8Array): boolean {
  if (a === b) return true
  for (let i = 0; i < ADDRESS_BYTES; i++) if (a[i] !== b[i]) return false
  return true
}

/** A 20-byte key for a set: latin1 keeps one character per byte. */
const latin1 = (address: Uint8Array): string => String.fromCharCode(...address)
