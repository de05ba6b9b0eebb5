// eth_call-style parameters (params.ts) as the execution engine takes them (exec/types.ts): only the
// fields a request sets, since every key, even one holding undefined, is cloned into the worker.

import type { ExecAccountOverride, ExecCallArgs } from '../exec/types.js'
import type * as p from './params.js'

/** A call request's fields as the engine takes them. */
export function callArgsOf(req: p.CallRequest): ExecCallArgs {
  const args: ExecCallArgs = {}
  if (req.from !== undefined) args.from = req.from
  if (req.to !== undefined) args.to = req.to
  if (req.gas !== undefined) args.gas = req.gas
  if (req.gasPrice !== undefined) args.gasPrice = req.gasPrice
  if (req.maxFeePerGas !== undefined) args.maxFeePerGas = req.maxFeePerGas
  if (req.maxPriorityFeePerGas !== undefined) args.maxPriorityFeePerGas = req.maxPriorityFeePerGas
  if (req.value !== undefined) args.value = req.value
  if (req.input !== undefined) args.data = req.input
  if (req.nonce !== undefined) args.nonce = req.nonce
  if (req.accessList !== undefined) args.accessList = req.accessList
  if (req.authorizationList !== undefined) args.authorizationList = req.authorizationList
  return args
}

/** State overrides as the engine takes them; undefined when there are none. */
export function accountOverridesOf(so: p.StateOverrides | undefined): Record<string, ExecAccountOverride> | undefined {
  if (so === undefined || so.size === 0) return undefined
  const out: Record<string, ExecAccountOverride> = {}
  for (const [address, o] of so) {
    out[address] = {
      balance: o.balance,
      nonce: o.nonce,
      code: o.code,
      state: o.state === undefined ? undefined : Object.fromEntries(o.state),
      stateDiff: o.stateDiff === undefined ? undefined : Object.fromEntries(o.stateDiff),
      movePrecompileToAddress: o.movePrecompileToAddress,
    }
  }
  return out
}
