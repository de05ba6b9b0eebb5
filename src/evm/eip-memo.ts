// Common.isActivatedEIP scans an array of ~60 EIP numbers, and the EVM asks it on nearly every opcode
// (4% of an eth_call). The array is replaced, never changed in place, whenever the hardfork or the EIP
// set changes, so a Set remembered per array answers the same question in one lookup.

import { Common } from '@ethereumjs/common'

type Internals = { _activatedEIPsCache: number[] }

const asSet = new WeakMap<number[], Set<number>>()
let installed = false

export function memoizeEipLookups(): void {
  if (installed) return
  installed = true
  const proto = Common.prototype as unknown as Internals & { isActivatedEIP(eip: number): boolean }
  proto.isActivatedEIP = function isActivatedEIP(this: Internals, eip: number): boolean {
    const list = this._activatedEIPsCache
    let set = asSet.get(list)
    if (set === undefined) {
      set = new Set(list)
      asSet.set(list, set)
    }
    return set.has(eip)
  }
}
