// The block stream on NATS JetStream: its name and subject per chain id, the headers every message
// carries, and the split of a block too large for one message into chunks (and their reassembly).
//
// One block is one message when it fits the server's max_payload, else consecutive chunk messages
// (`Keel-Chunk: i/n`), published in order by the one producer; a replica's ordered consumer sees them in
// stream order. The message id `<block hash>.<i>` lets JetStream drop a chunk published twice within its
// duplicate window (a producer that restarted before the ack).

import type { MsgHdrs, NatsConnection } from '@nats-io/transport-node'
import { headers } from '@nats-io/transport-node'
import { ReplicationError } from './errors.js'

export const streamName = (chainId: number): string => `KEEL_BLOCKS_${chainId}`
export const blockSubject = (chainId: number): string => `keel.blocks.${chainId}`
/** Core NATS (not JetStream): JSON arrays of hashes the producer's pool took in. */
export const pendingSubject = (chainId: number): string => `keel.pending.${chainId}`

export const StreamHeader = {
  block: 'Keel-Block',
  hash: 'Keel-Hash',
  chunk: 'Keel-Chunk',
  /** when the producer committed the block (ms since the epoch): a replica's lag is measured from it */
  committed: 'Keel-Committed-At',
} as const

/** Room left in a message for its headers and NATS's protocol line. */
const HEADER_ROOM = 1024

export interface ChunkInfo {
  number: bigint
  /** 0x-prefixed block hash */
  hash: string
  index: number
  count: number
  /** ms since the epoch; 0 when not known */
  committedAt: number
}

export function chunkHeaders(info: ChunkInfo): MsgHdrs {
  const h = headers()
  h.set(StreamHeader.block, info.number.toString())
  h.set(StreamHeader.hash, info.hash)
  h.set(StreamHeader.chunk, `${info.index}/${info.count}`)
  if (info.committedAt > 0) h.set(StreamHeader.committed, String(info.committedAt))
  return h
}

export const chunkMessageId = (info: ChunkInfo): string => `${info.hash}.${info.index}`

export function readChunkInfo(h: MsgHdrs | undefined): ChunkInfo {
  const block = h?.get(StreamHeader.block) ?? ''
  const hash = h?.get(StreamHeader.hash) ?? ''
  const chunk = /^(\d+)\/(\d+)$/.exec(h?.get(StreamHeader.chunk) ?? '')
  if (!/^\d+$/.test(block) || !/^0x[0-9a-f]{64}$/.test(hash) || chunk === null) {
    throw new ReplicationError('malformed', `stream message without valid ${StreamHeader.block}, ${StreamHeader.hash} and ${StreamHeader.chunk} headers`)
  }
  const index = Number(chunk[1])
  const count = Number(chunk[2])
  if (count < 1 || index >= count) throw new ReplicationError('malformed', `stream message chunk ${index}/${count}`)
  const committedAt = Number(h?.get(StreamHeader.committed) ?? 0)
  return { number: BigInt(block), hash, index, count, committedAt: Number.isFinite(committedAt) ? committedAt : 0 }
}

/** The payload cut into pieces that each fit a message of `maxPayload` bytes with its headers. */
export function splitPayload(payload: Uint8Array, maxPayload: number): Uint8Array[] {
  const size = Math.max(1, maxPayload - HEADER_ROOM)
  if (payload.length <= size) return [payload]
  const chunks: Uint8Array[] = []
  for (let at = 0; at < payload.length; at += size) chunks.push(payload.subarray(at, Math.min(payload.length, at + size)))
  return chunks
}

/**
 * Joins a block's chunks as they arrive in stream order. A chunk 0 starts the block over (a producer
 * that restarted mid-block publishes the block again from its first chunk); chunks before the first
 * chunk 0 seen are skipped; a chunk that does not continue the block being assembled is refused.
 */
export class ChunkAssembler {
  private current: { info: ChunkInfo; parts: Uint8Array[]; bytes: number } | undefined

  /** The whole payload once its last chunk arrived, else undefined. */
  add(info: ChunkInfo, data: Uint8Array): Uint8Array | undefined {
    if (info.count === 1) {
      this.current = undefined
      return data
    }
    if (info.index === 0) {
      this.current = { info, parts: [data], bytes: data.length }
    } else {
      const cur = this.current
      // a consumer that starts inside a block's chunks waits for the next first chunk
      if (cur === undefined) return undefined
      if (cur.info.hash !== info.hash || cur.info.count !== info.count || cur.parts.length !== info.index) {
        throw new ReplicationError('malformed', `chunk ${info.index}/${info.count} of block ${info.number} arrived out of order`)
      }
      cur.parts.push(data)
      cur.bytes += data.length
    }
    const cur = this.current!
    if (cur.parts.length < info.count) return undefined
    this.current = undefined
    const out = new Uint8Array(cur.bytes)
    let at = 0
    for (const part of cur.parts) {
      out.set(part, at)
      at += part.length
    }
    return out
  }

  /** A block is partly assembled (its first chunks arrived, not its last). */
  get partial(): boolean {
    return this.current !== undefined
  }
}

/**
 * Calls back on the connection's disconnects and reconnects (the client reconnects by itself), until
 * it closes: the stream's two sides report being cut off at once, not when a request next times out.
 */
export async function watchConnection(nc: NatsConnection, on: { disconnect(): void; reconnect(): void }): Promise<void> {
  for await (const s of nc.status()) {
    if (s.type === 'disconnect') on.disconnect()
    else if (s.type === 'reconnect') on.reconnect()
  }
}
