// The logs of eth_simulateV1's calls, collected as geth's simulation tracer (internal/ethapi/
// logtracer.go) collects them: a frame's logs join its caller's only if the frame did not fail, and each
// log is numbered within the block when it is emitted, so a failed frame's logs leave gaps in the
// numbering (geth's, which execution-apis' vectors record). With traceTransfers, every movement of
// ether (a call's value, a CREATE's endowment, a SELFDESTRUCT's balance) is also a log: an ERC-20
// Transfer of the ERC-7528 address, in execution order among the real logs.
//
// @ethereumjs has no hook per LOG opcode, so the EVM given to `attach` gets its own opcode table in
// which LOG0-LOG4 and SELFDESTRUCT also report here (the jump-destination cache keys its analyses by
// table, so the copy does not leak into other EVMs).

import type { EVMInterface, EVMResult, Message } from '@ethereumjs/evm'
import { bigIntToBytes, hexToBytes, setLengthLeft } from '@ethereumjs/util'
import type { Address } from '@ethereumjs/util'
import type { StoredLog } from '../chain/receipts.js'
import { stackAddress } from './trace/tracer.js'

/** ERC-7528: the address that stands for the native currency. */
const NATIVE_ASSET = hexToBytes('0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee')
/** keccak256("Transfer(address,address,uint256)") */
const TRANSFER_TOPIC = hexToBytes('0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef')
const LOG0 = 0xa0
const LOG4 = 0xa4
const SELFDESTRUCT = 0xff

interface OpEntry {
  opHandler: (runState: RunStateLike, common: unknown) => unknown
}

interface RunStateLike {
  stack: { peek(n: number): bigint[] }
  interpreter: {
    _result: { logs: StoredLog[] }
    _env: { address: Address; contract: { balance: bigint } }
  }
}

interface EvmTables {
  _opcodeMap: OpEntry[]
}

/** A log and its index in the block. */
export interface NumberedLog {
  log: StoredLog
  index: number
}

interface Frame {
  logs: NumberedLog[]
  /** a CREATE's transfer log, whose recipient is known once the frame has run */
  pendingCreate?: { log: StoredLog; message: Message }
}

const word = (bytes: Uint8Array): Uint8Array => setLengthLeft(bytes, 32)

export class SimulationLogTracer {
  private frames: Frame[] = []
  private installedOn: OpEntry[] | undefined
  /** logs emitted in the block so far, kept or not */
  private count = 0

  constructor(private readonly transfers: boolean) {}

  /** Starts listening to `evm`'s messages and LOG/SELFDESTRUCT opcodes. Call again after a fork change. */
  attach(evm: EVMInterface): void {
    const tables = evm as unknown as EvmTables
    if (this.installedOn === tables._opcodeMap) return
    const table = tables._opcodeMap.slice()
    for (let op = LOG0; op <= LOG4; op++) {
      const entry = table[op]
      if (entry === undefined) continue
      const log = entry.opHandler
      table[op] = {
        ...entry,
        opHandler: (runState, common) => {
          log(runState, common)
          const logs = runState.interpreter._result.logs
          this.capture(logs[logs.length - 1])
        },
      }
    }
    const destruct = table[SELFDESTRUCT]
    if (destruct !== undefined) {
      const run = destruct.opHandler
      table[SELFDESTRUCT] = {
        ...destruct,
        opHandler: async (runState, common) => {
          const beneficiary = stackAddress(runState.stack.peek(1)[0]).bytes
          const env = runState.interpreter._env
          const balance = env.contract.balance
          // before the handler: it ends the frame by throwing STOP (once it runs, the opcode succeeds)
          if (this.transfers && balance > 0n) this.capture(transferLog(env.address.bytes, beneficiary, balance))
          await run(runState, common)
        },
      }
    }
    tables._opcodeMap = table
    this.installedOn = table
    const events = evm.events
    if (events === undefined) throw new Error('internal error: the EVM has no events to trace transfers with')
    if (events.listenerCount('beforeMessage') === 0) {
      events.on('beforeMessage', (message: Message) => this.enter(message))
      events.on('afterMessage', (result: EVMResult) => this.exit(result))
    }
  }

  /** Before each block: logs are numbered from 0 again. */
  startBlock(): void {
    this.count = 0
  }

  /** Before each transaction. */
  reset(): void {
    this.frames = []
  }

  /** The transaction's logs, transfers included with traceTransfers (none if it failed). */
  logs(): NumberedLog[] {
    return this.frames[0]?.logs ?? []
  }

  private capture(log: StoredLog): void {
    this.top()?.logs.push({ log, index: this.count++ })
  }

  private top(): Frame | undefined {
    return this.frames[this.frames.length - 1]
  }

  private enter(message: Message): void {
    const frame: Frame = { logs: [] }
    this.frames.push(frame)
    if (this.transfers && message.value > 0n && !message.delegatecall) {
      const log = transferLog(message.caller.bytes, message.to?.bytes ?? new Uint8Array(20), message.value)
      this.capture(log)
      if (message.to === undefined) frame.pendingCreate = { log, message }
    }
  }

  private exit(result: EVMResult): void {
    const frame = this.top()
    if (frame === undefined) return
    if (frame.pendingCreate !== undefined) {
      const to = frame.pendingCreate.message.to ?? result.createdAddress
      if (to !== undefined) frame.pendingCreate.log[1][2] = word(to.bytes)
    }
    const failed = result.execResult.exceptionError !== undefined
    if (this.frames.length === 1) {
      if (failed) frame.logs = []
      return
    }
    this.frames.pop()
    if (!failed) this.top()!.logs.push(...frame.logs)
  }
}

function transferLog(from: Uint8Array, to: Uint8Array, value: bigint): StoredLog {
  return [NATIVE_ASSET, [TRANSFER_TOPIC, word(from), word(to)], word(bigIntToBytes(value))]
}
