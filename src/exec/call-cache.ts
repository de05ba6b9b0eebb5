// Results of eth_call / eth_estimateGas / eth_createAccessList keyed by (block hash, request), on the main
// thread. Dapps poll the same calls every block; a block's state never changes, so the answer for one block
// is final.
// Identical requests that arrive while the first is still running share its execution (and the pool hears of
// another client joining: the call may wait in its first client's lane, see heavy-clients.ts).
// Cached: successes and reverts (code 3), both facts about the block. Not cached: anything else
// (timeouts, a full queue, internal failures), which may go away on retry.

import { ErrorCode } from '../errors.js'
import type { ExecResult } from './types.js'
import { LruMap } from '../util/lru.js'

export interface CallCacheOptions {
  /** entries kept (least recently used go first) */
  maxEntries?: number
  /** requests with a longer key (large calldata) are not cached */
  maxKeyLength?: number
  /** results with more return data than this (hex chars) are not kept */
  maxResultLength?: number
  /** another client's identical request joined a running one */
  onJoin?: (running: Promise<ExecResult>, client: string) => void
}

interface Entry {
  promise: Promise<ExecResult>
  /** the address of the client whose request started it */
  client: string
  /** set once the promise has resolved, so that a hit can be answered without waiting for it */
  result: ExecResult | undefined
}

export class CallResultCache {
  private readonly entries: LruMap<string, Entry>
  private readonly maxKeyLength: number
  private readonly maxResultLength: number
  private readonly onJoin: CallCacheOptions['onJoin']
  hits = 0
  misses = 0

  constructor(opts: CallCacheOptions = {}) {
    this.entries = new LruMap(opts.maxEntries ?? 4096)
    this.maxKeyLength = opts.maxKeyLength ?? 8192
    this.maxResultLength = opts.maxResultLength ?? 65_536
    this.onJoin = opts.onJoin
  }

  /**
   * The key of one request at one block; `parts` are the JSON-RPC params that shape the result. One
   * JSON text, so the key is a flat string: a key joined with + is a rope, which V8 flattens to hash it
   * and walks to compare it (~10% of the main thread's time per eth_call went to Map lookups).
   */
  static key(blockHash: string, kind: string, parts: readonly unknown[]): string {
    return JSON.stringify([blockHash, kind, ...parts])
  }

  get size(): number {
    return this.entries.size
  }

  /** The settled result stored under `key`, if there is one (a hit); undefined otherwise, counting nothing. */
  peek(key: string): ExecResult | undefined {
    const known = this.entries.get(key)
    if (known === undefined || known.result === undefined) return undefined
    this.hits++
    return known.result
  }

  /** The result of the request `key` of `client`: stored, shared with an identical running one, or computed. */
  run(key: string, compute: () => Promise<ExecResult>, client = ''): Promise<ExecResult> {
    if (key.length > this.maxKeyLength) return compute()
    const known = this.entries.get(key)
    if (known !== undefined) {
      this.hits++
      if (known.result === undefined && client !== known.client) this.onJoin?.(known.promise, client)
      return known.promise
    }
    this.misses++
    const entry: Entry = { promise: compute(), client, result: undefined }
    this.entries.set(key, entry)
    entry.promise.then(
      (result) => {
        if (this.keep(result)) entry.result = result
        else this.forget(key, entry)
      },
      () => this.forget(key, entry),
    )
    return entry.promise
  }

  private forget(key: string, entry: Entry): void {
    if (this.entries.get(key) === entry) this.entries.delete(key)
  }

  private keep(result: ExecResult): boolean {
    if (!result.ok) return result.error.code === ErrorCode.ExecutionReverted
    if (result.kind === 'call') return result.returnData.length <= this.maxResultLength
    if (result.kind !== 'createAccessList') return true
    let chars = 0
    for (const item of result.accessList) chars += 64 + item.storageKeys.length * 70
    return chars <= this.maxResultLength
  }
}
