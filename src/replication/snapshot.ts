// A consistent copy of the producer's chain database for a replica to start from: every key of one
// LevelDB snapshot (so whole blocks, up to the snapshot's head) but the producer's own bookkeeping (its
// pool journal and its stream outbox), framed as [u32 key length][key][u32 value length][value]. It
// travels as one object of a JetStream object store, which chunks it, so a snapshot needs no other port
// than the block stream's.

import type { ObjectStore } from '@nats-io/obj'
import type { ChainLevel } from '../chain/store/level.js'
import { decodeHead, Keys, Prefix } from '../chain/store/schema.js'
import { bytesToHex } from '@ethereumjs/util'
import { ReplicationError } from './errors.js'

export const snapshotBucket = (chainId: number): string => `KEEL_SNAPSHOTS_${chainId}`
/** Request subject: a replica asks the producer for a snapshot; the answer names the object. */
export const snapshotSubject = (chainId: number): string => `keel.snapshot.${chainId}`

/** Whether a snapshot object is in the store (the store keeps a deleted object's info, marked deleted). */
export async function stored(os: ObjectStore, name: string): Promise<boolean> {
  const info = await os.info(name)
  return info !== null && !info.deleted
}

/** Keys only the producer keeps. */
const PRODUCER_ONLY = new Set<number>([Prefix.pooledTx, Prefix.outbox])
/** Frames gathered into one chunk of the object's byte stream. */
const CHUNK_BYTES = 1 << 20

export interface SnapshotHead {
  number: bigint
  hash: string
}

/** The head a database snapshot holds. */
export async function snapshotHead(level: ChainLevel, snapshot: ReturnType<ChainLevel['snapshot']>): Promise<SnapshotHead> {
  const head = await level.get(Keys.meta('head'), { snapshot })
  if (head === undefined) throw new Error('the chain database has no head')
  const { number, hash } = decodeHead(head)
  return { number, hash: bytesToHex(hash) }
}

/** The snapshot's keys as a byte stream; the snapshot is closed once the stream ends or is cancelled. */
export function snapshotStream(level: ChainLevel, snapshot: ReturnType<ChainLevel['snapshot']>): ReadableStream<Uint8Array> {
  const iterator = level.iterator({ snapshot })
  const done = async () => {
    await iterator.close()
    await snapshot.close()
  }
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const parts: Uint8Array[] = []
      let bytes = 0
      while (bytes < CHUNK_BYTES) {
        const rows = await iterator.nextv(1000)
        if (rows.length === 0) break
        for (const [key, value] of rows) {
          if (key.length > 0 && PRODUCER_ONLY.has(key[0])) continue
          const frame = new Uint8Array(8 + key.length + value.length)
          const view = new DataView(frame.buffer)
          view.setUint32(0, key.length)
          frame.set(key, 4)
          view.setUint32(4 + key.length, value.length)
          frame.set(value, 8 + key.length)
          parts.push(frame)
          bytes += frame.length
        }
      }
      if (bytes > 0) controller.enqueue(concat(parts, bytes))
      if (bytes < CHUNK_BYTES) {
        await done()
        controller.close()
      }
    },
    async cancel() {
      await done()
    },
  })
}

/**
 * Writes a snapshot's byte stream into `level`, a batch per chunk; resolves to the number of keys.
 * A stream that ends inside a frame is refused.
 */
export async function restoreSnapshot(stream: ReadableStream<Uint8Array>, level: ChainLevel): Promise<number> {
  let pending = new Uint8Array(0)
  let keys = 0
  const reader = stream.getReader()
  for (;;) {
    const { value, done } = await reader.read()
    if (done) break
    const buf = pending.length === 0 ? value : concat([pending, value], pending.length + value.length)
    const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength)
    const batch = level.batch()
    let at = 0
    for (;;) {
      if (buf.length - at < 4) break
      const keyLength = view.getUint32(at)
      if (buf.length - at < 8 + keyLength) break
      const valueLength = view.getUint32(at + 4 + keyLength)
      const end = at + 8 + keyLength + valueLength
      if (end > buf.length) break
      batch.put(buf.slice(at + 4, at + 4 + keyLength), buf.slice(at + 8 + keyLength, end))
      keys++
      at = end
    }
    await batch.write()
    pending = buf.slice(at)
  }
  if (pending.length > 0) throw new ReplicationError('malformed', `the snapshot ends inside a key (${pending.length} bytes left over)`)
  return keys
}

function concat(parts: Uint8Array[], length: number): Uint8Array {
  const out = new Uint8Array(length)
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}
