// Requests waiting for a transaction's receipt (eth_sendRawTransactionSync): each new block is checked
// once for the hashes being waited for, and a wait ends with the receipt or with its timeout error.

import type { BlockRecord } from '../../chain/view.js'
import type { RawJson } from '../context.js'
import { receiptJson } from './chain-json.js'

interface Waiter {
  resolve(receipt: RawJson | null): void
  reject(err: unknown): void
  timer: NodeJS.Timeout
}

export class ReceiptWaiters {
  private readonly byHash = new Map<string, Waiter[]>()

  /** Resolves with the receipt of `hash` once a block holds it; rejects with `onTimeout()` after `timeoutMs`. */
  wait(hash: string, timeoutMs: number, onTimeout: () => Error): Promise<RawJson | null> {
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        reject,
        timer: setTimeout(() => {
          this.remove(hash, waiter)
          reject(onTimeout())
        }, timeoutMs),
      }
      // a wait never keeps a stopping node alive: its connection closes with the server
      waiter.timer.unref()
      const list = this.byHash.get(hash)
      if (list === undefined) this.byHash.set(hash, [waiter])
      else list.push(waiter)
    })
  }

  blockArrived(block: BlockRecord): void {
    if (this.byHash.size === 0) return
    const hashes = block.txHashes
    for (let i = 0; i < hashes.length; i++) {
      const list = this.byHash.get(hashes[i])
      if (list === undefined) continue
      this.byHash.delete(hashes[i])
      const receipt = receiptJson(block, i)
      for (const waiter of list) {
        clearTimeout(waiter.timer)
        waiter.resolve(receipt)
      }
    }
  }

  private remove(hash: string, waiter: Waiter): void {
    const list = this.byHash.get(hash)
    if (list === undefined) return
    const rest = list.filter((w) => w !== waiter)
    if (rest.length === 0) this.byHash.delete(hash)
    else this.byHash.set(hash, rest)
  }
}
