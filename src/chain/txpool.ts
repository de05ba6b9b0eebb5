// The transaction pool of the block producer thread. Per sender, txs whose nonces run contiguously from
// the state nonce are pending (executable); the rest are queued (gapped). Stateful checks and their geth
// wordings follow core/txpool/legacypool; block selection follows geth's TransactionsByPriceAndNonce
// (nonce order per sender, highest effective tip across senders).

import { bytesToHex, toChecksumAddress } from '@ethereumjs/util'
import { serverError, TxError } from '../errors.js'
import type { RpcError } from '../errors.js'
import { BlockOrder } from './block-order.js'
import { effectiveTip } from './pooled-tx.js'
import type { PooledTx } from './pooled-tx.js'

/** The latest committed state, as the pool needs it. */
export interface AccountReader {
  getNonce(addr: string): Promise<bigint>
  getBalance(addr: string): Promise<bigint>
}

export interface TxPoolOptions {
  /** Max txs in the pool (pending + queued); geth GlobalSlots + GlobalQueue order of magnitude. */
  maxSlots: number
  /** Queued txs may use nonces up to (pending nonce + this). */
  maxQueuedPerAccount: number
  maxPendingPerAccount: number
  /** A replacement must raise both fee cap and tip by at least this percentage. */
  priceBumpPercent: number
  /** Queued txs older than this are dropped. */
  lifetimeMs: number
  now: () => number
}

export const DEFAULT_TXPOOL_OPTIONS: TxPoolOptions = {
  maxSlots: 5120,
  maxQueuedPerAccount: 64,
  maxPendingPerAccount: 1024,
  priceBumpPercent: 10,
  lifetimeMs: 3 * 60 * 60 * 1000,
  now: Date.now,
}

export interface AddResult {
  status: 'pending' | 'queued'
  /** The tx this one replaced (same sender and nonce). */
  replaced?: PooledTx
  /** Queued txs of the same sender that this tx made executable. */
  promoted: PooledTx[]
  /** Txs that left the pool as a side effect: evicted to make room, or made stale by the state nonce. */
  removed: PooledTx[]
}

/** geth's txpool_content shape: {pending: {address: {nonce: tx}}, queued: {...}}. */
export interface PoolContent<T> {
  pending: Record<string, Record<string, T>>
  queued: Record<string, Record<string, T>>
}

// geth wordings for the overdraft checks of ValidateTransactionWithState (not in src/errors.ts).
const overdraftOnAdd = (balance: bigint, spent: bigint, cost: bigint): RpcError =>
  serverError(
    `insufficient funds for gas * price + value: balance ${balance}, queued cost ${spent}, tx cost ${cost}, overshot ${spent + cost - balance}`,
  )
const overdraftOnReplace = (balance: bigint, spent: bigint, bump: bigint): RpcError =>
  serverError(
    `insufficient funds for gas * price + value: balance ${balance}, queued cost ${spent}, tx bumped ${bump}, overshot ${spent + bump - balance}`,
  )

const MIN_TX_GAS = 21000n

class SenderTxs {
  readonly txs = new Map<bigint, PooledTx>()
  /** Latest known state nonce. */
  nonce: bigint
  /** First nonce at or after `nonce` that has no tx: txs in [nonce, pendingEnd) are pending. */
  pendingEnd: bigint
  /** Sum of the costs of the pending txs. */
  pendingCost = 0n
  /** pendingEnd - nonce, kept as a number for the pool-wide counter. */
  pendingCount = 0
  constructor(nonce: bigint) {
    this.nonce = nonce
    this.pendingEnd = nonce
  }
  isPending(nonce: bigint): boolean {
    return nonce >= this.nonce && nonce < this.pendingEnd
  }
}

export class TxPool {
  private readonly opts: TxPoolOptions
  private readonly byHash = new Map<string, PooledTx>()
  private readonly senders = new Map<string, SenderTxs>()
  private pendingTotal = 0
  /** The order of the block being built, told of arrivals (with a block time: block-order.ts) */
  private building: BlockOrder | undefined

  constructor(options: Partial<TxPoolOptions> = {}) {
    this.opts = { ...DEFAULT_TXPOOL_OPTIONS, ...options }
  }

  get size(): number {
    return this.byHash.size
  }

  get(hash: string): PooledTx | undefined {
    return this.byHash.get(hash.toLowerCase())
  }

  has(hash: string): boolean {
    return this.byHash.has(hash.toLowerCase())
  }

  status(): { pending: number; queued: number } {
    return { pending: this.pendingTotal, queued: this.byHash.size - this.pendingTotal }
  }

  /** Next nonce for a sender: the state nonce plus its contiguous pending txs (eth_getTransactionCount 'pending'). */
  pendingNonce(addr: string, stateNonce: bigint): bigint {
    const acc = this.senders.get(addr.toLowerCase())
    if (acc === undefined) return stateNonce
    if (acc.nonce === stateNonce) return acc.pendingEnd
    let n = stateNonce
    while (acc.txs.has(n)) n++
    return n
  }

  /** The senders with any transaction in the pool, pending or queued (lowercase). */
  senderAddresses(): string[] {
    return [...this.senders.keys()]
  }

  /** Hashes of the executable txs (eth_newPendingTransactionFilter, newPendingTransactions). */
  pendingHashes(): string[] {
    const out: string[] = []
    for (const acc of this.senders.values()) {
      for (let n = acc.nonce; n < acc.pendingEnd; n++) out.push(acc.txs.get(n)!.hash)
    }
    return out
  }

  /** The pending tx of a sender at a nonce, if any. */
  pendingAt(sender: string, nonce: bigint): PooledTx | undefined {
    const acc = this.senders.get(sender)
    return acc !== undefined && acc.isPending(nonce) ? acc.txs.get(nonce) : undefined
  }

  /**
   * Admits a statelessly validated tx after the stateful checks, in geth's wording.
   * @throws RpcError (-32000)
   */
  async add(ptx: PooledTx, reader: AccountReader, baseFee: bigint): Promise<AddResult> {
    if (this.byHash.has(ptx.hash)) throw TxError.alreadyKnown()
    const [stateNonce, balance] = await Promise.all([reader.getNonce(ptx.sender), reader.getBalance(ptx.sender)])
    // Everything below is synchronous, so concurrent add() calls cannot interleave with it.
    if (this.byHash.has(ptx.hash)) throw TxError.alreadyKnown()
    const removed: PooledTx[] = []
    let acc = this.senders.get(ptx.sender)
    if (acc !== undefined && stateNonce > acc.nonce) {
      this.advanceNonce(acc, stateNonce, removed)
      if (acc.txs.size === 0) {
        this.senders.delete(ptx.sender)
        acc = undefined
      }
    }
    const next = acc !== undefined && acc.nonce > stateNonce ? acc.nonce : stateNonce
    if (ptx.nonce < next) throw TxError.nonceTooLow(next, ptx.nonce)
    if (balance < ptx.cost) throw TxError.insufficientFunds(balance, ptx.cost)

    const old = acc?.txs.get(ptx.nonce)
    const spent = acc?.pendingCost ?? 0n
    if (old !== undefined && acc!.isPending(ptx.nonce)) {
      const bump = ptx.cost - old.cost
      if (balance < spent + bump) throw overdraftOnReplace(balance, spent, bump)
    } else if (balance < spent + ptx.cost) {
      throw overdraftOnAdd(balance, spent, ptx.cost)
    }

    if (old !== undefined) {
      if (!this.outbids(ptx, old)) throw TxError.replacementUnderpriced()
    } else {
      const pendingEnd = acc?.pendingEnd ?? next
      if (ptx.nonce > pendingEnd + BigInt(this.opts.maxQueuedPerAccount)) throw TxError.nonceTooHigh(ptx.nonce, pendingEnd)
      const willBePending = ptx.nonce === pendingEnd
      if (willBePending && acc !== undefined && acc.pendingCount >= this.opts.maxPendingPerAccount) {
        throw TxError.accountLimit(acc.txs.size)
      }
      if (this.byHash.size >= this.opts.maxSlots) removed.push(this.makeRoom(ptx, willBePending, baseFee))
    }

    // eviction may have emptied (and unlinked) this sender's own entry
    acc = this.senders.get(ptx.sender)
    if (acc === undefined) {
      acc = new SenderTxs(next)
      this.senders.set(ptx.sender, acc)
    }
    const inserted = this.insert(acc, ptx, old)
    if (inserted.status === 'pending') this.building?.arrived(ptx.sender)
    return { ...inserted, removed }
  }

  /** Txs in block order with gas accounted by gas limit; see orderForBlock() for the lazy form. */
  selectForBlock(baseFee: bigint, gasLimit: bigint): PooledTx[] {
    const out: PooledTx[] = []
    const it = this.orderForBlock(baseFee)
    let left = gasLimit
    for (let tx = it.peek(); tx !== undefined && left >= MIN_TX_GAS; tx = it.peek()) {
      if (tx.gasLimit > left) {
        it.pop()
        continue
      }
      out.push(tx)
      left -= tx.gasLimit
      it.shift()
    }
    return out
  }

  /** Lazy block order over the pending txs payable at baseFee; with `slotAt`, also over what arrives until then. */
  orderForBlock(baseFee: bigint, slotAt?: number): BlockOrder {
    const heads: PooledTx[] = []
    for (const acc of this.senders.values()) {
      if (acc.pendingEnd > acc.nonce) heads.push(acc.txs.get(acc.nonce)!)
    }
    const order = new BlockOrder(this, baseFee, heads, slotAt)
    if (order.takesArrivals) this.building = order
    return order
  }

  /** The block `order` was made for is built: what arrives now waits for the next. */
  built(order: BlockOrder): void {
    if (this.building === order) this.building = undefined
  }

  /** A sender's first pending tx (at its state nonce), if any. */
  pendingHead(sender: string): PooledTx | undefined {
    const acc = this.senders.get(sender)
    return acc !== undefined && acc.pendingEnd > acc.nonce ? acc.txs.get(acc.nonce) : undefined
  }

  /**
   * After a block: drops its txs and the ones that failed while building, reconciles nonces with the
   * new state (stale txs go, queued txs that became contiguous are promoted, gaps demote) and expires
   * old queued txs. Returns the txs removed for any other reason than being included or dropped.
   * The base fee of the next block is accepted for symmetry with add(); ranking needs it only there.
   */
  async onBlock(included: PooledTx[], dropped: PooledTx[], reader: AccountReader, _baseFee: bigint): Promise<PooledTx[]> {
    const touched = new Set<string>()
    // a sender's nonce after the block, known without reading state: one past its last included tx
    const nonceAfter = new Map<string, bigint>()
    let delegations = false
    for (const ptx of included) {
      touched.add(ptx.sender)
      nonceAfter.set(ptx.sender, ptx.nonce + 1n)
      if (ptx.type === 4) delegations = true
      this.removeTx(ptx)
    }
    for (const ptx of dropped) {
      touched.add(ptx.sender)
      nonceAfter.delete(ptx.sender)
      this.removeTx(ptx)
    }
    // EIP-7702 authorizations bump the nonces of accounts other than the sender (and of senders too).
    let addrs = delegations ? [...this.senders.keys()] : [...touched].filter((a) => this.senders.has(a))
    if (!delegations) {
      // a sender with nothing left in the pool needs no nonce at all
      addrs = addrs.filter((a) => {
        const acc = this.senders.get(a)!
        if (acc.txs.size > 0) return true
        this.pendingTotal -= acc.pendingCount
        this.senders.delete(a)
        return false
      })
    }
    const nonces = await Promise.all(
      addrs.map((a) => (!delegations ? nonceAfter.get(a) : undefined) ?? reader.getNonce(a)),
    )

    const removed: PooledTx[] = []
    for (let i = 0; i < addrs.length; i++) {
      const addr = addrs[i]!
      const acc = this.senders.get(addr)
      if (acc === undefined) continue
      if (nonces[i]! > acc.nonce) this.advanceNonce(acc, nonces[i]!, removed)
      else this.recomputePending(acc)
      if (acc.txs.size === 0) this.senders.delete(addr)
    }
    removed.push(...this.expireQueued())
    return removed
  }

  /** Drops queued txs older than the lifetime. */
  expireQueued(now: number = this.opts.now()): PooledTx[] {
    const cutoff = now - this.opts.lifetimeMs
    const expired: PooledTx[] = []
    for (const [addr, acc] of this.senders) {
      if (acc.txs.size === acc.pendingCount) continue
      for (const [nonce, ptx] of acc.txs) {
        if (!acc.isPending(nonce) && ptx.arrivedAt < cutoff) {
          acc.txs.delete(nonce)
          this.byHash.delete(ptx.hash)
          expired.push(ptx)
        }
      }
      if (acc.txs.size === 0) this.senders.delete(addr)
    }
    return expired
  }

  /** Removes one tx (e.g. on operator request); later txs of its sender become queued. */
  remove(hash: string): PooledTx | undefined {
    const ptx = this.byHash.get(hash.toLowerCase())
    if (ptx === undefined) return undefined
    this.removeTx(ptx)
    const acc = this.senders.get(ptx.sender)
    if (acc !== undefined) {
      this.recomputePending(acc)
      if (acc.txs.size === 0) this.senders.delete(ptx.sender)
    }
    return ptx
  }

  /** Every pooled tx, ordered by sender then nonce. */
  all(): PooledTx[] {
    const out: PooledTx[] = []
    for (const acc of this.senders.values()) out.push(...sortedByNonce(acc))
    return out
  }

  /** Raw encodings in (sender, nonce) order, to save on shutdown and re-add on start. */
  serialize(): Uint8Array[] {
    return this.all().map((ptx) => ptx.raw)
  }

  /** txpool_content: checksummed address keys, decimal nonce keys. */
  content<T>(format: (ptx: PooledTx) => T): PoolContent<T> {
    const out: PoolContent<T> = { pending: {}, queued: {} }
    for (const [addr, acc] of this.senders) this.fillContent(out, addr, acc, format)
    return out
  }

  /** txpool_contentFrom: {pending: {nonce: tx}, queued: {...}} for one address. */
  contentFrom<T>(addr: string, format: (ptx: PooledTx) => T): { pending: Record<string, T>; queued: Record<string, T> } {
    const out = { pending: {} as Record<string, T>, queued: {} as Record<string, T> }
    const acc = this.senders.get(addr.toLowerCase())
    if (acc === undefined) return out
    for (const ptx of sortedByNonce(acc)) (acc.isPending(ptx.nonce) ? out.pending : out.queued)[ptx.nonce.toString()] = format(ptx)
    return out
  }

  /** txpool_inspect: "0xTo: 1 wei + 21000 gas × 1000000000 wei" per tx. */
  inspect(): PoolContent<string> {
    return this.content(inspectLine)
  }

  private fillContent<T>(out: PoolContent<T>, addr: string, acc: SenderTxs, format: (ptx: PooledTx) => T): void {
    const key = toChecksumAddress(addr)
    for (const ptx of sortedByNonce(acc)) {
      const side = acc.isPending(ptx.nonce) ? out.pending : out.queued
      const bucket = (side[key] ??= {})
      bucket[ptx.nonce.toString()] = format(ptx)
    }
  }

  /** geth list.Add: both fee cap and tip must rise, each by at least priceBump percent. */
  private outbids(ptx: PooledTx, old: PooledTx): boolean {
    if (ptx.maxFeePerGas <= old.maxFeePerGas || ptx.maxPriorityFeePerGas <= old.maxPriorityFeePerGas) return false
    const factor = BigInt(100 + this.opts.priceBumpPercent)
    const feeThreshold = (old.maxFeePerGas * factor) / 100n
    const tipThreshold = (old.maxPriorityFeePerGas * factor) / 100n
    return ptx.maxFeePerGas >= feeThreshold && ptx.maxPriorityFeePerGas >= tipThreshold
  }

  /**
   * Frees one slot for ptx by evicting the cheapest tx that is cheaper than ptx: a queued tx if any,
   * else (only to admit a pending tx) the last pending tx of another sender.
   */
  private makeRoom(ptx: PooledTx, willBePending: boolean, baseFee: bigint): PooledTx {
    let victim: PooledTx | undefined
    if (this.pendingTotal < this.byHash.size) {
      for (const acc of this.senders.values()) {
        if (acc.txs.size === acc.pendingCount) continue
        for (const [nonce, tx] of acc.txs) {
          if (!acc.isPending(nonce) && (victim === undefined || cheaper(tx, victim, baseFee))) victim = tx
        }
      }
    } else if (willBePending) {
      for (const [addr, acc] of this.senders) {
        if (addr === ptx.sender || acc.pendingCount === 0) continue
        const tail = acc.txs.get(acc.pendingEnd - 1n)!
        if (victim === undefined || cheaper(tail, victim, baseFee)) victim = tail
      }
    }
    if (victim === undefined) throw TxError.poolFull()
    if (!cheaper(victim, ptx, baseFee)) throw TxError.underpriced()
    this.remove(victim.hash)
    return victim
  }

  private insert(acc: SenderTxs, ptx: PooledTx, old: PooledTx | undefined): Omit<AddResult, 'removed'> {
    acc.txs.set(ptx.nonce, ptx)
    this.byHash.set(ptx.hash, ptx)
    if (old !== undefined) {
      this.byHash.delete(old.hash)
      const pending = acc.isPending(ptx.nonce)
      if (pending) acc.pendingCost += ptx.cost - old.cost
      return { status: pending ? 'pending' : 'queued', replaced: old, promoted: [] }
    }
    if (ptx.nonce !== acc.pendingEnd) return { status: 'queued', promoted: [] }
    const promoted: PooledTx[] = []
    let n = acc.pendingEnd
    for (let tx = acc.txs.get(n); tx !== undefined; tx = acc.txs.get(++n)) {
      acc.pendingCost += tx.cost
      if (tx !== ptx) promoted.push(tx)
    }
    const added = Number(n - acc.pendingEnd)
    acc.pendingCount += added
    this.pendingTotal += added
    acc.pendingEnd = n
    return { status: 'pending', promoted }
  }

  /** Unlinks a tx from the indexes; the caller recomputes its sender's pending range. */
  private removeTx(ptx: PooledTx): boolean {
    const acc = this.senders.get(ptx.sender)
    const current = acc?.txs.get(ptx.nonce)
    if (current === undefined || current.hash !== ptx.hash) return false
    acc!.txs.delete(ptx.nonce)
    this.byHash.delete(ptx.hash)
    return true
  }

  /** Moves a sender to a higher state nonce, dropping the txs it made stale. */
  private advanceNonce(acc: SenderTxs, stateNonce: bigint, removed: PooledTx[]): void {
    for (const [nonce, ptx] of acc.txs) {
      if (nonce < stateNonce) {
        acc.txs.delete(nonce)
        this.byHash.delete(ptx.hash)
        removed.push(ptx)
      }
    }
    acc.nonce = stateNonce
    this.recomputePending(acc)
  }

  /** Recomputes the pending range from the state nonce; returns txs that went from queued to pending. */
  private recomputePending(acc: SenderTxs): PooledTx[] {
    const promoted: PooledTx[] = []
    const before = acc.pendingCount
    const oldEnd = acc.pendingEnd
    let cost = 0n
    let n = acc.nonce
    for (let tx = acc.txs.get(n); tx !== undefined; tx = acc.txs.get(++n)) {
      cost += tx.cost
      if (n >= oldEnd) promoted.push(tx)
    }
    acc.pendingEnd = n
    acc.pendingCost = cost
    acc.pendingCount = Number(n - acc.nonce)
    this.pendingTotal += acc.pendingCount - before
    return promoted
  }
}

/** Eviction order: lower effective tip at the base fee, then lower fee cap. */
function cheaper(a: PooledTx, b: PooledTx, baseFee: bigint): boolean {
  const ta = effectiveTip(a, baseFee)
  const tb = effectiveTip(b, baseFee)
  return ta !== tb ? ta < tb : a.maxFeePerGas < b.maxFeePerGas
}

function sortedByNonce(acc: SenderTxs): PooledTx[] {
  return [...acc.txs.values()].sort((a, b) => (a.nonce < b.nonce ? -1 : a.nonce > b.nonce ? 1 : 0))
}

function inspectLine(ptx: PooledTx): string {
  const to = ptx.to
  const head = to === undefined ? 'contract creation' : toChecksumAddress(bytesToHex(to))
  return `${head}: ${ptx.value} wei + ${ptx.gasLimit} gas × ${ptx.maxFeePerGas} wei`
}
