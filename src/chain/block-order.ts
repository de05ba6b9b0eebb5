// The order a block takes the pool's transactions in: per sender by nonce, across senders by effective
// tip (geth's TransactionsByPriceAndNonce). With a block time, a block is built before its slot: it takes
// what arrives until the slot comes (`until`), then is sealed, so a transaction waits for the rest of the
// slot and the commit instead of the next slot and the whole of the next build
// (docs/measurements.md#building-ahead-of-the-slot).

import { effectiveTip } from './pooled-tx.js'
import type { PooledTx } from './pooled-tx.js'

/** What the order reads of the pool: a sender's pending transaction at a nonce, and its first pending one. */
export interface PendingView {
  pendingAt(sender: string, nonce: bigint): PooledTx | undefined
  pendingHead(sender: string): PooledTx | undefined
}

/** A max-heap of sender heads by effective tip (earlier arrival first on ties), as geth's txByPriceAndTime. */
class HeadHeap {
  private readonly items: { tx: PooledTx; tip: bigint }[] = []
  peek(): { tx: PooledTx; tip: bigint } | undefined {
    return this.items[0]
  }
  push(tx: PooledTx, tip: bigint): void {
    this.items.push({ tx, tip })
    this.up(this.items.length - 1)
  }
  replaceTop(tx: PooledTx, tip: bigint): void {
    this.items[0] = { tx, tip }
    this.down(0)
  }
  popTop(): void {
    const last = this.items.pop()
    if (last !== undefined && this.items.length > 0) {
      this.items[0] = last
      this.down(0)
    }
  }
  private before(a: number, b: number): boolean {
    const x = this.items[a]!
    const y = this.items[b]!
    return x.tip !== y.tip ? x.tip > y.tip : x.tx.arrivedAt < y.tx.arrivedAt
  }
  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (!this.before(i, parent)) return
      this.swap(i, parent)
      i = parent
    }
  }
  private down(i: number): void {
    const n = this.items.length
    for (;;) {
      const l = 2 * i + 1
      const r = l + 1
      let best = i
      if (l < n && this.before(l, best)) best = l
      if (r < n && this.before(r, best)) best = r
      if (best === i) return
      this.swap(i, best)
      i = best
    }
  }
  private swap(a: number, b: number): void {
    const t = this.items[a]!
    this.items[a] = this.items[b]!
    this.items[b] = t
  }
}

/**
 * Walks the pending txs in block order. The builder calls shift() after including peek(), or pop() to
 * skip the rest of that sender (the tx did not fit or failed).
 *
 * With `until` (a Date.now() deadline, the block's slot): a sender whose pending transactions ran out
 * comes back when the pool tells of a new one (arrived()), a sender new to the pool joins, a dropped one
 * stays out; more() waits for them. Past the deadline a transaction that arrived after the order was made
 * is left for the next block, so a build under a steady stream of submissions ends. Without a deadline
 * (automine) only the senders present at the start are walked, each as far as its pending transactions reach.
 */
export class BlockOrder {
  private readonly heap = new HeadHeap()
  private readonly startedAt = Date.now()
  /** senders in the heap */
  private readonly walking = new Set<string>()
  /** senders whose pending transactions ran out, with the nonce they would go on from */
  private readonly ranOut = new Map<string, bigint>()
  /** senders skipped for the rest of the block */
  private readonly dropped = new Set<string>()
  /** senders the pool told of since the last peek */
  private readonly woken = new Set<string>()
  /** ms spent waiting for arrivals or the deadline (a block's build time leaves them out) */
  waitedMs = 0
  /** more()'s wait: ended by an arrival, the deadline or end() */
  private waiting: { wake(): void; timer: NodeJS.Timeout } | undefined

  constructor(
    private readonly pool: PendingView,
    private readonly baseFee: bigint,
    heads: PooledTx[],
    private until?: number,
  ) {
    for (const tx of heads) {
      if (tx.maxFeePerGas >= baseFee) {
        this.heap.push(tx, effectiveTip(tx, baseFee))
        this.walking.add(tx.sender)
      }
    }
  }

  /** Whether this order takes transactions that arrive while the block is built. */
  get takesArrivals(): boolean {
    return this.until !== undefined
  }

  /** The pool took a pending transaction of `sender`. */
  arrived(sender: string): void {
    if (!this.walking.has(sender) && !this.dropped.has(sender)) {
      this.woken.add(sender)
      this.waiting?.wake()
    }
  }

  /**
   * Waits until an arrival may give a candidate (true: peek() again) or the deadline passes (false).
   * Without a deadline, false at once.
   */
  more(): Promise<boolean> {
    return this.woken.size > 0 ? Promise.resolve(this.beforeDeadline()) : this.sleep()
  }

  /** Resolves once the deadline has passed (at once without one): a block is not sealed before its slot. */
  async deadline(): Promise<void> {
    // a timer may fire a millisecond early; an arrival that wakes the wait goes in the next block
    while (this.until !== undefined && Date.now() < this.until) {
      await this.sleep()
      this.woken.clear()
    }
  }

  /** Ends the wait for arrivals now (the producer is closing). */
  end(): void {
    if (this.until !== undefined) this.until = 0
    this.waiting?.wake()
  }

  private beforeDeadline(): boolean {
    return this.until !== undefined && Date.now() <= this.until
  }

  /** Sleeps until an arrival (true) or the deadline (false); false at once past it. */
  private sleep(): Promise<boolean> {
    const left = this.until === undefined ? 0 : this.until - Date.now()
    if (left <= 0) return Promise.resolve(false)
    const from = performance.now()
    return new Promise<boolean>((resolve) => {
      const done = (woken: boolean) => {
        clearTimeout(this.waiting!.timer)
        this.waiting = undefined
        this.waitedMs += performance.now() - from
        resolve(woken && this.beforeDeadline())
      }
      this.waiting = { wake: () => done(true), timer: setTimeout(() => done(false), left) }
    })
  }

  peek(): PooledTx | undefined {
    if (this.woken.size > 0) this.rejoin()
    for (;;) {
      const top = this.heap.peek()
      if (top === undefined) return undefined
      if (this.until !== undefined && top.tx.arrivedAt > this.startedAt && Date.now() > this.until) {
        this.leave(top.tx.sender, top.tx.nonce)
        continue
      }
      return top.tx
    }
  }

  /** Accepts the current head and moves to the next nonce of the same sender. */
  shift(): void {
    const top = this.heap.peek()
    if (top === undefined) return
    const next = this.pool.pendingAt(top.tx.sender, top.tx.nonce + 1n)
    if (next !== undefined && next.maxFeePerGas >= this.baseFee) this.heap.replaceTop(next, effectiveTip(next, this.baseFee))
    else this.leave(top.tx.sender, top.tx.nonce + 1n)
  }

  /** Drops the current head and every later tx of its sender. */
  pop(): void {
    const top = this.heap.peek()
    if (top === undefined) return
    this.walking.delete(top.tx.sender)
    this.dropped.add(top.tx.sender)
    this.heap.popTop()
  }

  /** The heap's top sender has nothing more to give now; it may come back from `nonce` on (rejoin). */
  private leave(sender: string, nonce: bigint): void {
    this.walking.delete(sender)
    this.ranOut.set(sender, nonce)
    this.heap.popTop()
  }

  private rejoin(): void {
    for (const sender of this.beforeDeadline() ? this.woken : []) {
      const from = this.ranOut.get(sender)
      const tx = from === undefined ? this.pool.pendingHead(sender) : this.pool.pendingAt(sender, from)
      if (tx === undefined || tx.maxFeePerGas < this.baseFee) continue
      this.heap.push(tx, effectiveTip(tx, this.baseFee))
      this.walking.add(sender)
      this.ranOut.delete(sender)
    }
    this.woken.clear()
  }
}
