// @ethereumjs copies the Common for every transaction (and header) it constructs and calls
// updateParams(paramsTx) on the copy, which deep-copies each parameter set through a JSON round trip and
// rebuilds the parameter cache: 5-7% of block building and of every eth_call. A copy shares its source's
// parameter cache, so when that cache was built after the same parameter object was merged, merging it
// again changes nothing. The chain's Common is primed with the tx and block parameters (and the VM's, in the
// threads that run one) once; every copy made from it then skips the repeat.

import { Common } from '@ethereumjs/common'

export type CommonParams = Parameters<Common['updateParams']>[0]
type Internals = { _params: object; _paramsCache: object; _buildParamsCache(): void }

/** a `_params` object (shared by a Common and its copies) -> the parameter objects merged into it */
const mergedInto = new WeakMap<object, Set<object>>()
/** a parameter cache object -> the parameter objects it was built with */
const builtWith = new WeakMap<object, Set<object>>()
let installed = false

function install(): void {
  if (installed) return
  installed = true
  const proto = Common.prototype as unknown as Internals & { updateParams(params: CommonParams): void }
  const originalBuild = proto._buildParamsCache
  proto._buildParamsCache = function buildParamsCache(this: Internals): void {
    originalBuild.call(this)
    const merged = mergedInto.get(this._params)
    if (merged !== undefined) builtWith.set(this._paramsCache, new Set(merged))
  }
  const originalUpdate = proto.updateParams
  proto.updateParams = function updateParams(this: Internals, params: CommonParams): void {
    if (builtWith.get(this._paramsCache)?.has(params)) return
    let merged = mergedInto.get(this._params)
    if (merged === undefined) {
      merged = new Set()
      mergedInto.set(this._params, merged)
    }
    merged.add(params)
    originalUpdate.call(this, params) // merges, then rebuilds the cache (which records `merged`)
  }
}

/** Installs the memo and primes `common` with `sets`, so that the copies @ethereumjs makes of it skip the merge. */
export function primeCommonParams(common: Common, sets: readonly CommonParams[]): void {
  install()
  for (const params of sets) common.updateParams(params)
}
