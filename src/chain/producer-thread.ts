// Entry of the producer worker thread: the only writer of the chain database.

import { parentPort } from 'node:worker_threads'
import type { FromProducer, ProducerInit, SubmitOutcome, ToProducer, TxWire } from './messages.js'
import { join } from 'node:path'
import { bytesToHex } from '@ethereumjs/util'
import { errorShape, headInfo, Producer } from './producer.js'
import { assertSealable } from '../evm/common.js'
import { openChainLevel } from './store/level.js'
import type { ChainLevel } from './store/level.js'
import { Keys } from './store/schema.js'
import { startProducerWarmUp } from './producer-warm-up.js'
import type { ProducerWarmUp } from './producer-warm-up.js'
import { reportThreadHeap } from '../util/thread-heap.js'
import { IDLE_COLLECTION_MS, IdleCollection } from '../util/idle-collection.js'

if (parentPort === null) throw new Error('producer-thread must run as a worker thread')
const port = parentPort
reportThreadHeap('producer')
const post = (msg: FromProducer): void => port.postMessage(msg)
const accepted = (result: { hash: string; nextBlock: boolean }): SubmitOutcome => ({ ok: true, hash: result.hash, nextBlock: result.nextBlock })
const refused = (err: unknown): SubmitOutcome => ({ ok: false, error: errorShape(err) })

/**
 * Hashes of newly pooled transactions for the main thread (newPendingTransactions): they ride on the
 * reply to the submit batch that pooled them, and whatever is left at the end of this thread's turn of
 * the event loop goes in a message of its own. A message per transaction cost the main thread a wake-up
 * each; a message per batch besides its reply was still one message in two under load.
 */
const pendingTx = {
  hashes: [] as string[],
  add(hashes: string[]): void {
    if (this.hashes.length === 0) setImmediate(() => this.flush())
    for (const h of hashes) this.hashes.push(h)
  },
  /** The hashes not yet sent, if any; they are then no longer held. */
  take(): string[] | undefined {
    if (this.hashes.length === 0) return undefined
    const hashes = this.hashes
    this.hashes = []
    return hashes
  },
  flush(): void {
    const hashes = this.take()
    if (hashes !== undefined) post({ kind: 'pendingTx', hashes })
  },
}

async function run({ config, genesis }: ProducerInit): Promise<void> {
  const level = await openChainLevel(join(config.dataDir, 'chain'), { cacheSize: 32 << 20, writeBufferSize: 16 << 20 })
  // --stream-url: every block also goes to the replicas' block stream (loaded only then)
  const stream =
    config.streamUrl === undefined
      ? undefined
      : (await import('../replication/producer-side.js')).openProducerStream(config, level, (status) => post({ kind: 'stream', status }))
  const publisher = stream?.publisher
  const producer = await Producer.open(
    config,
    genesis,
    level,
    {
      onBlock: (event) => post(event),
      onPendingTx: (hashes) => {
        pendingTx.add(hashes)
        publisher?.publishPending(hashes)
      },
      onFatal: (message) => post({ kind: 'fatal', message }),
      onStorage: (status) => post({ kind: 'storage', status }),
    },
    { writeSets: publisher },
  )

  const head = producer.headHeader
  try {
    if (!config.noSeal) assertSealable(producer.common, { number: head.number + 1n, timestamp: head.timestamp + 1n })
  } catch (err) {
    // a configuration the operator fixes: the reason alone, no stack
    await level.close()
    return post({ kind: 'fatal', message: (err as Error).message })
  }

  // once per idle spell, the young generation a burst grew is given back (util/idle-collection.ts); a
  // spell starts when the last submission is answered and its blocks are sealed
  const idleCollection = new IdleCollection(IDLE_COLLECTION_MS, undefined, () => producer.idle)
  let warmUp: ProducerWarmUp | undefined
  /** builds the explorer's indexes of blocks written before they were kept (indexes/backfill.ts) */
  let indexBackfill: Promise<{ stop(): Promise<void> }> | undefined
  let shuttingDown = false
  // made once, not per message: V8 keeps a closure's optimized code only while a closure of it lives
  // (see StorageTrieNodes in store/bulk-flush-sm.ts)
  const submitOne = (tx: TxWire): Promise<SubmitOutcome> => producer.submit(tx).then(accepted, refused)
  port.on('message', (msg: ToProducer) => {
    switch (msg.kind) {
      case 'submit':
        idleCollection.begin()
        // started in arrival order, as separate messages would be; one reply for all of them
        Promise.all(msg.txs.map(submitOne)).then((outcomes) => {
          idleCollection.end()
          post({ kind: 'reply', id: msg.id, ok: true, result: outcomes, pendingTx: pendingTx.take() })
        })
        break
      case 'pool':
        producer.query(msg.query).then(
          (result) => post({ kind: 'reply', id: msg.id, ok: true, result }),
          (err: unknown) => post({ kind: 'reply', id: msg.id, ok: false, error: errorShape(err) }),
        )
        break
      case 'shutdown':
        shuttingDown = true
        idleCollection.stop()
        warmUp?.stop()
        Promise.all([producer.close(), warmUp?.done, indexBackfill?.then((b) => b.stop())])
          .then(() => stream?.close())
          .then(() => level.close())
          .then(
            () => post({ kind: 'reply', id: msg.id, ok: true, result: null }),
            (err: unknown) => post({ kind: 'reply', id: msg.id, ok: false, error: errorShape(err) }),
          )
        break
    }
  })

  const genesisHash = await genesisHashOf(level)
  post({ kind: 'ready', head: headInfo(producer.headHeader), genesisHash, hardfork: producer.hardfork, pooledSenders: producer.pooledSenders() })
  producer.start()
  publisher?.start(producer.headHeader.number)
  producer.blockVM().then(
    () => {
      if (shuttingDown || config.noSeal) return
      warmUp = startProducerWarmUp(config, genesis, () => producer.idle)
      // the warm-up's garbage is work too: the idle spell starts once its scratch chain is gone
      idleCollection.begin()
      void warmUp.done.then(() => idleCollection.end())
      indexBackfill = import('../indexes/backfill.js').then(({ startIndexBackfill }) => startIndexBackfill(config, level, producer.common, () => producer.idle))
    },
    (err: unknown) => post({ kind: 'fatal', message: `producer failed to load the VM: ${(err as Error).stack ?? err}` }),
  )
}

async function genesisHashOf(level: ChainLevel): Promise<string> {
  const hash = await level.get(Keys.meta('genesis'))
  return hash === undefined ? '0x' : bytesToHex(hash)
}

// The thread loads its modules as soon as it is spawned, while the main thread resolves the genesis; the
// first message is that genesis.
port.once('message', (init: ProducerInit) => {
  run(init).catch((err: unknown) => post({ kind: 'fatal', message: `producer failed to start: ${(err as Error).stack ?? err}` }))
})
