// @ethereumjs analyses a contract's code (valid JUMPDESTs, every PUSH value as a bigint, the opcode of
// every byte) on each call that jumps, allocating arrays the size of the code. For an ERC20 that is ~7%
// of an eth_call plus much of its garbage. The analysis depends only on the code and the opcode table,
// and the read path hands out the same code object for the same code hash, so it is cached per object.

import { importEvmModule } from './evm-internals.js'

interface Analysis {
  jumps: Uint8Array
  pushes: Record<number, bigint>
  opcodesCached: unknown[]
}

interface InterpreterLike {
  _evm: { _opcodeMap: unknown }
  _getValidJumpDestinations(code: Uint8Array): Analysis
}

let installed: Promise<void> | undefined

/** Installs the cache once per thread. */
export function cacheJumpDestinations(): Promise<void> {
  installed ??= (async () => {
    const { Interpreter } = await importEvmModule<{ Interpreter: { prototype: InterpreterLike } }>('interpreter.js')
    const analyse = Interpreter.prototype._getValidJumpDestinations
    const byCode = new WeakMap<Uint8Array, { table: unknown; analysis: Analysis }>()
    Interpreter.prototype._getValidJumpDestinations = function (this: InterpreterLike, code: Uint8Array): Analysis {
      const table = this._evm._opcodeMap
      const hit = byCode.get(code)
      if (hit !== undefined && hit.table === table) return hit.analysis
      const analysis = analyse.call(this, code)
      byCode.set(code, { table, analysis })
      return analysis
    }
  })()
  return installed
}
