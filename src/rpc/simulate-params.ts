// eth_simulateV1's first parameter (execution-apis EthSimulatePayload, geth's simOpts): the blocks to
// simulate, each with block overrides, state overrides and calls, and three switches. Calls, state and
// block overrides are decoded as eth_call's are (params.ts), in geth's words.

import { jsonKind } from './params.js'
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

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

const typeError = (i: number, field: string, v: unknown, goType: string) =>
  invalidParams(`invalid argument ${i}: json: cannot unmarshal ${jsonKind(v)} into Go struct field ${field} of type ${goType}`)

export function simulatePayload(v: unknown, i: number, opts: { chainId: bigint }): SimulatePayload {
  if (v === undefined) throw invalidParams(`missing value for required argument ${i}`)
  if (!isObject(v)) throw invalidParams(`invalid argument ${i}: json: cannot unmarshal ${jsonKind(v)} into Go value of type ethapi.simOpts`)
  const flag = (name: string): boolean => {
    const value = v[name]
    if (value === undefined || value === null) return false
    if (typeof value !== 'boolean') throw typeError(i, `simOpts.${name}`, value, 'bool')
    return value
  }
  const raw = v.blockStateCalls
  if (raw !== undefined && raw !== null && !Array.isArray(raw)) throw typeError(i, 'simOpts.blockStateCalls', raw, '[]ethapi.simBlock')
  if (raw === undefined || raw === null || raw.length === 0) throw invalidParams('empty input')
  const blocks = raw.map((b) => simBlock(b, i, opts.chainId))
  return { blocks, traceTransfers: flag('traceTransfers'), validation: flag('validation'), returnFullTransactions: flag('returnFullTransactions') }
}

function simBlock(v: unknown, i: number, chainId: bigint): SimBlockSpec {
  if (v === null) return { calls: [] }
  if (!isObject(v)) throw typeError(i, 'simOpts.blockStateCalls', v, 'ethapi.simBlock')
  const spec: SimBlockSpec = { calls: [] }
  const bo = p.blockOverrides(v.blockOverrides, i)
  if (bo !== undefined) {
    const overrides: SimBlockOverrides = {}
    if (bo.number !== undefined) overrides.number = bo.number
    if (bo.time !== undefined) overrides.time = bo.time
    if (bo.gasLimit !== undefined) overrides.gasLimit = bo.gasLimit
    if (bo.feeRecipient !== undefined) overrides.feeRecipient = bo.feeRecipient
    if (bo.prevRandao !== undefined) overrides.prevRandao = bo.prevRandao
    if (bo.baseFeePerGas !== undefined) overrides.baseFeePerGas = bo.baseFeePerGas
    if (bo.blobBaseFee !== undefined) overrides.blobBaseFee = bo.blobBaseFee
    if (bo.beaconRoot !== undefined) overrides.beaconRoot = bo.beaconRoot
    const withdrawals = (v.blockOverrides as Record<string, unknown>).withdrawals
    if (withdrawals !== undefined && withdrawals !== null) overrides.withdrawals = withdrawalList(withdrawals, i)
    spec.blockOverrides = overrides
  }
  const so = accountOverridesOf(p.stateOverrides(v.stateOverrides, i))
  if (so !== undefined) spec.stateOverrides = so
  const calls = v.calls
  if (calls !== undefined && calls !== null) {
    if (!Array.isArray(calls)) throw typeError(i, 'simBlock.calls', calls, '[]ethapi.TransactionArgs')
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
  if (!Array.isArray(v)) throw typeError(i, 'BlockOverrides.withdrawals', v, 'types.Withdrawals')
  return v.map((w) => {
    if (!isObject(w)) throw typeError(i, 'BlockOverrides.withdrawals', w, 'types.Withdrawal')
    return {
      index: p.uint64(w.index, i),
      validatorIndex: p.uint64(w.validatorIndex, i),
      address: p.address(w.address, i),
      amount: p.uint64(w.amount, i),
    }
  })
}
