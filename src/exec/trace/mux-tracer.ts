// geth's muxTracer (eth/tracers/native/mux.go): several tracers over one run of the transaction, their
// results under their names, `{"callTracer": …, "prestateTracer": …}` (in the order of the names, as
// Go writes a map). They attach in that order and detach in reverse, so that each leaves the EVM as
// the one before it left it (a tracer that wraps opcodes wraps the table it finds).

import type { StateManagerInterface } from '@ethereumjs/common'
import type { EVM } from '@ethereumjs/evm'
import type { RunTxResult } from '@ethereumjs/vm'
import type { TxStart, TxTracer } from './tracer.js'

export class MuxTracer implements TxTracer {
  constructor(private readonly tracers: readonly { name: string; tracer: TxTracer }[]) {}

  attach(evm: EVM): void {
    for (const t of this.tracers) t.tracer.attach(evm)
  }

  detach(): void {
    for (let i = this.tracers.length - 1; i >= 0; i--) this.tracers[i].tracer.detach()
  }

  async begin(start: TxStart): Promise<void> {
    for (const t of this.tracers) await t.tracer.begin?.(start)
  }

  async end(stateManager: StateManagerInterface): Promise<void> {
    for (const t of this.tracers) await t.tracer.end?.(stateManager)
  }

  result(run: RunTxResult): string {
    return `{${this.tracers.map((t) => `${JSON.stringify(t.name)}:${t.tracer.result(run)}`).join(',')}}`
  }
}
