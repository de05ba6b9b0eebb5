// Common.isActivatedEIP scans an array of ~60 EIP numbers, and the EVM asks it on nearly every opcode.
// The array is replaced, never changed in place, whenever the hardfork or the EIP set changes, so a
// lookup table built once per array answers in one indexed read; each Common remembers the table of
// its current array (a Set per array behind a WeakMap cost ~7% of an eth_call in lookups).

import { Common } from '@ethereumjs/common'

type Internals = { _activatedEIPsCache: number[]; _keelEipList?: number[]; _keelEipTable?: Uint8Array }

const tables = new WeakMap<number[], Uint8Array>()
let installed = false

function tableOf(list: number[]): Uint8Array {
  let table = tables.get(list)
  if (table === undefined) {
    let max = 0
    for (const eip of list) if (eip > max) max = eip
    table = new Uint8Array(max + 1)
    for (const eip of list) table[eip] = 1
    tables.set(list, table)
  }
  return table
}

export function memoizeEipLookups(): void {
  if (installed) return
  installed = true
  const proto = Common.prototype as unknown as Internals & { isActivatedEIP(eip: number): boolean }
  proto.isActivatedEIP = function isActivatedEIP(this: Internals, eip: number): boolean {
    let table = this._keelEipTable
    if (table === undefined || this._keelEipList !== this._activatedEIPsCache) {
      this._keelEipList = this._activatedEIPsCache
      table = this._keelEipTable = tableOf(this._keelEipList)
    }
    return eip < table.length && table[eip] === 1
  }
}
