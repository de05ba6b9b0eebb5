// The producer's side of the block stream (--stream-url). Runs on the producer thread: each block's batch
// carries its outbox entry (outbox.ts), and once the batch is on disk the block is published to
// JetStream in order, fenced on the stream's last sequence so that a second producer writing to the same
// stream is refused and says so. Sealing never waits on NATS: while NATS is down the blocks queue up (in
// memory, and in the outbox on disk), the backlog is reported, and publishing resumes in order once NATS
// answers again, from where the stream ends.

import { connect } from '@nats-io/transport-node'
import type { NatsConnection } from '@nats-io/transport-node'
import { jetstream, jetstreamManager, JetStreamApiCodes, JetStreamApiError, DiscardPolicy, RetentionPolicy, StorageType } from '@nats-io/jetstream'
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream'
import { bytesToHex } from '@ethereumjs/util'
import type { ChainLevel } from '../chain/store/level.js'
import type { LevelOp } from '../chain/store/state-db.js'
import { Keys } from '../chain/store/schema.js'
import type { StreamStatus } from '../chain/messages.js'
import type { BlockWriteSet, WriteSetSink } from '../chain/write-set.js'
import type { Logger } from '../logging/logger.js'
import { encodeBlockMessage } from './block-message.js'
import type { BlockMessage } from './block-message.js'
import { Backoff } from './backoff.js'
import { ReplicationError } from './errors.js'
import { messageOfWriteSet, outboxNumbers, outboxOp, readOutboxMessage } from './outbox.js'
import { blockSubject, chunkHeaders, chunkMessageId, pendingSubject, readChunkInfo, splitPayload, streamName, watchConnection } from './stream.js'

export interface PublisherOptions {
  url: string
  chainId: number
  level: ChainLevel
  logger: Logger
  /** how long the stream keeps blocks, when the producer creates it */
  maxAgeSeconds: number
  onStatus(status: StreamStatus): void
}

/** Write sets kept in memory for publishing; older unpublished blocks are rebuilt from the outbox. */
const MEMORY_BLOCKS = 64
const PUBLISH_TIMEOUT_MS = 5_000
const DUPLICATE_WINDOW_MS = 120_000

export class BlockPublisher implements WriteSetSink {
  private readonly recent = new Map<bigint, BlockWriteSet>()
  /** outbox entries of acknowledged blocks, deleted in the next block's batch (no write of their own) */
  private readonly acked: bigint[] = []
  private head = -1n
  private next: bigint | undefined
  private lastSeq = 0
  /** blocks committed before the stream was first reached */
  private unsynced = 0
  private connected = false
  private fenced: string | undefined
  private nc: NatsConnection | undefined
  private js: JetStreamClient | undefined
  /** ends the wait for the next committed block */
  private wake: (() => void) | undefined
  private readonly backoff = new Backoff()
  private closed = false
  private loop: Promise<void> | undefined
  private readonly subject: string
  private readonly stream: string

  constructor(private readonly opts: PublisherOptions) {
    this.subject = blockSubject(opts.chainId)
    this.stream = streamName(opts.chainId)
  }

  /** Starts publishing; `head` is the chain's head when the producer opened it. */
  start(head: bigint): void {
    this.head = head
    this.loop ??= this.run()
  }

  /**
   * Hashes newly pooled on the producer, for the replicas' newPendingTransactions subscriptions and
   * pending-transaction filters: plain NATS, not the stream (a replica that misses some misses what a
   * subscriber on the producer would miss across a reconnect).
   */
  publishPending(hashes: string[]): void {
    if (!this.connected || this.nc === undefined || hashes.length === 0) return
    try {
      this.nc.publish(pendingSubject(this.opts.chainId), JSON.stringify(hashes))
    } catch {
      // disconnected: the block stream's retry loop reports it
    }
  }

  prepare(ws: BlockWriteSet): LevelOp[] {
    const ops = [outboxOp(ws)]
    for (const n of this.acked) ops.push({ type: 'del', key: Keys.outbox(n) })
    return ops
  }

  committed(ws: BlockWriteSet): void {
    // the deletes that rode on this batch are done
    this.acked.length = 0
    if (this.next === undefined) this.unsynced++
    this.head = ws.number
    this.recent.set(ws.number, ws)
    if (this.recent.size > MEMORY_BLOCKS) this.recent.delete(this.recent.keys().next().value as bigint)
    this.report()
    this.wake?.()
    // a new block is also a new try while NATS is unreachable
    this.backoff.interrupt()
  }

  status(): StreamStatus {
    const block = this.next === undefined ? -1n : this.next - 1n
    // before the stream was first reached, every block in memory or the outbox counts
    const backlog = this.next === undefined ? this.unsynced : Number(this.head - this.next + 1n)
    const stopped = this.fenced === undefined ? undefined : { code: 'fenced', reason: this.fenced }
    return { role: 'producer', connected: this.connected, block, backlog: Math.max(0, backlog), stopped }
  }

  private report(): void {
    this.opts.onStatus(this.status())
  }

  async close(): Promise<void> {
    this.closed = true
    this.wake?.()
    this.backoff.interrupt()
    // closing the connection ends a publish waiting for its ack
    await this.nc?.close().catch(() => {})
    await this.loop
    // what is still unpublished stays in the outbox for the next start
    if (this.acked.length > 0) await this.opts.level.batch(this.acked.map((n) => ({ type: 'del' as const, key: Keys.outbox(n) })))
  }

  private async run(): Promise<void> {
    let outage = false
    while (!this.closed && this.fenced === undefined) {
      try {
        await this.sync()
        if (outage) this.opts.logger.info('block stream reachable again', { url: this.opts.url, from: this.next })
        outage = false
        this.backoff.reset()
        while (!this.closed) {
          if (this.next! > this.head) {
            await new Promise<void>((resolve) => (this.wake = resolve))
            this.wake = undefined
            continue
          }
          await this.publish(this.next!)
          this.next!++
          this.report()
        }
      } catch (err) {
        if (this.closed) break
        if (err instanceof ReplicationError && err.code === 'fenced') {
          this.fenced = err.message
          this.opts.logger.error('block stream refused this producer; blocks are no longer published', { reason: err.message })
          this.report()
          break
        }
        this.connected = false
        this.report()
        if (!outage) this.opts.logger.warn('block stream unreachable; blocks are kept and published once it answers', { url: this.opts.url, err: (err as Error).message })
        outage = true
        await this.backoff.wait()
      }
    }
    await this.nc?.close().catch(() => {})
  }

  /** Connects if needed, creates the stream if missing, and finds the first block the stream lacks. */
  private async sync(): Promise<void> {
    if (this.nc === undefined || this.nc.isClosed()) {
      this.nc = await connect({ servers: this.opts.url, name: 'keel-producer', maxReconnectAttempts: -1, reconnectTimeWait: 500 })
      this.js = jetstream(this.nc, { timeout: PUBLISH_TIMEOUT_MS })
      void watchConnection(this.nc, {
        disconnect: () => {
          if (!this.connected) return
          this.connected = false
          this.report()
        },
        // resynchronise at once rather than after the retry's back-off
        reconnect: () => this.backoff.interrupt(),
      })
    }
    const jsm = await jetstreamManager(this.nc, { timeout: PUBLISH_TIMEOUT_MS })
    await this.ensureStream(jsm)
    const info = await jsm.streams.info(this.stream)
    this.lastSeq = info.state.last_seq
    const pending = await outboxNumbers(this.opts.level)
    let next: bigint
    if (this.lastSeq === 0) {
      next = pending[0] ?? this.head + 1n
    } else {
      const last = await jsm.streams.getMessage(this.stream, { seq: this.lastSeq })
      if (last === null) throw new Error(`stream ${this.stream} has no message ${this.lastSeq}`)
      const chunk = readChunkInfo(last.header)
      const ours = await this.opts.level.get(Keys.canonicalHash(chunk.number))
      if (ours === undefined || bytesToHex(ours) !== chunk.hash) {
        throw new ReplicationError(
          'fenced',
          `stream ${this.stream} ends with block ${chunk.number} ${chunk.hash}, which is not on this producer's chain (head ${this.head}): another producer publishes to it`,
        )
      }
      next = chunk.index === chunk.count - 1 ? chunk.number + 1n : chunk.number
    }
    // entries of blocks the stream already holds (acknowledged just before a crash)
    const stale = pending.filter((n) => n < next)
    if (stale.length > 0) await this.opts.level.batch(stale.map((n) => ({ type: 'del' as const, key: Keys.outbox(n) })))
    const firstPending = pending.find((n) => n >= next)
    if (next <= this.head && firstPending !== next && !this.recent.has(next)) {
      const resume = firstPending ?? this.head + 1n
      this.opts.logger.warn('blocks missing from the block stream cannot be published (sealed while no --stream-url was set); replicas re-bootstrap past them', { from: next, to: resume - 1n })
      next = resume
    }
    this.next = next
    this.connected = true
    this.report()
  }

  private async ensureStream(jsm: JetStreamManager): Promise<void> {
    try {
      await jsm.streams.info(this.stream)
    } catch (err) {
      if (!(err instanceof JetStreamApiError) || err.code !== JetStreamApiCodes.StreamNotFound) throw err
      await jsm.streams.add({
        name: this.stream,
        subjects: [this.subject],
        storage: StorageType.File,
        retention: RetentionPolicy.Limits,
        discard: DiscardPolicy.Old,
        max_age: this.opts.maxAgeSeconds * 1e9,
        duplicate_window: DUPLICATE_WINDOW_MS * 1e6,
      })
      this.opts.logger.info('block stream created', { stream: this.stream, subject: this.subject, maxAgeSeconds: this.opts.maxAgeSeconds })
    }
  }

  private async messageOf(number: bigint): Promise<{ message: BlockMessage; committedAt: number }> {
    const ws = this.recent.get(number)
    return ws !== undefined ? { message: messageOfWriteSet(ws), committedAt: ws.committedAt } : readOutboxMessage(this.opts.level, number)
  }

  private async publish(number: bigint): Promise<void> {
    const { message, committedAt } = await this.messageOf(number)
    const hash = bytesToHex(this.recent.get(number)?.hash ?? (await this.opts.level.get(Keys.canonicalHash(number)))!)
    const chunks = splitPayload(encodeBlockMessage(message), this.nc!.info?.max_payload ?? 1 << 20)
    for (let index = 0; index < chunks.length; index++) {
      const info = { number, hash, index, count: chunks.length, committedAt }
      try {
        const ack = await this.js!.publish(this.subject, chunks[index], {
          msgID: chunkMessageId(info),
          headers: chunkHeaders(info),
          // a stream that moved since our last publish has another writer
          expect: this.lastSeq > 0 ? { lastSequence: this.lastSeq } : {},
        })
        this.lastSeq = ack.seq
      } catch (err) {
        if (err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamWrongLastSequence) {
          throw new ReplicationError('fenced', `stream ${this.stream} moved past sequence ${this.lastSeq} while block ${number} was published: another producer publishes to it`)
        }
        throw err
      }
    }
    this.recent.delete(number)
    this.acked.push(number)
  }
}
