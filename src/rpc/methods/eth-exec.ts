// EVM execution without a transaction: eth_call, eth_estimateGas, eth_createAccessList, eth_simulateV1. The work runs
// in the call pool; this file only turns parameters into a task and a result into JSON. The answers of the
// first three are kept by (block, request) in a result cache: a block's state never changes.

import type { BlockRecord } from '../../chain/view.js'
import { CallResultCache } from '../../exec/call-cache.js'
import { execBlockOf } from '../../exec/exec-block.js'
import type { CallTask, ExecKind, ExecResult, SimulateTask } from '../../exec/types.js'
import { RawJson } from '../context.js'
import { simulatePayload } from '../simulate-params.js'
import { accountOverridesOf, callArgsOf } from '../exec-args.js'
import type { MethodHandler, RequestContext } from '../context.js'
import { fromShape, serverError } from '../../errors.js'
import { quantity } from '../../util/hex.js'
import * as p from '../params.js'
import { callClientOf, resolveStateBlock } from './deps.js'
import type { MethodDeps } from './deps.js'


export function toTask(kind: ExecKind, req: p.CallRequest, block: BlockRecord, so?: p.StateOverrides, bo?: p.BlockOverrides): CallTask {
  // only the fields the request sets: every key, even one holding undefined, is written and read again
  // when the task is cloned to the worker
  const task: CallTask = { kind, block: execBlockOf(block.header, block.hash), args: callArgsOf(req) }
  const stateOverrides = accountOverridesOf(so)
  if (stateOverrides !== undefined) task.stateOverrides = stateOverrides
  if (bo !== undefined) {
    task.blockOverrides = {
      number: bo.number,
      time: bo.time,
      gasLimit: bo.gasLimit,
      feeRecipient: bo.feeRecipient,
      prevRandao: bo.prevRandao,
      baseFeePerGas: bo.baseFeePerGas,
      blobBaseFee: bo.blobBaseFee,
    }
  }
  return task
}

/** geth's BlockOverrides.Apply: a single call has no block of its own to put a beacon root or withdrawals in. */
export function singleCallBlockOverrides(bo: p.BlockOverrides | undefined): p.BlockOverrides | undefined {
  if (bo?.beaconRoot !== undefined) throw serverError('block override "beaconRoot" is not supported for this RPC method')
  if (bo?.withdrawals !== undefined) throw serverError('block override "withdrawals" is not supported for this RPC method')
  return bo
}

export function unwrap(result: ExecResult): Exclude<ExecResult, { ok: false }> {
  if (!result.ok) throw fromShape(result.error)
  return result
}

/** eth_call's answer: the return data, or the error the execution ended with. */
function callAnswer(result: ExecResult): unknown {
  const done = unwrap(result)
  return done.kind === 'call' ? done.returnData : null
}

/** eth_estimateGas's answer: the gas, or the error the estimate ended with. */
function estimateAnswer(result: ExecResult): unknown {
  const done = unwrap(result)
  return done.kind === 'estimateGas' ? quantity(done.gas) : null
}

/** eth_createAccessList's answer: the list and the gas of a run with it, and the error that run ended with. */
function accessListAnswer(result: ExecResult): unknown {
  const done = unwrap(result)
  if (done.kind !== 'createAccessList') return null
  const out: Record<string, unknown> = { accessList: done.accessList, gasUsed: quantity(done.gasUsed) }
  if (done.error !== undefined) out.error = done.error
  return out
}

/** A request's cache key at the head it was made for. */
interface HeadKey {
  hash: string
  key: string
}

export function execMethods(deps: MethodDeps): Record<string, MethodHandler> {
  const chainId = BigInt(deps.config.chainId)
  const cache = new CallResultCache({ onJoin: (running, client) => deps.executor.share?.(running, client) })
  const keyOf = (kind: ExecKind, blockHash: string, params: readonly unknown[]) =>
    CallResultCache.key(blockHash, kind, [params[0], params[2], params[3]])
  /**
   * The request's key at the current head when it asks for 'latest' (or names no block), else undefined.
   * The cache only holds requests that passed validation (the key is the request's JSON), so a request
   * found settled under it is answered at once without parsing it again.
   */
  const headKeyOf = (kind: ExecKind, params: readonly unknown[]): HeadKey | undefined => {
    if (params.length > 2 || (params[1] !== undefined && params[1] !== 'latest')) return undefined
    const hash = deps.view.head.hash
    return { hash, key: keyOf(kind, hash, params) }
  }
  /**
   * The cached (or shared in-flight) result of `task` at `block`, run for `client`; the head's key is
   * reused when it fits.
   */
  const cached = (kind: ExecKind, block: BlockRecord, params: readonly unknown[], headKey: HeadKey | undefined, client: string, task: () => CallTask) => {
    const key = headKey !== undefined && headKey.hash === block.hash ? headKey.key : keyOf(kind, block.hash, params)
    return cache.run(key, () => deps.executor.run(task(), client), client)
  }
  const ethCall = async (params: readonly unknown[], headKey: HeadKey | undefined, client: string): Promise<unknown> => {
    p.expectParams(params, 1, 4)
    const req = p.callRequest(params[0], 0, { chainId })
    const selector = p.blockSelector(params[1], 1, { optional: true })
    const so = p.stateOverrides(params[2], 2)
    const bo = singleCallBlockOverrides(p.blockOverrides(params[3], 3))
    const block = await resolveStateBlock(deps.view, selector)
    return callAnswer(await cached('call', block, params, headKey, client, () => toTask('call', req, block, so, bo)))
  }
  // geth's eth_estimateGas takes block overrides as a fourth parameter, as eth_call does
  const estimateGas = async (params: readonly unknown[], headKey: HeadKey | undefined, client: string): Promise<unknown> => {
    p.expectParams(params, 1, 4)
    const req = p.callRequest(params[0], 0, { chainId })
    const selector = p.blockSelector(params[1], 1, { optional: true })
    const so = p.stateOverrides(params[2], 2)
    const bo = singleCallBlockOverrides(p.blockOverrides(params[3], 3))
    const block = await resolveStateBlock(deps.view, selector)
    return estimateAnswer(await cached('estimateGas', block, params, headKey, client, () => toTask('estimateGas', req, block, so, bo)))
  }
  // geth's eth_createAccessList takes state overrides as a third parameter, as eth_call does
  const createAccessList = async (params: readonly unknown[], headKey: HeadKey | undefined, client: string): Promise<unknown> => {
    p.expectParams(params, 1, 3)
    const req = p.callRequest(params[0], 0, { chainId })
    const selector = p.blockSelector(params[1], 1, { optional: true })
    const so = p.stateOverrides(params[2], 2)
    const block = await resolveStateBlock(deps.view, selector)
    return accessListAnswer(await cached('createAccessList', block, params, headKey, client, () => toTask('createAccessList', req, block, so)))
  }
  /** A request at the head whose result is settled in the cache is answered at once; any other runs `full`. */
  const served = (
    kind: ExecKind,
    params: readonly unknown[],
    ctx: RequestContext,
    full: (params: readonly unknown[], headKey: HeadKey | undefined, client: string) => Promise<unknown>,
    answer: (result: ExecResult) => unknown,
  ): unknown => {
    const headKey = headKeyOf(kind, params)
    const known = headKey === undefined ? undefined : cache.peek(headKey.key)
    return known === undefined ? full(params, headKey, callClientOf(deps, ctx)) : answer(known)
  }
  return {
    eth_call: (params, ctx) => served('call', params, ctx, ethCall, callAnswer),
    eth_estimateGas: (params, ctx) => served('estimateGas', params, ctx, estimateGas, estimateAnswer),
    eth_simulateV1: async (params, ctx) => {
      p.expectParams(params, 1, 2)
      const payload = simulatePayload(params[0], 0, { chainId })
      const selector = p.blockSelector(params[1], 1, { optional: true })
      const block = await resolveStateBlock(deps.view, selector)
      const task: SimulateTask = {
        kind: 'simulate',
        block: execBlockOf(block.header, block.hash),
        blocks: payload.blocks,
        traceTransfers: payload.traceTransfers,
        validation: payload.validation,
        fullTransactions: payload.returnFullTransactions,
      }
      const result = unwrap(await deps.executor.run(task, callClientOf(deps, ctx)))
      return result.kind === 'simulate' ? new RawJson(result.json) : null
    },
    eth_createAccessList: (params, ctx) => served('createAccessList', params, ctx, createAccessList, accessListAnswer),
  }
}
