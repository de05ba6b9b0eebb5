// debug_traceTransaction, debug_traceBlockByNumber, debug_traceBlockByHash, debug_traceBlock and
// debug_traceCall, as geth answers them (eth/tracers/api.go): a mined transaction runs again on its
// block's parent state with the transactions before it, a block given as RLP runs whole on the state of
// the parent its header names, a call runs as eth_call runs it (with `txIndex`, before that transaction of
// its block, replayed the same way), and the tracer the request names reports the execution
// (trace-config.ts: the struct logger, callTracer, prestateTracer, 4byteTracer, noopTracer or
// muxTracer). The work runs in the call pool, under its limits; this file finds the block and turns
// the request into a task.

import type { BlockRecord } from '../../chain/view.js'
import type { TraceBlockTask, TraceCallTask, TraceForeignBlockTask, TraceOptions } from '../../exec/types.js'
import { RawJson } from '../context.js'
import type { MethodHandler, RequestContext } from '../context.js'
import { serverError } from '../../errors.js'
import * as p from '../params.js'
import { traceOptions } from '../trace-config.js'
import { blockPrefix, foreignParentState, prefixBefore } from './block-prefix.js'
import { callClientOf, findStateBlock, resolveBlockOrNull, resolveStateBlock } from './deps.js'
import type { MethodDeps } from './deps.js'
import { singleCallBlockOverrides, toTask, unwrap } from './eth-exec.js'

const CALL_CONFIG_FIELDS = p.fieldsOf('stateOverrides', 'blockOverrides', 'txIndex')

export function traceMethods(deps: MethodDeps): Record<string, MethodHandler> {
  const view = deps.view
  const chainId = BigInt(deps.config.chainId)
  // a trace is one answer, but can be larger than any batch: it is held to the batch response limit
  const limits = { maxTimeoutMs: deps.config.rpcEvmTimeoutMs, maxBytes: deps.config.batchResponseMaxSize }

  const run = async (task: TraceBlockTask | TraceForeignBlockTask | TraceCallTask, ctx: RequestContext): Promise<RawJson | null> => {
    const result = unwrap(await deps.executor.run(task, callClientOf(deps, ctx)))
    return result.kind === 'trace' ? new RawJson(result.json) : null
  }

  /** The replay of `block` up to its last traced transaction, on its parent's state. */
  const replay = async (block: BlockRecord, mode: TraceBlockTask['mode'], traced: number[], options: TraceOptions): Promise<TraceBlockTask> => {
    if (block.number === 0n) throw serverError('genesis is not traceable')
    const prefix = await blockPrefix(view, block, traced.length === 0 ? 0 : traced[traced.length - 1] + 1)
    return { kind: 'traceBlock', mode, ...prefix, traced, options }
  }

  const traceWholeBlock = async (block: BlockRecord, options: TraceOptions, ctx: RequestContext): Promise<RawJson | null> => {
    const all = Array.from({ length: block.txHashes.length }, (_, i) => i)
    const task = await replay(block, 'block', all, options)
    return all.length === 0 ? new RawJson('[]') : run(task, ctx)
  }

  return {
    debug_traceTransaction: async (params, ctx) => {
      p.expectParams(params, 1, 2)
      const hash = p.hash32(params[0], 0)
      const options = traceOptions(params[1], 1, 'TraceConfig', limits)
      let found = view.recentTx(hash)
      if (found === undefined) {
        const at = await view.txLocation(hash)
        const block = at === undefined ? undefined : await view.blockByNumber(at.number)
        if (at !== undefined && block !== undefined) found = { block, index: at.index }
      }
      if (found === undefined) throw serverError('transaction not found')
      return run(await replay(found.block, 'transaction', [found.index], options), ctx)
    },
    debug_traceBlockByNumber: async (params, ctx) => {
      p.expectParams(params, 1, 2)
      const ref = p.blockTag(params[0], 0)
      const options = traceOptions(params[1], 1, 'TraceConfig', limits)
      const block = await resolveBlockOrNull(view, ref)
      if (block === undefined) throw serverError(`block #${ref.kind === 'number' ? ref.number : ref.tag} not found`)
      return traceWholeBlock(block, options, ctx)
    },
    debug_traceBlockByHash: async (params, ctx) => {
      p.expectParams(params, 1, 2)
      const hash = p.hash32(params[0], 0)
      const options = traceOptions(params[1], 1, 'TraceConfig', limits)
      const block = await view.blockByHash(hash)
      if (block === undefined) throw serverError(`block ${hash} not found`)
      return traceWholeBlock(block, options, ctx)
    },
    debug_traceBlock: async (params, ctx) => {
      p.expectParams(params, 1, 2)
      const blob = p.data(params[0], 0)
      const options = traceOptions(params[1], 1, 'TraceConfig', limits)
      return run({ kind: 'traceForeignBlock', blockRlp: blob, parentStateRoot: await foreignParentState(view, blob), options }, ctx)
    },
    debug_traceCall: async (params, ctx) => {
      p.expectParams(params, 2, 3)
      const req = p.callRequest(params[0], 0, { chainId })
      const selector = p.blockSelector(params[1], 1)
      const options = traceOptions(params[2], 2, 'TraceCallConfig', limits)
      const extra = p.isObject(params[2]) ? p.goFields(params[2], CALL_CONFIG_FIELDS) : {}
      const txIndex = p.isAbsent(extra.txIndex) ? undefined : p.uint(extra.txIndex, 2)
      const so = p.stateOverrides(extra.stateOverrides, 2)
      const bo = singleCallBlockOverrides(p.blockOverrides(extra.blockOverrides, 2))
      const block = txIndex === undefined ? await resolveStateBlock(view, selector) : await findStateBlock(view, selector)
      const { kind: _, ...call } = toTask('call', req, block, so, bo)
      const within = txIndex === undefined ? undefined : await prefixBefore(view, block, txIndex)
      return run({ ...call, kind: 'traceCall', options, within }, ctx)
    },
  }
}
