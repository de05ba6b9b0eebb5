// The producer's answer to a replica that needs a copy of the chain (a new one, or one whose next block
// fell out of the stream's retention): on a request on keel.snapshot.<chain id> it puts a snapshot of its
// database into the JetStream object store KEEL_SNAPSHOTS_<chain id> and answers with the object's name
// at once; the replica waits for the object to be complete. Requests while one is being written get the
// same name, and one for a head already written names that one; older snapshots are deleted once two
// minutes old (a replica may be reading one). Runs on the producer thread, reading only.

import { connect } from '@nats-io/transport-node'
import type { Msg, NatsConnection } from '@nats-io/transport-node'
import { Objm, StorageType } from '@nats-io/obj'
import type { ChainLevel } from '../chain/store/level.js'
import type { Logger } from '../logging/logger.js'
import { snapshotBucket, snapshotHead, snapshotStream, snapshotSubject, stored } from './snapshot.js'

export interface SnapshotAnswer {
  name: string
  head: string
  hash: string
}

const RETRY_MS = 1_000
/** An older snapshot is deleted only once it is this old: a replica may still be reading it. */
const KEEP_OLD_MS = 2 * 60_000

export class SnapshotService {
  private nc: NatsConnection | undefined
  private building: { answer: Promise<SnapshotAnswer>; done: Promise<void> } | undefined
  private closed = false
  private readonly started: Promise<void>

  constructor(
    private readonly opts: { url: string; chainId: number; level: ChainLevel; logger: Logger },
  ) {
    this.started = this.connect()
  }

  private async connect(): Promise<void> {
    while (!this.closed) {
      try {
        this.nc = await connect({ servers: this.opts.url, name: 'keel-producer-snapshots', maxReconnectAttempts: -1, reconnectTimeWait: 500 })
        // one producer answers (a queue group), whichever of its connections is up
        this.nc.subscribe(snapshotSubject(this.opts.chainId), { queue: 'keel-producer', callback: (err, msg) => {
          if (err === null) this.onRequest(msg)
        } })
        return
      } catch {
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS))
      }
    }
  }

  private onRequest(msg: Msg): void {
    const answer = this.building?.answer ?? this.build()
    answer.then(
      (a) => msg.respond(JSON.stringify(a)),
      (err: unknown) => msg.respond(JSON.stringify({ error: (err as Error).message })),
    )
  }

  private build(): Promise<SnapshotAnswer> {
    const { level, logger } = this.opts
    const snapshot = level.snapshot()
    // named after the snapshot's head, read before the answer goes out; the object is written after
    const answer = snapshotHead(level, snapshot).then((head) => ({ name: `block-${head.number}`, head: head.number.toString(), hash: head.hash }))
    const done = (async () => {
      try {
        const { name, head, hash } = await answer
        const os = await new Objm(this.nc!).create(snapshotBucket(this.opts.chainId), { storage: StorageType.File })
        // the same head as a snapshot already written (a replica asking again): writing it anew would
        // replace the chunks under a replica reading them
        if (await stored(os, name)) {
          await snapshot.close()
          return
        }
        const started = performance.now()
        const info = await os.put({ name, metadata: { head, hash } }, snapshotStream(level, snapshot))
        logger.info('snapshot written for replicas', { name, bytes: info.size, ms: Math.round(performance.now() - started) })
        for (const old of await os.list()) {
          if (old.name !== name && !old.deleted && Date.now() - Date.parse(old.mtime) > KEEP_OLD_MS) await os.delete(old.name)
        }
      } catch (err) {
        await snapshot.close().catch(() => {})
        logger.error('snapshot for replicas failed', { err })
      } finally {
        this.building = undefined
      }
    })()
    this.building = { answer, done }
    return answer
  }

  async close(): Promise<void> {
    this.closed = true
    await this.started
    await this.building?.done
    await this.nc?.close().catch(() => {})
  }
}
