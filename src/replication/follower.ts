// A replica's side of the block stream: an ordered JetStream consumer from the replica's head + 1; each
// block reassembled from its chunks, checked (verify.ts) and written as one batch before anything hears
// of it. A block that fails a check is never applied: the follower stops with the reason (a replica
// keeps serving what it has, and turns unready as it falls behind). While NATS is unreachable it keeps
// retrying, and the ordered consumer resumes where it stopped.

import { connect } from '@nats-io/transport-node'
import type { MsgHdrs, NatsConnection } from '@nats-io/transport-node'
import { DeliverPolicy, jetstream, jetstreamManager, JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream'
import type { JetStreamManager } from '@nats-io/jetstream'
import { bytesToHex } from '@ethereumjs/util'
import type { ChainLevel } from '../chain/store/level.js'
import { Keys } from '../chain/store/schema.js'
import { writeBatch } from '../chain/store/write-batch.js'
import type { Logger } from '../logging/logger.js'
import { decodeBlockMessage } from './block-message.js'
import { Backoff } from './backoff.js'
import { ReplicationError } from './errors.js'
import type { ReplicaHead, VerifiedBlock, VerifyContext } from './verify.js'
import { verifyBlock } from './verify.js'
import { ChunkAssembler, pendingSubject, readChunkInfo, streamName, watchConnection } from './stream.js'
import type { ChunkInfo } from './stream.js'

export interface FollowerStatus {
  connected: boolean
  head: bigint
  /** the newest block the stream holds, as last seen (-1: unknown) */
  streamHead: bigint
  /** why following stopped for good, if it did */
  stopped?: { code: string; reason: string }
}

export interface AppliedBlock {
  block: VerifiedBlock
  /** ms from the producer's commit to this replica's commit (undefined when the producer did not say) */
  lagMs: number | undefined
  applyMs: number
}

export interface FollowerOptions {
  url: string
  chainId: number
  level: ChainLevel
  logger: Logger
  verify: VerifyContext
  /** extra checks before a block is applied (--replica-verify execute); throws a ReplicationError */
  audit?(block: VerifiedBlock): Promise<void>
  onApplied(applied: AppliedBlock): void
  onStatus(status: FollowerStatus): void
  /** hashes newly pooled on the producer (core NATS, next to the stream) */
  onPending(hashes: string[]): void
}

const REQUEST_TIMEOUT_MS = 5_000
/** Messages the consumer asks for at a time. */
const CONSUME_WINDOW = 32
/** No message for this long while the stream has newer ones: the consumer is replaced. */
const STALL_MS = 3_000

export class BlockFollower {
  private nc: NatsConnection | undefined
  private connected = false
  private streamHead = -1n
  private stopped: FollowerStatus['stopped']
  private closed = false
  private messages: { close(): Promise<void | Error> } | undefined
  private readonly backoff = new Backoff()
  private readonly loop: Promise<void>
  private readonly stream: string

  constructor(
    private readonly opts: FollowerOptions,
    private head: ReplicaHead,
  ) {
    this.stream = streamName(opts.chainId)
    this.loop = this.run()
  }

  status(): FollowerStatus {
    return { connected: this.connected, head: this.head.number, streamHead: this.streamHead, stopped: this.stopped }
  }

  private report(): void {
    this.opts.onStatus(this.status())
  }

  async close(): Promise<void> {
    this.closed = true
    this.backoff.interrupt()
    await this.messages?.close().catch(() => {})
    await this.loop
  }

  private async run(): Promise<void> {
    let outage = false
    while (!this.closed && this.stopped === undefined) {
      try {
        await this.follow(() => {
          if (outage) this.opts.logger.info('block stream reachable again', { url: this.opts.url, head: this.head.number })
          outage = false
          this.backoff.reset()
        })
      } catch (err) {
        if (this.closed) break
        if (err instanceof ReplicationError) {
          this.stopped = { code: err.code, reason: err.message }
          this.opts.logger.error('replica stopped following the block stream; it serves what it has', { code: this.stopped.code, reason: this.stopped.reason })
          this.report()
          break
        }
        this.connected = false
        this.report()
        if (!outage) this.opts.logger.warn('block stream unreachable; retrying', { url: this.opts.url, err: (err as Error).message })
        outage = true
        await this.backoff.wait()
      }
    }
    await this.nc?.close().catch(() => {})
  }

  private async follow(onConnected: () => void): Promise<void> {
    if (this.nc === undefined || this.nc.isClosed()) {
      this.nc = await connect({ servers: this.opts.url, name: 'keel-replica', maxReconnectAttempts: -1, reconnectTimeWait: 500 })
      void watchConnection(this.nc, {
        disconnect: () => {
          if (!this.connected) return
          this.connected = false
          this.opts.logger.warn('block stream unreachable; retrying', { url: this.opts.url })
          this.report()
        },
        reconnect: () => {
          if (this.connected || this.stopped !== undefined) return
          this.connected = true
          this.opts.logger.info('block stream reachable again', { url: this.opts.url, head: this.head.number })
          this.report()
        },
      })
      // the client renews the subscription after a reconnect
      this.nc.subscribe(pendingSubject(this.opts.chainId), {
        callback: (err, msg) => {
          if (err !== null) return
          try {
            const hashes = msg.json<unknown>()
            if (Array.isArray(hashes) && hashes.every((h) => typeof h === 'string' && /^0x[0-9a-f]{64}$/.test(h))) this.opts.onPending(hashes as string[])
          } catch {
            // not a list of hashes: not from a Keel producer
          }
        },
      })
    }
    const jsm = await jetstreamManager(this.nc, { timeout: REQUEST_TIMEOUT_MS })
    const startSeq = await this.startSequence(jsm)
    const js = jetstream(this.nc, { timeout: REQUEST_TIMEOUT_MS })
    const consumer = await js.consumers.get(this.stream, { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: startSeq })
    // a window of messages, not of bytes: a consumer sized in bytes was seen to stop asking for more
    // under load until the stall check replaced it (seconds of lag); chunks are at most max_payload each
    const messages = await consumer.consume({ max_messages: CONSUME_WINDOW })
    this.messages = messages
    this.connected = true
    this.report()
    onConnected()
    const assembler = new ChunkAssembler()
    let seen = startSeq - 1
    let seenAt = Date.now()
    // A consumer that stops delivering while the stream grows (seen across a NATS server restart) is
    // dropped and followed again from the head: the loop below ends, and run() starts over.
    const watchdog = setInterval(() => {
      if (Date.now() - seenAt < STALL_MS) return
      jsm.streams.info(this.stream).then(
        (info) => {
          if (info.state.last_seq > seen && Date.now() - seenAt >= STALL_MS) {
            this.opts.logger.warn('block stream consumer stalled; following again', { head: this.head.number, seen, last: info.state.last_seq })
            void messages.close()
          }
        },
        () => {},
      )
    }, STALL_MS)
    try {
      for await (const m of messages) {
        if (this.closed) break
        seen = m.seq
        await this.take(m.headers, m.data, assembler)
        // after the block is applied: a long apply is not a stall
        seenAt = Date.now()
      }
    } finally {
      clearInterval(watchdog)
    }
    if (!this.closed) throw new Error('block stream consumer ended')
  }

  /** One stream message: a block once its last chunk is in, applied if it is the next one. */
  private async take(headers: MsgHdrs | undefined, data: Uint8Array, assembler: ChunkAssembler): Promise<void> {
    const info = readChunkInfo(headers)
    if (info.number > this.streamHead) this.streamHead = info.number
    if (info.number <= this.head.number) return
    const payload = assembler.add(info, data)
    if (payload === undefined) return
    await this.apply(info, payload)
  }

  /**
   * The stream sequence of the first message of block head + 1 (or the next sequence when the stream
   * has not reached it yet). Messages are in block order, so a binary search over direct reads finds it.
   */
  private async startSequence(jsm: JetStreamManager): Promise<number> {
    let info
    try {
      info = await jsm.streams.info(this.stream)
    } catch (err) {
      // the producer creates the stream with its first publish: wait for it
      if (err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamNotFound) throw new Error(`stream ${this.stream} does not exist yet`)
      throw err
    }
    const { first_seq: first, last_seq: last, messages } = info.state
    const want = this.head.number + 1n
    if (messages === 0) return last + 1
    const at = async (seq: number): Promise<ChunkInfo> => {
      const msg = await jsm.streams.getMessage(this.stream, { seq })
      if (msg === null) throw new Error(`stream ${this.stream} has no message ${seq}`)
      return readChunkInfo(msg.header)
    }
    const newest = await at(last)
    this.streamHead = newest.number
    if (newest.number < want) {
      await this.checkSameChain(newest)
      return last + 1
    }
    const oldest = await at(first)
    if (oldest.number > want) {
      throw new ReplicationError('gap', `the block stream starts at block ${oldest.number}, past this replica's next block ${want} (retention): the replica needs a new snapshot`)
    }
    // the first sequence whose block is >= want
    let lo = first
    let hi = last
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2)
      if ((await at(mid)).number >= want) hi = mid
      else lo = mid + 1
    }
    if (lo > first) await this.checkSameChain(await at(lo - 1))
    return lo
  }

  /** A stream message of a block at or below the head must name the block this replica has. */
  private async checkSameChain(info: ChunkInfo): Promise<void> {
    if (info.number > this.head.number) return
    const ours = await this.opts.level.get(Keys.canonicalHash(info.number))
    if (ours !== undefined && bytesToHex(ours) !== info.hash) {
      throw new ReplicationError('not-next', `the block stream holds block ${info.number} ${info.hash}, but this replica has ${bytesToHex(ours)}: it follows another chain`)
    }
  }

  private async apply(info: ChunkInfo, payload: Uint8Array): Promise<void> {
    const started = performance.now()
    const message = decodeBlockMessage(payload)
    const block = await verifyBlock(message, this.head, this.opts.verify)
    if (bytesToHex(block.hash) !== info.hash) {
      throw new ReplicationError('bad-block', `block ${info.number} is published as ${info.hash} but its header hashes to ${bytesToHex(block.hash)}`)
    }
    if (this.opts.audit !== undefined) await this.opts.audit(block)
    await writeBatch(this.opts.level, block.ops)
    this.head = { number: block.header.number, hash: block.hash }
    const committed = Date.now()
    this.opts.onApplied({ block, lagMs: info.committedAt > 0 ? Math.max(0, committed - info.committedAt) : undefined, applyMs: performance.now() - started })
    this.report()
  }
}

