// geth's native 4byteTracer (eth/tracers/native/4byte.go): how often each function selector was called,
// keyed "<selector>-<calldata size after it>", over the calls of a transaction (its own included) that
// carry at least four bytes of input; creations and precompiles are not counted.

import type { EVM, Message } from '@ethereumjs/evm'
import { bytesToHex } from '@ethereumjs/util'
import { listen } from './tracer.js'
import type { Deadline, TxTracer } from './tracer.js'

export class FourByteTracer implements TxTracer {
  private readonly counts = new Map<string, number>()
  private evm: EVM | undefined
  private unlisten: (() => void) | undefined

  constructor(private readonly deadline: Deadline) {}

  attach(evm: EVM): void {
    this.evm = evm
    this.unlisten = listen(evm, { beforeMessage: (message) => this.enter(message) })
  }

  detach(): void {
    this.unlisten?.()
    this.unlisten = undefined
  }

  result(): string {
    const keys = [...this.counts.keys()].sort()
    return `{${keys.map((k) => `"${k}":${this.counts.get(k)}`).join(',')}}`
  }

  private enter(message: Message): void {
    this.deadline.check()
    const input = message.data
    if (input.length < 4 || message.to === undefined) return
    if (this.evm!.getPrecompile(message.codeAddress) !== undefined) return
    const key = `${bytesToHex(input.subarray(0, 4))}-${input.length - 4}`
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1)
  }
}
