// debug_storageRangeAt, as geth answers it (eth/api_debug.go): a contract's storage slots in hashed-key
// order from a start key, on the state within a block before one of its transactions; what debuggers
// such as Remix's read a contract's storage with. The block is replayed up to that transaction in the
// call pool (exec/storage-range.ts).

import { RawJson } from '../context.js'
import type { MethodHandler } from '../context.js'
import { serverError } from '../../errors.js'
import * as p from '../params.js'
import type { BlockSelector } from '../params.js'
import { prefixBefore } from './block-prefix.js'
import { callClientOf, resolveBlockOrNull } from './deps.js'
import type { MethodDeps } from './deps.js'
import { unwrap } from './eth-exec.js'

export function storageRangeMethods(deps: MethodDeps): Record<string, MethodHandler> {
  const view = deps.view
  return {
    debug_storageRangeAt: async (params, ctx) => {
      p.expectParams(params, 5, 5)
      const selector = p.blockSelector(params[0], 0)
      const txIndex = p.goInt(params[1], 1)
      const address = p.address(params[2], 2)
      const start = p.data(params[3], 3)
      const maxResult = p.goInt(params[4], 4)
      const block = await resolveBlockOrNull(view, selector)
      if (block === undefined) throw serverError(`block ${selectorText(selector)} not found`)
      const at = await prefixBefore(view, block, txIndex)
      const result = unwrap(await deps.executor.run({ kind: 'storageRange', at, address, start, maxResult, maxBytes: deps.config.batchResponseMaxSize }, callClientOf(deps, ctx)))
      return result.kind === 'storageRange' ? new RawJson(result.json) : null
    },
  }

}

/** rpc.BlockNumberOrHash's String(): the hash, the tag, or the number in hex. */
function selectorText(selector: BlockSelector): string {
  if (selector.kind === 'hash') return selector.hash
  return selector.kind === 'tag' ? selector.tag : `0x${selector.number.toString(16)}`
}
