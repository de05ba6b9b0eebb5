// What an execution did that depends on its gas limit, for eth_estimateGas.
//
// Run with a limit `hi`, an execution that consumed `needed` gas (before refunds) runs identically with
// the limit `needed`, every gas-left value lowered by hi - needed, unless some step looks at the gas
// left: GAS reads it, the CALL and CREATE families forward 63/64 of it, and SSTORE fails when 2300 or
// less is left (EIP-2200). The patched interpreter (patches/@ethereumjs+evm) reports every step to the
// watch an execution carries; when no step looked at the gas and every SSTORE would still have had
// more than 2300 left, the estimate needs no second execution to know that `needed` succeeds.

const SSTORE = 0x55
/** GAS, CREATE, CALL, CALLCODE, DELEGATECALL, CREATE2, STATICCALL and their EOF forms. */
const GAS_DEPENDENT = new Uint8Array(256)
for (const op of [0x5a, 0xf0, 0xf1, 0xf2, 0xf4, 0xf5, 0xfa, 0xf8, 0xf9, 0xfb, 0xec]) GAS_DEPENDENT[op] = 1

/** The stipend SSTORE refuses to eat into (EIP-2200). */
export const SSTORE_SENTRY = 2300n

export class GasWatch {
  steps = 0
  gasDependent = false
  /** the least gas left before any SSTORE, over the whole execution */
  leastBeforeSstore: bigint | undefined
  /** the opcode running now (-1 before the first step) */
  op = -1

  step(op: number, gasLeft: bigint): void {
    this.steps++
    this.op = op
    if (op === SSTORE) {
      if (this.leastBeforeSstore === undefined || gasLeft < this.leastBeforeSstore) this.leastBeforeSstore = gasLeft
    } else if (GAS_DEPENDENT[op] === 1) {
      this.gasDependent = true
    }
  }

  /** Whether the execution watched, run again with `lowerBy` less gas, would run exactly the same. */
  sameWith(lowerBy: bigint): boolean {
    if (this.steps === 0 || this.gasDependent) return false
    return this.leastBeforeSstore === undefined || this.leastBeforeSstore - lowerBy > SSTORE_SENTRY
  }
}

/** The EVM property the patched interpreter reads the watch from. */
export interface WatchedEvm {
  keelGasWatch?: GasWatch
}
