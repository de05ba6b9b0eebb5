// eth_simulateV1's first parameter (execution-apis EthSimulatePayload, geth's simOpts): the blocks to
// simulate, each with block overrides, state overrides and calls, and three switches. Calls, state and
// block overrides are decoded as eth_call's are (params.ts), in geth's words; every key matches its
// field in any case, as geth's encoding/json matches it.

import * as p from './params.js'
import { invalidParams } from '../errors.js'
import type { SimBlockSpec } from '../exec/types.js'
import { accountOverridesOf, callArgsOf } from './exec-args.js'

export interface SimulatePayload {
  blocks: SimBlockSpec[]
  traceTransfers: boolean
  validation: boolean
  returnFullTransactions: boolean
}

const SIM_OPTS_FIELDS = p.fieldsOf('blockStateCalls', 'traceTransfers', 'validation', 'returnFullTransactions')
const SIM_BLOCK_FIELDS = p.fieldsOf('blockOverrides', 'stateOverrides', 'calls')

export function simulatePayload(v: unknown, i: number, opts: { chainId: bigint }): SimulatePayload {
  if (v === undefined) throw invalidParams(`missing value for required argument ${i}`)
  if (!p.isObject(v)) throw invalidParams(`invalid argument ${i}: json: cannot unmarshal ${p.jsonKind(v)} into Go value of type ethapi.simOpts`)
  const f = p.goFields(v, SIM_OPTS_FIELDS)
  const flag = (name: string): boolean => {
    const value = f[name]
    if (value === undefined || value === null) return false
    if (typeof value !== 'boolean') throw p.fieldTypeError(i, `simOpts.${name}`, value, 'bool')
    return value
  }
  const raw = f.blockStateCalls
  if (raw !== undefined && raw !== null && !Array.isArray(raw)) throw p.fieldTypeError(i, 'simOpts.blockStateCalls', raw, '[]ethapi.simBlock')
  if (raw === undefined || raw === null || raw.length === 0) throw invalidParams('empty input')
  const blocks = raw.map((b) => simBlock(b, i, opts.chainId))
  return { blocks, traceTransfers: flag('traceTransfers'), validation: flag('validation'), returnFullTransactions: flag('returnFullTransactions') }
}

function simBlock(v: unknown, i: number, chainId: bigint): SimBlockSpec {
  if (v === null) return { calls: [] }
  if (!p.isObject(v)) throw p.fieldTypeError(i, 'simOpts.blockStateCalls', v, 'ethapi.simBlock')
  const f = p.goFields(v, SIM_BLOCK_FIELDS)
  const spec: SimBlockSpec = { calls: [] }
  const bo = p.blockOverrides(f.blockOverrides, i)
  if (bo !== undefined) {
    const { number, time, gasLimit, feeRecipient, prevRandao, baseFeePerGas, blobBaseFee, beaconRoot, withdrawals } = bo
    spec.blockOverrides = { number, time, gasLimit, feeRecipient, prevRandao, baseFeePerGas, blobBaseFee, beaconRoot, withdrawals }
  }
  const so = accountOverridesOf(p.stateOverrides(f.stateOverrides, i))
  if (so !== undefined) spec.stateOverrides = so
  const calls = f.calls
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
