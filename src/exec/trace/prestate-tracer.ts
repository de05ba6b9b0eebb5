// geth's native prestateTracer (eth/tracers/native/prestate.go): the state a transaction read or wrote,
// as it was before the transaction. The accounts: the sender, the recipient (or the contract a creation
// makes), the coinbase, EIP-7702 authorities, and every account an opcode names (BALANCE, EXTCODE*,
// SELFDESTRUCT, the calls, the creations). The storage: every slot SLOAD or SSTORE reaches, each as it
// was when first reached. An account a creation makes that did not exist before is left out.
//
// With `diffMode`, `{post, pre}`: the accounts the transaction changed, `post` with what changed (balance,
// nonce, code, slots, a cleared slot left out) and `pre` with those accounts as they were, their
// unchanged slots and the empty ones left out; an account that self-destructed is in `pre` only.
//
// Each account and slot is read from the state when the tracer first meets it, which is before the
// opcode that names it runs: the EVM waits for the read (a step listener with a resolve()).

import type { EVM, InterpreterStep } from '@ethereumjs/evm'
import { Address, bigIntToBytes, bytesToHex, createAddressFromString, createContractAddress, createContractAddress2, equalsBytes, hexToBytes, KECCAK256_NULL, setLengthLeft } from '@ethereumjs/util'
import type { StateManagerInterface } from '@ethereumjs/common'
import { quantity } from '../../util/hex.js'
import { listen, stackAddress } from './tracer.js'
import type { Deadline, TxStart, TxTracer } from './tracer.js'
import { BALANCE, CALL, CALLCODE, CREATE, CREATE2, DELEGATECALL, EXTCODECOPY, EXTCODEHASH, EXTCODESIZE, SELFDESTRUCT, SLOAD, SSTORE, STATICCALL } from './opcodes.js'

const ZERO_WORD = `0x${'0'.repeat(64)}`
const MEMORY_PAD_LIMIT = 1024 * 1024

interface AccountState {
  balance: bigint
  nonce: bigint
  code: Uint8Array
  /** slot -> value, both 0x + 64 hex digits */
  storage: Map<string, string>
  /** it did not exist when first met */
  empty: boolean
}

export interface PrestateConfig {
  diffMode: boolean
  disableCode: boolean
  disableStorage: boolean
}

export class PrestateTracer implements TxTracer {
  private readonly pre = new Map<string, AccountState>()
  private readonly post = new Map<string, AccountState>()
  private readonly created = new Set<string>()
  private readonly deleted = new Set<string>()
  private unlisten: (() => void) | undefined
  /** what stopped the trace while the state was read: thrown at the next step, or by end() */
  private failure: unknown

  constructor(
    private readonly config: PrestateConfig,
    private readonly deadline: Deadline,
  ) {}

  attach(evm: EVM): void {
    this.unlisten = listen(evm, { step: (step, resolve?) => this.step(step, resolve!) })
  }

  detach(): void {
    this.unlisten?.()
    this.unlisten = undefined
  }

  async begin(start: TxStart): Promise<void> {
    const sm = start.stateManager
    let to = start.to
    if (to === undefined) {
      to = createContractAddress(start.from, start.nonce)
      this.created.add(to.toString())
    }
    await this.lookupAccount(sm, start.from)
    await this.lookupAccount(sm, to)
    await this.lookupAccount(sm, start.coinbase)
    for (const authority of start.authorities) await this.lookupAccount(sm, authority)
  }

  async end(sm: StateManagerInterface): Promise<void> {
    if (this.failure !== undefined) throw this.failure
    if (this.config.diffMode) await this.diff(sm)
    // a created contract's pre-state was nothing, unless the address held something already
    for (const address of this.created) if (this.pre.get(address)?.empty === true) this.pre.delete(address)
  }

  result(): string {
    if (!this.config.diffMode) return stateJson(this.pre)
    return `{"post":${stateJson(this.post)},"pre":${stateJson(this.pre)}}`
  }

  private step(step: InterpreterStep, resolve: () => void): void {
    if (this.failure !== undefined) throw this.failure
    this.deadline.check()
    this.visit(step).catch((err: unknown) => {
      this.failure = err
    }).finally(resolve)
  }

  private async visit(step: InterpreterStep): Promise<void> {
    const op = step.opcode.code
    const stack = step.stack
    const top = stack.length - 1
    const sm = step.stateManager
    const caller = step.address
    switch (op) {
      case SLOAD:
      case SSTORE:
        if (top >= 0) await this.lookupStorage(sm, caller, stack[top])
        return
      case BALANCE:
      case EXTCODESIZE:
      case EXTCODECOPY:
      case EXTCODEHASH:
      case SELFDESTRUCT:
        if (top < 0) return
        await this.lookupAccount(sm, stackAddress(stack[top]))
        if (op === SELFDESTRUCT) this.deleted.add(caller.toString())
        return
      case CALL:
      case CALLCODE:
      case DELEGATECALL:
      case STATICCALL:
        if (top >= 4) await this.lookupAccount(sm, stackAddress(stack[top - 1]))
        return
      case CREATE: {
        const account = await sm.getAccount(caller)
        const address = createContractAddress(caller, account?.nonce ?? 0n)
        await this.lookupAccount(sm, address)
        this.created.add(address.toString())
        return
      }
      case CREATE2: {
        if (top < 3) return
        const offset = Number(stack[top - 1])
        const size = Number(stack[top - 2])
        // geth reads at most 1 MiB past memory's end (GetMemoryCopyPadded), and names no account beyond it
        if (!Number.isSafeInteger(offset + size) || offset + size - step.memory.length > MEMORY_PAD_LIMIT) return
        const init = new Uint8Array(size)
        // the init code as memory holds it, zero-padded past its end (geth's GetMemoryCopyPadded)
        if (offset < step.memory.length) init.set(step.memory.subarray(offset, Math.min(step.memory.length, offset + size)))
        const address = createContractAddress2(caller, setLengthLeft(bigIntToBytes(stack[top - 3]), 32), init)
        await this.lookupAccount(sm, address)
        this.created.add(address.toString())
        return
      }
    }
  }

  private async lookupAccount(sm: StateManagerInterface, address: Address): Promise<void> {
    const key = address.toString()
    if (this.pre.has(key)) return
    const account = await sm.getAccount(address)
    const code = this.config.disableCode || account === undefined ? new Uint8Array(0) : await sm.getCode(address)
    const balance = account?.balance ?? 0n
    const nonce = account?.nonce ?? 0n
    const hasCode = account !== undefined && !equalsBytes(account.codeHash, KECCAK256_NULL)
    this.pre.set(key, { balance, nonce, code, storage: new Map(), empty: balance === 0n && nonce === 0n && !hasCode })
  }

  private async lookupStorage(sm: StateManagerInterface, address: Address, slot: bigint): Promise<void> {
    if (this.config.disableStorage) return
    const key = slotHex(slot)
    // the account is in `pre` already: an SLOAD or SSTORE runs in a frame whose account was met before
    let state = this.pre.get(address.toString())
    if (state === undefined) {
      await this.lookupAccount(sm, address)
      state = this.pre.get(address.toString())!
    }
    if (state.storage.has(key)) return
    state.storage.set(key, wordHex(await sm.getStorage(address, setLengthLeft(bigIntToBytes(slot), 32))))
  }

  /** geth's processDiffState: what changed into `post`, what did not out of `pre`. */
  private async diff(sm: StateManagerInterface): Promise<void> {
    for (const [key, state] of this.pre) {
      if (this.deleted.has(key)) continue
      const address = createAddressFromString(key)
      const account = await sm.getAccount(address)
      const balance = account?.balance ?? 0n
      const nonce = account?.nonce ?? 0n
      const code = this.config.disableCode || account === undefined ? new Uint8Array(0) : await sm.getCode(address)
      const post: AccountState = { balance: -1n, nonce: -1n, code: UNSET, storage: new Map(), empty: false }
      let modified = false
      if (balance !== state.balance) {
        modified = true
        post.balance = balance
      }
      if (nonce !== state.nonce) {
        modified = true
        post.nonce = nonce
      }
      if (!equalsBytes(code, state.code)) {
        modified = true
        post.code = code
      }
      for (const [slot, value] of state.storage) {
        const now = wordHex(await sm.getStorage(address, hexToBytes(slot as `0x${string}`)))
        if (value === now || value === ZERO_WORD) state.storage.delete(slot)
        if (value !== now) {
          modified = true
          if (now !== ZERO_WORD) post.storage.set(slot, now)
        }
      }
      if (modified) this.post.set(key, post)
      else this.pre.delete(key)
    }
  }
}

/** a post-state field the transaction did not change */
const UNSET = new Uint8Array(0)

const slotHex = (v: bigint): string => `0x${v.toString(16).padStart(64, '0')}`
const wordHex = (bytes: Uint8Array): string => bytesToHex(setLengthLeft(bytes, 32))

/** geth's stateMap JSON: accounts by address, each with balance, then code, nonce and storage when set. */
function stateJson(state: Map<string, AccountState>): string {
  const parts: string[] = []
  for (const address of [...state.keys()].sort()) {
    const s = state.get(address)!
    const fields: string[] = []
    if (s.balance >= 0n) fields.push(`"balance":"${quantity(s.balance)}"`)
    if (s.code !== UNSET && s.code.length > 0) fields.push(`"code":"${bytesToHex(s.code)}"`)
    if (s.nonce > 0n) fields.push(`"nonce":${s.nonce}`)
    if (s.storage.size > 0) {
      const slots = [...s.storage.keys()].sort().map((slot) => `"${slot}":"${s.storage.get(slot)}"`)
      fields.push(`"storage":{${slots.join(',')}}`)
    }
    parts.push(`"${address}":{${fields.join(',')}}`)
  }
  return `{${parts.join(',')}}`
}
