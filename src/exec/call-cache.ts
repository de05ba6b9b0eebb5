// Results of eth_call / eth_estimateGas keyed by (block hash, request), on the main thread. Dapps poll
// the same calls every block; a block's state never changes, so the answer for one block is final.
// Identical requests that arrive while the first is still running share its execution.
// Cached: successes and reverts (code 3), both facts about the block. Not cached: anything else
// (timeouts, a full queue, internal failures), which may go away on retry.

import { ErrorCode } from '../rpc/errors.js'
import type { ExecResult } from './types.js'

export interface CallCacheOptions {
  /** entries kept (least recently used go first) */
  maxEntries?: number
  /** requests with a longer key (large calldata) are not cached */
  maxKeyLength?: number
  /** results with more return data than this (hex chars) are not kept */
  maxResultLength?: number
}

interface Entry {
  promise: Promise<ExecResult>
  /** set once the promise has resolved, so that a hit can be answered without waiting for it */
  result: ExecResult | undefined
}

export class CallResultCache {
  private readonly entries = new Map<string, Entry>()
  private readonly maxEntries: number
  private readonly maxKeyLength: number
  private readonly maxResultLength: number
  hits = 0
  misses = 0

  constructor(opts: CallCacheOptions = {}) {
    this.maxEntries = opts.maxEntries ?? 4096
    this.maxKeyLength = opts.maxKeyLength ?? 8192
    this.maxResultLength = opts.maxResultLength ?? 65_536
  }

  /** The key of one request at one block; `parts` are the JSON-RPC params that shape the result. */
  static key(blockHash: string, kind: string, parts: readonly unknown[]): string {
    let key = `${blockHash}|${kind}`
    for (const part of parts) key += `|${part === undefined ? '' : JSON.stringify(part)}`
    return key
  }

  get size(): number {
    return this.entries.size
  }

  /** The settled result stored under `key`, if there is one (a hit); undefined otherwise, counting nothing. */
  peek(key: string): ExecResult | undefined {
    const known = this.entries.get(key)
    if (known === undefined || known.result === undefined) return undefined
    this.touch(key, known)
    return known.result
  }

  run(key: string, compute: () => Promise<ExecResult>): Promise<ExecResult> {
    if (key.length > this.maxKeyLength) return compute()
    const known = this.entries.get(key)
    if (known !== undefined) {
      this.touch(key, known)
      return known.promise
    }
    this.misses++
    const entry: Entry = { promise: compute(), result: undefined }
    this.entries.set(key, entry)
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string)
    entry.promise.then(
      (result) => {
        if (this.keep(result)) entry.result = result
        else if (this.entries.get(key) === entry) this.entries.delete(key)
      },
      () => {
        if (this.entries.get(key) === entry) this.entries.delete(key)
      },
    )
    return entry.promise
  }

  private touch(key: string, entry: Entry): void {
    this.hits++
    this.entries.delete(key)
    this.entries.set(key, entry)
  }

  private keep(result: ExecResult): boolean {
    if (!result.ok) return result.error.code === ErrorCode.ExecutionReverted
    return result.kind !== 'call' || result.returnData.length <= this.maxResultLength
  }
}
