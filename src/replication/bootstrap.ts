// A replica's first copy of the chain: with no chain in its data folder (or when its next block has
// fallen out of the stream's retention), it asks the producer for a snapshot over NATS, waits for the
// object the producer writes, and restores it beside the data folder's chain, which it replaces only once
// the copy is whole. Then the replica follows the stream from the snapshot's head. Runs on the main
// thread before the chain thread opens the database.

import { existsSync, renameSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { connect } from '@nats-io/transport-node'
import type { NatsConnection } from '@nats-io/transport-node'
import { Objm } from '@nats-io/obj'
import type { ObjectStore } from '@nats-io/obj'
import { openChainLevel } from '../chain/store/level.js'
import { decodeHead, Keys } from '../chain/store/schema.js'
import type { KeelConfig } from '../config/types.js'
import type { Logger } from '../logging/logger.js'
import { restoreSnapshot, snapshotBucket, snapshotSubject, stored } from './snapshot.js'
import type { SnapshotAnswer } from './snapshot-service.js'

const REQUEST_TIMEOUT_MS = 10_000
const RETRY_MS = 1_000
/**
 * While the object is not there yet the replica asks again this often: a producer whose write failed
 * (or that restarted) starts a new one, one still writing answers with the same name.
 */
const REASK_MS = 5_000
/** A download that delivers no bytes for this long is dropped and the replica asks again. */
const STALL_MS = 20_000

/** Whether the data folder holds a chain with a head. */
export async function hasChain(dataDir: string): Promise<boolean> {
  const dir = join(dataDir, 'chain')
  if (!existsSync(dir)) return false
  const level = await openChainLevel(dir, { createIfMissing: false }).catch(() => undefined)
  if (level === undefined) return false
  try {
    return (await level.get(Keys.meta('head'))) !== undefined
  } finally {
    await level.close()
  }
}

/**
 * Restores the producer's snapshot into the data folder; `replace` swaps out a chain already there (a
 * replica behind the stream's retention). Resolves to the snapshot's head number.
 */
export async function bootstrapReplica(config: KeelConfig, logger: Logger, { replace = false } = {}): Promise<bigint> {
  const started = performance.now()
  const nc = await connectWithRetry(config.streamUrl!, logger)
  try {
    const os = await new Objm(nc).create(snapshotBucket(config.chainId))
    for (;;) {
      const answer = await awaitSnapshot(nc, os, config.chainId, logger)
      const target = join(config.dataDir, 'chain.bootstrap')
      rmSync(target, { recursive: true, force: true })
      const keys = await download(os, answer, target, logger)
      if (keys === undefined) continue
      const head = await headOf(target)
      if (head !== BigInt(answer.head)) throw new Error(`the snapshot restored to block ${head}, not the announced ${answer.head}`)
      const chainDir = join(config.dataDir, 'chain')
      if (replace) rmSync(chainDir, { recursive: true, force: true })
      renameSync(target, chainDir)
      logger.info('replica restored the producer\'s snapshot', { head: answer.head, hash: answer.hash, keys, ms: Math.round(performance.now() - started) })
      return head
    }
  } finally {
    await nc.close().catch(() => {})
  }
}

async function connectWithRetry(url: string, logger: Logger): Promise<NatsConnection> {
  let told = false
  for (;;) {
    try {
      return await connect({ servers: url, name: 'keel-replica-bootstrap' })
    } catch (err) {
      if (!told) logger.warn('waiting for the block stream to take a snapshot from the producer', { url, err: (err as Error).message })
      told = true
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS))
    }
  }
}

async function requestSnapshot(nc: NatsConnection, chainId: number, logger: Logger): Promise<SnapshotAnswer> {
  let told = false
  for (;;) {
    try {
      const reply = await nc.request(snapshotSubject(chainId), '', { timeout: REQUEST_TIMEOUT_MS })
      const answer = reply.json<SnapshotAnswer & { error?: string }>()
      if (answer.error !== undefined) throw new Error(answer.error)
      return answer
    } catch (err) {
      if (!told) logger.warn('no producer answers snapshot requests yet; asking again', { err: (err as Error).message })
      told = true
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS))
    }
  }
}

/**
 * The answer of a snapshot that is complete in the object store. While it is not, the replica asks again
 * every REASK_MS and follows the name the producer answers with.
 */
async function awaitSnapshot(nc: NatsConnection, os: ObjectStore, chainId: number, logger: Logger): Promise<SnapshotAnswer> {
  let answer = await requestSnapshot(nc, chainId, logger)
  logger.info('the producer is writing a snapshot for this replica', { name: answer.name, head: answer.head })
  let asked = Date.now()
  while (!(await stored(os, answer.name))) {
    if (Date.now() - asked >= REASK_MS) {
      const again = await requestSnapshot(nc, chainId, logger)
      if (again.name !== answer.name) logger.warn('the producer now writes another snapshot; waiting for that one', { was: answer.name, name: again.name })
      answer = again
      asked = Date.now()
    }
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  return answer
}

/**
 * The snapshot restored into `target`: its key count, or undefined when it is gone or its bytes stopped
 * coming (the producer replaced it while it was read), and the replica asks again.
 */
async function download(os: ObjectStore, answer: SnapshotAnswer, target: string, logger: Logger): Promise<number | undefined> {
  const result = await os.get(answer.name)
  if (result === null) return undefined
  const level = await openChainLevel(target)
  try {
    const keys = await restoreSnapshot(watchStall(result.data, STALL_MS), level)
    const failed = await result.error
    if (failed) throw failed
    return keys
  } catch (err) {
    if (!(err instanceof SnapshotStalled)) throw err
    logger.warn('the snapshot stopped arriving; asking again', { name: answer.name, afterMs: STALL_MS })
    return undefined
  } finally {
    await level.close()
  }
}

/** A snapshot download that delivered no bytes for a while. */
class SnapshotStalled extends Error {}

/** `stream`, failing with SnapshotStalled once no chunk has arrived for `ms`. */
function watchStall(stream: ReadableStream<Uint8Array>, ms: number): ReadableStream<Uint8Array> {
  const reader = stream.getReader()
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let timer: NodeJS.Timeout | undefined
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new SnapshotStalled(`no snapshot bytes for ${ms} ms`)), ms)
      })
      try {
        const { value, done } = await Promise.race([reader.read(), timeout])
        if (done) controller.close()
        else controller.enqueue(value)
      } catch (err) {
        reader.cancel().catch(() => {})
        controller.error(err)
      } finally {
        clearTimeout(timer)
      }
    },
    cancel(reason) {
      return reader.cancel(reason)
    },
  })
}

async function headOf(dir: string): Promise<bigint> {
  const level = await openChainLevel(dir, { createIfMissing: false })
  try {
    const head = await level.get(Keys.meta('head'))
    if (head === undefined) throw new Error('the restored snapshot has no head')
    return decodeHead(head).number
  } finally {
    await level.close()
  }
}
