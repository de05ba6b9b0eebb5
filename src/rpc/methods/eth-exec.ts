// EVM execution without a transaction: eth_call, eth_estimateGas, eth_createAccessList. The work runs
// in the call pool; this file only turns parameters into a task and a result into JSON.

import type { BlockRecord } from '../../chain/view.js'
import { CallResultCache } from '../../exec/call-cache.js'
import { execBlockOf } from '../../exec/exec-block.js'
import type { ExecResult, ExecTask } from '../../exec/types.js'
import type { MethodHandler } from '../context.js'
import { fromShape } from '../errors.js'
import { quantity } from '../hex.js'
import * as p from '../params.js'
import { resolveStateBlock } from './deps.js'
import type { MethodDeps } from './deps.js'


function toTask(kind: ExecTask['kind'], req: p.CallRequest, block: BlockRecord, so?: p.StateOverrides, bo?: p.BlockOverrides): ExecTask {
  const task: ExecTask = {
    kind,
    block: execBlockOf(block.header, block.hash),
    args: {
      from: req.from,
      to: req.to,
      gas: req.gas,
      gasPrice: req.gasPrice,
      maxFeePerGas: req.maxFeePerGas,
      maxPriorityFeePerGas: req.maxPriorityFeePerGas,
      value: req.value,
      data: req.input,
      nonce: req.nonce,
      accessList: req.accessList,
      authorizationList: req.authorizationList,
    },
  }
  if (so !== undefined && so.size > 0) {
    task.stateOverrides = {}
    for (const [address, o] of so) {
      task.stateOverrides[address] = {
        balance: o.balance,
        nonce: o.nonce,
        code: o.code,
        state: o.state === undefined ? undefined : Object.fromEntries(o.state),
        stateDiff: o.stateDiff === undefined ? undefined : Object.fromEntries(o.stateDiff),
      }
    }
  }
  if (bo !== undefined) {
    task.blockOverrides = {
      number: bo.number,
      time: bo.time,
      gasLimit: bo.gasLimit,
      feeRecipient: bo.feeRecipient,
      prevRandao: bo.prevRandao,
      baseFeePerGas: bo.baseFeePerGas,
    }
  }
  return task
}

function unwrap(result: ExecResult): Exclude<ExecResult, { ok: false }> {
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

export function execMethods(deps: MethodDeps): Record<string, MethodHandler> {
  const chainId = BigInt(deps.config.chainId)
  const cache = new CallResultCache()
  const keyOf = (kind: ExecTask['kind'], blockHash: string, params: readonly unknown[]) =>
    CallResultCache.key(blockHash, kind, [params[0], params[2], params[3]])
  const cached = (kind: ExecTask['kind'], block: BlockRecord, params: readonly unknown[], task: () => ExecTask) =>
    cache.run(keyOf(kind, block.hash, params), () => deps.executor.run(task()))
  /**
   * A request at the head that was answered before, answered at once: the cache only holds requests that
   * passed validation (the key is the request's JSON), so the same request needs no parsing again.
   */
  const answeredAtHead = (kind: ExecTask['kind'], params: readonly unknown[]): ExecResult | undefined => {
    if (params.length > 2 || (params[1] !== undefined && params[1] !== 'latest')) return undefined
    return cache.peek(keyOf(kind, deps.view.head.hash, params))
  }
  const ethCall = async (params: readonly unknown[]): Promise<unknown> => {
    p.expectParams(params, 1, 4)
    const req = p.callRequest(params[0], 0, { chainId })
    const selector = p.blockSelector(params[1], 1, { optional: true })
    const so = p.stateOverrides(params[2], 2)
    const bo = p.blockOverrides(params[3], 3)
    const block = await resolveStateBlock(deps.view, selector)
    return callAnswer(await cached('call', block, params, () => toTask('call', req, block, so, bo)))
  }
  const estimateGas = async (params: readonly unknown[]): Promise<unknown> => {
    p.expectParams(params, 1, 3)
    const req = p.callRequest(params[0], 0, { chainId })
    const selector = p.blockSelector(params[1], 1, { optional: true })
    const so = p.stateOverrides(params[2], 2)
    const block = await resolveStateBlock(deps.view, selector)
    return estimateAnswer(await cached('estimateGas', block, params, () => toTask('estimateGas', req, block, so)))
  }
  return {
    eth_call: (params) => {
      const known = answeredAtHead('call', params)
      return known === undefined ? ethCall(params) : callAnswer(known)
    },
    eth_estimateGas: (params) => {
      const known = answeredAtHead('estimateGas', params)
      return known === undefined ? estimateGas(params) : estimateAnswer(known)
    },
    eth_createAccessList: async (params) => {
      p.expectParams(params, 1, 2)
      const req = p.callRequest(params[0], 0, { chainId })
      const selector = p.blockSelector(params[1], 1, { optional: true })
      const block = await resolveStateBlock(deps.view, selector)
      const result = unwrap(await deps.executor.run(toTask('createAccessList', req, block)))
      if (result.kind !== 'createAccessList') return null
      const out: Record<string, unknown> = { accessList: result.accessList, gasUsed: quantity(result.gasUsed) }
      if (result.error !== undefined) out.error = result.error
      return out
    },
  }
}
