// The main thread's handle on the producer thread: request/reply over postMessage, block events out.

import { PRODUCER_HEAP_LIMITS } from '../util/worker-heap.js'
import { Worker } from 'node:worker_threads'
import { fromShape } from '../errors.js'
import { HandOffBatch } from './hand-off-batch.js'
import { PooledSenders } from './pooled-senders.js'
import type { FromProducer, HeadInfo, NewBlockEvent, PoolQuery, ProducerInit, StorageStatus, StreamStatus, SubmitOutcome, ToProducer, TxWire } from './messages.js'

interface Pending {
  resolve(value: unknown): void
  reject(err: Error): void
}

export interface ProducerReady {
  head: HeadInfo
  genesisHash: string
  hardfork: string
}

export class ProducerClient {
  private readonly worker: Worker
  private readonly pending = new Map<number, Pending>()
  private nextId = 1
  private blockListeners: Array<(event: NewBlockEvent) => void> = []
  /**
   * Blocks the thread reported before `deliverBlocks`: a replica applies its stream's backlog, and a
   * producer may seal, while the main thread is still setting up the listeners that keep its view.
   */
  private heldBlocks: NewBlockEvent[] | undefined = []
  private pendingTxListeners: Array<(hashes: string[]) => void> = []
  private streamListeners: Array<(status: StreamStatus) => void> = []
  /** the block stream's state as the thread last reported it (--stream-url) */
  streamStatus: StreamStatus | undefined
  /** whether the producer can write the database, as the thread last reported it */
  storageStatus: StorageStatus = { writable: true, failures: 0 }
  private storageListeners: Array<(status: StorageStatus) => void> = []
  private readonly remotePool: boolean
  private exited = false
  /** messages that carried submitted transactions to the producer, and how many transactions they carried */
  readonly submits = new HandOffBatch<TxWire, SubmitOutcome>((txs) => this.request({ kind: 'submit', txs } as ToProducer) as Promise<SubmitOutcome[]>)
  private readonly nonces = new HandOffBatch<string, bigint>((addresses) => this.query<bigint[]>({ q: 'nonces', addresses }))
  private readonly pooledSenders = new PooledSenders()
  readonly ready: Promise<ProducerReady>
  /**
   * The thread's V8 heap is set up (with the V8 flags that held at its spawn), or the thread ended
   * without getting there: either way, flags set from now on no longer reach it.
   */
  readonly online: Promise<void>

  /**
   * Spawns the thread, which loads its code at once; it opens the chain when `start` gives it the genesis.
   * `thread`: another entry speaking the same messages (a replica's, replication/replica-thread.ts), whose
   * pool is the producer's elsewhere: every pending nonce is asked there.
   */
  constructor(onFatal: (message: string, needsSnapshot: boolean) => void, thread?: URL) {
    this.remotePool = thread !== undefined
    this.worker = new Worker(thread ?? new URL('./producer-thread.js', import.meta.url), { resourceLimits: PRODUCER_HEAP_LIMITS })
    this.online = new Promise((resolve) => {
      this.worker.once('online', () => resolve())
      this.worker.once('exit', () => resolve())
    })
    let markReady!: (r: ProducerReady) => void
    let failReady!: (err: Error) => void
    this.ready = new Promise((resolve, reject) => {
      markReady = resolve
      failReady = reject
    })
    // awaited by the caller of start(); a thread ended before it was started has no one waiting
    this.ready.catch(() => {})
    this.worker.on('message', (msg: FromProducer) => {
      switch (msg.kind) {
        case 'reply': {
          const waiter = this.pending.get(msg.id)
          if (waiter === undefined) return
          this.pending.delete(msg.id)
          if (msg.ok) waiter.resolve(msg.result)
          else waiter.reject(fromShape(msg.error))
          if (msg.ok && msg.pendingTx !== undefined) this.notifyPendingTx(msg.pendingTx)
          break
        }
        case 'block':
          this.pooledSenders.poolReported(msg.pooledSenders)
          if (this.heldBlocks !== undefined) this.heldBlocks.push(msg)
          else for (const listener of this.blockListeners) listener(msg)
          break
        case 'pendingTx':
          this.notifyPendingTx(msg.hashes)
          break
        case 'stream':
          this.streamStatus = msg.status
          for (const listener of this.streamListeners) listener(msg.status)
          break
        case 'storage':
          this.storageStatus = msg.status
          for (const listener of this.storageListeners) listener(msg.status)
          break
        case 'ready':
          this.pooledSenders.poolReported(msg.pooledSenders)
          markReady({ head: msg.head, genesisHash: msg.genesisHash, hardfork: msg.hardfork })
          break
        case 'fatal':
          failReady(new Error(msg.message))
          onFatal(msg.message, msg.needsSnapshot === true)
          break
      }
    })
    this.worker.on('error', (err) => {
      failReady(err)
      onFatal(`producer thread crashed: ${err.stack ?? err.message}`, false)
    })
    this.worker.on('exit', (code) => {
      this.exited = true
      const err = new Error(`producer thread exited (code ${code})`)
      failReady(err)
      for (const waiter of this.pending.values()) waiter.reject(err)
      this.pending.clear()
    })
  }

  /** Opens (or creates) the chain of `init.genesis`; `ready` resolves once the thread serves it. */
  start(init: ProducerInit): void {
    this.worker.postMessage(init)
  }

  /** Ends a thread that was never started (its genesis could not be resolved). */
  async discard(): Promise<void> {
    await this.worker.terminate()
  }

  onBlock(listener: (event: NewBlockEvent) => void): void {
    this.blockListeners.push(listener)
  }

  /** Every listener is in place: the blocks held since the start reach them, in order, and later ones as they come. */
  deliverBlocks(): void {
    const held = this.heldBlocks
    if (held === undefined) return
    this.heldBlocks = undefined
    for (const event of held) for (const listener of this.blockListeners) listener(event)
  }

  onPendingTx(listener: (hashes: string[]) => void): void {
    this.pendingTxListeners.push(listener)
  }

  onStreamStatus(listener: (status: StreamStatus) => void): void {
    this.streamListeners.push(listener)
  }

  onStorageStatus(listener: (status: StorageStatus) => void): void {
    this.storageListeners.push(listener)
  }

  private notifyPendingTx(hashes: string[]): void {
    for (const listener of this.pendingTxListeners) listener(hashes)
  }

  private request(msg: Omit<ToProducer, 'id'> & { kind: ToProducer['kind'] }): Promise<unknown> {
    if (this.exited) return Promise.reject(new Error('producer thread is not running'))
    const id = this.nextId++
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject })
      this.worker.postMessage({ ...msg, id })
    })
  }

  /** Hands a transaction to the pool; resolves to its hash once pooled (travels in a batch: hand-off-batch.ts). */
  async submit(tx: TxWire): Promise<{ hash: string; nextBlock: boolean }> {
    if (this.exited) throw new Error('producer thread is not running')
    this.pooledSenders.submitted(tx.sender)
    let outcome: SubmitOutcome | undefined
    try {
      outcome = await this.submits.add(tx)
    } finally {
      this.pooledSenders.settled(tx.sender, outcome?.ok === true)
    }
    if (!outcome.ok) throw fromShape(outcome.error)
    return { hash: outcome.hash, nextBlock: outcome.nextBlock }
  }

  /**
   * Whether the sender may have transactions in the pool; when not, its pending nonce is its account's
   * nonce at the head the main thread knows, and the producer need not be asked.
   */
  mayHavePooled(address: string): boolean {
    return this.exited || this.remotePool || this.pooledSenders.mayHavePooled(address)
  }

  /**
   * The nonce of the sender's next transaction: its account's, past the transactions it has in the pool.
   * Batched like submissions: wallets ask before every send, and a message per ask cost the main thread
   * more than an eth_getTransactionCount at 'latest' costs in all.
   */
  pendingNonce(address: string): Promise<bigint> {
    if (this.exited) return Promise.reject(new Error('producer thread is not running'))
    return this.nonces.add(address)
  }

  query<T>(query: PoolQuery): Promise<T> {
    return this.request({ kind: 'pool', query } as ToProducer) as Promise<T>
  }

  async shutdown(): Promise<void> {
    if (this.exited) return
    try {
      await this.request({ kind: 'shutdown' } as ToProducer)
    } finally {
      await this.worker.terminate()
    }
  }
}
