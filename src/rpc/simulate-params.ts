// eth_simulateV1's first parameter (execution-apis EthSimulatePayload, geth's simOpts): the blocks to
// simulate, each with block overrides, state overrides and calls, and three switches. Calls, state and
// block overrides are decoded as eth_call's are (params.ts), in geth's words.

import * as p from './params.js'
import { invalidParams } from './errors.js'
import type { ExecWithdrawal, SimBlockOverrides, SimBlockSpec } from '../exec/types.js'
import { accountOverridesOf, callArgsOf } from './exec-args.js'

export interface SimulatePayload {
  blocks: SimBlockSpec[]
  traceTransfers: boolean
  validation: boolean
  returnFullTransactions: boolean
}

export function simulatePayload(v: unknown, i: number, opts: { chainId: bigint }): SimulatePayload {
  if (v === undefined) throw invalidParams(`missing value for required argument ${i}`)
  if (!p.isObject(v)) throw invalidParams(`invalid argument ${i}: json: cannot unmarshal ${p.jsonKind(v)} into Go value of type ethapi.simOpts`)
  const flag = (name: string): boolean => {
    const value = v[name]
    if (value === undefined || value === null) return false
    if (typeof value !== 'boolean') throw p.fieldTypeError(i, `simOpts.${name}`, value, 'bool')
    return value
  }
  const raw = v.blockStateCalls
  if (raw !== undefined && raw !== null && !Array.isArray(raw)) throw p.fieldTypeError(i, 'simOpts.blockStateCalls', raw, '[]ethapi.simBlock')
  if (raw === undefined || raw === null || raw.length === 0) throw invalidParams('empty input')
  const blocks = raw.map((b) => simBlock(b, i, opts.chainId))
  return { blocks, traceTransfers: flag('traceTransfers'), validation: flag('validation'), returnFullTransactions: flag('returnFullTransactions') }
}

function simBlock(v: unknown, i: number, chainId: bigint): SimBlockSpec {
  if (v === null) return { calls: [] }
  if (!p.isObject(v)) throw p.fieldTypeError(i, 'simOpts.blockStateCalls', v, 'ethapi.simBlock')
  const spec: SimBlockSpec = { calls: [] }
  const bo = p.blockOverrides(v.blockOverrides, i)
  if (bo !== undefined) {
    const { number, time, gasLimit, feeRecipient, prevRandao, baseFeePerGas, blobBaseFee, beaconRoot } = bo
    const overrides: SimBlockOverrides = { number, time, gasLimit, feeRecipient, prevRandao, baseFeePerGas, blobBaseFee, beaconRoot }
    const withdrawals = (v.blockOverrides as Record<string, unknown>).withdrawals
    if (withdrawals !== undefined && withdrawals !== null) overrides.withdrawals = withdrawalList(withdrawals, i)
    spec.blockOverrides = overrides
  }
  const so = accountOverridesOf(p.stateOverrides(v.stateOverrides, i))
  if (so !== undefined) spec.stateOverrides = so
  const calls = v.calls
  if (calls !== undefined && calls !== null) {
    if (!Array.isArray(calls)) throw p.fieldTypeError(i, 'simBlock.calls', calls, '[]ethapi.TransactionArgs')
    for (const call of calls) {
      const req = p.callRequest(call, i, { chainId })
      if (req.blobVersionedHashes !== undefined) {
        throw invalidParams(`invalid argument ${i}: blob transactions (blobVersionedHashes) cannot be simulated: this chain takes no blob transactions`)
      }
      spec.calls.push(callArgsOf(req))
    }
  }
  return spec
}

function withdrawalList(v: unknown, i: number): ExecWithdrawal[] {
  if (!Array.isArray(v)) throw p.fieldTypeError(i, 'BlockOverrides.withdrawals', v, 'types.Withdrawals')
  return v.map((w) => {
    if (!p.isObject(w)) throw p.fieldTypeError(i, 'BlockOverrides.withdrawals', w, 'types.Withdrawal')
    return {
      index: p.uint64(w.index, i),
      validatorIndex: p.uint64(w.validatorIndex, i),
      address: p.address(w.address, i),
      amount: p.uint64(w.amount, i),
    }
  })
}
