// Entry of a replica's chain thread (--replica): the one writer of the replica's database, in place of the
// producer thread, speaking the same messages to the main thread (chain/messages.ts). Blocks come from
// the block stream (follower.ts) and raise the same block event the producer raises, so the view,
// subscriptions, filters, caches, call workers and metrics work as on the producer. Transactions and
// questions about the producer's pool go to the producer over --producer-url (forwarder.ts), and its
// answers come back unchanged.

import { parentPort } from 'node:worker_threads'
import { join } from 'node:path'
import { createTxFromRLP } from '@ethereumjs/tx'
import { bytesToHex, hexToBytes } from '@ethereumjs/util'
import { createBlockHeaderFromRLP } from '@ethereumjs/block'
import type { FromProducer, PoolQuery, ProducerInit, StreamStatus, SubmitOutcome, ToProducer, TxWire } from '../chain/messages.js'
import { headInfo, Producer } from '../chain/producer.js'
import { openChainLevel } from '../chain/store/level.js'
import { markIndexStart } from '../indexes/progress.js'
import { decodeHead, Keys } from '../chain/store/schema.js'
import { ErrorCode } from '../errors.js'
import { createChainCommon } from '../evm/common.js'
import { importEthereumjsModule } from '../evm/evm-internals.js'
import type { CommonParams } from '../evm/params-memo.js'
import { blockAuditor } from './audit.js'
import { loadFastCrypto } from '../evm/crypto.js'
import { createLogger } from '../logging/logger.js'
import { BlockFollower } from './follower.js'
import type { AppliedBlock, FollowerStatus } from './follower.js'
import { ProducerForwarder, ProducerUnreachable } from './forwarder.js'
import type { RpcOutcome } from './forwarder.js'

if (parentPort === null) throw new Error('replica-thread must run as a worker thread')
const port = parentPort
const post = (msg: FromProducer): void => port.postMessage(msg)

/** How long a forwarded call may take; eth_sendRawTransaction on an automining producer waits for its block. */
const FORWARD_TIMEOUT_MS = 10_000
/** How often a replica cut off from the stream asks the producer for its head (readiness). */
const PRODUCER_HEAD_POLL_MS = 2_000

// geth's code for a plain server error: what a client sees when the producer cannot be reached
const unreachable = (err: unknown) => ({ code: ErrorCode.Server, message: (err as Error).message })

async function run({ config, genesis }: ProducerInit): Promise<void> {
  if (config.streamUrl === undefined || config.producerUrl === undefined) throw new Error('a replica needs --stream-url and --producer-url')
  const logger = createLogger(config.logLevel).child({ component: 'replica' })
  const crypto = await loadFastCrypto()
  const level = await openChainLevel(join(config.dataDir, 'chain'), { cacheSize: 32 << 20, writeBufferSize: 16 << 20 })
  if ((await level.get(Keys.meta('head'))) === undefined) {
    // a new data folder: the genesis block, written exactly as the producer wrote its own
    const writer = await Producer.open(config, genesis, level, { onBlock: () => {}, onPendingTx: () => {}, onFatal: () => {} })
    await writer.close()
  }
  // with the VM's parameters: --replica-verify execute runs blocks (the thread loads the VM for receipts anyway)
  const { paramsVM } = await importEthereumjsModule<{ paramsVM: CommonParams }>('@ethereumjs/vm', 'params.js')
  const common = createChainCommon(genesis, crypto.customCrypto, paramsVM)
  const head = decodeHead((await level.get(Keys.meta('head')))!)
  // a replica's database from before the explorer's indexes: they start at its next block
  await markIndexStart(level, head.number)
  const header = createBlockHeaderFromRLP((await level.get(Keys.header(head.number)))!, { common, setHardfork: true })
  common.setHardforkBy({ blockNumber: header.number, timestamp: header.timestamp })
  const genesisHash = await level.get(Keys.meta('genesis'))
  const forwarder = new ProducerForwarder(config.producerUrl, FORWARD_TIMEOUT_MS)

  // unknown (no 'stream' message, so not ready) until the stream or the producer has said where the chain is
  let chainHead = -1n
  const report = (s: FollowerStatus): void => {
    // behind the stream's retention: the node restarts on a new snapshot
    if (s.stopped?.code === 'gap') return post({ kind: 'fatal', message: s.stopped.reason, needsSnapshot: true })
    if (s.streamHead > chainHead) chainHead = s.streamHead
    if (chainHead < 0n && s.stopped === undefined) return
    const status: StreamStatus = { role: 'replica', connected: s.connected, block: s.head, backlog: Math.max(0, Number(chainHead - s.head)), stopped: s.stopped }
    post({ kind: 'stream', status })
  }
  const follower = new BlockFollower(
    {
      url: config.streamUrl,
      chainId: config.chainId,
      level,
      logger,
      verify: { common, keccak: crypto.keccak256, hasTrieNode: async (key) => (await level.get(Keys.trieNode(key))) !== undefined },
      audit: config.replicaVerify === 'execute' ? blockAuditor(level, common) : undefined,
      onApplied: (applied: AppliedBlock) => {
        const { block } = applied
        post({
          kind: 'block',
          head: headInfo(block.header),
          headerRlp: block.headerRlp,
          bodyRlp: block.bodyRlp,
          receiptsRlp: block.receiptsRlp,
          txHashes: block.txHashes,
          stateDiff: block.stateDiff,
          pooledSenders: [],
          replicated: { lagMs: applied.lagMs, applyMs: applied.applyMs, bytes: block.bytes },
        })
      },
      onStatus: report,
      onPending: (hashes) => post({ kind: 'pendingTx', hashes }),
    },
    { number: head.number, hash: head.hash },
  )

  // while the stream is unreachable, the producer says how far the chain has gone
  const producerHead = setInterval(() => {
    const s = follower.status()
    if (s.connected || s.stopped !== undefined) return
    forwarder.call('eth_blockNumber', []).then(
      (o) => {
        if (!o.ok || typeof o.result !== 'string') return
        chainHead = BigInt(o.result)
        report(follower.status())
      },
      () => {},
    )
  }, PRODUCER_HEAD_POLL_MS)
  producerHead.unref()

  // a replica whose database holds blocks without the explorer's indexes (from before them, or a snapshot
  // taken while the producer was still building them) builds them itself, one block between others
  const indexBackfill = import('../indexes/backfill.js').then(({ startIndexBackfill }) => startIndexBackfill(config, level, common, () => true))

  port.on('message', (msg: ToProducer) => {
    switch (msg.kind) {
      case 'submit':
        forwardSubmit(forwarder, msg.txs).then((outcomes) => post({ kind: 'reply', id: msg.id, ok: true, result: outcomes }))
        break
      case 'pool':
        forwardQuery(forwarder, msg.query, common).then(
          (result) => post({ kind: 'reply', id: msg.id, ok: true, result }),
          (err: unknown) => post({ kind: 'reply', id: msg.id, ok: false, error: err instanceof ForwardedError ? err.error : unreachable(err) }),
        )
        break
      case 'shutdown':
        clearInterval(producerHead)
        Promise.all([follower.close(), indexBackfill.then((b) => b.stop())])
          .then(() => level.close())
          .then(
            () => post({ kind: 'reply', id: msg.id, ok: true, result: null }),
            (err: unknown) => post({ kind: 'reply', id: msg.id, ok: false, error: unreachable(err) }),
          )
        break
    }
  })

  post({
    kind: 'ready',
    head: headInfo(header),
    genesisHash: genesisHash === undefined ? '0x' : bytesToHex(genesisHash),
    hardfork: common.hardfork(),
    pooledSenders: [],
  })
}

/** The producer's error for one forwarded call. */
class ForwardedError extends Error {
  constructor(readonly error: { code: number; message: string; data?: unknown }) {
    super(error.message)
  }
}

async function forwardSubmit(forwarder: ProducerForwarder, txs: TxWire[]): Promise<SubmitOutcome[]> {
  let outcomes: RpcOutcome[]
  try {
    outcomes = await forwarder.batch(txs.map((tx) => ({ method: 'eth_sendRawTransaction', params: [bytesToHex(tx.raw)] })))
  } catch (err) {
    return txs.map(() => ({ ok: false, error: unreachable(err) }))
  }
  // An automining producer answers once the block is sealed: the replica then answers once that block has
  // reached it too (nextBlock), so that a receipt asked next is found (ethers' wait() takes the block
  // number at its first empty answer as its starting point). With a block time, the receipt is not there yet.
  const accepted = txs.filter((_, i) => outcomes[i].ok)
  const mined = new Set<string>()
  if (accepted.length > 0) {
    const receipts = await forwarder.batch(accepted.map((tx) => ({ method: 'eth_getTransactionReceipt', params: [tx.hash] }))).catch(() => [])
    receipts.forEach((r, i) => {
      if (r.ok && r.result !== null) mined.add(accepted[i].hash)
    })
  }
  return outcomes.map((o, i) => (o.ok ? { ok: true, hash: txs[i].hash, nextBlock: mined.has(txs[i].hash) } : { ok: false, error: o.error }))
}

async function forwardQuery(forwarder: ProducerForwarder, query: PoolQuery, common: ReturnType<typeof createChainCommon>): Promise<unknown> {
  const one = async (method: string, params: unknown[]): Promise<unknown> => {
    const o = await forwarder.call(method, params)
    if (!o.ok) throw new ForwardedError(o.error)
    return o.result
  }
  switch (query.q) {
    case 'nonces': {
      const outcomes = await forwarder.batch(query.addresses.map((a) => ({ method: 'eth_getTransactionCount', params: [a, 'pending'] })))
      return outcomes.map((o) => {
        if (!o.ok) throw new ForwardedError(o.error)
        return BigInt(o.result as string)
      })
    }
    case 'status': {
      const s = (await one('txpool_status', [])) as { pending: string; queued: string }
      return { pending: Number(s.pending), queued: Number(s.queued) }
    }
    case 'content':
      return one('txpool_content', [])
    case 'inspect':
      return one('txpool_inspect', [])
    case 'contentFrom':
      return one('txpool_contentFrom', [query.address])
    case 'get': {
      // a transaction the producer holds and this replica does not yet (sent through another node)
      const raw = (await one('eth_getRawTransactionByHash', [query.hash])) as string | null
      if (raw === null || raw === '0x') return null
      const bytes = hexToBytes(raw as `0x${string}`)
      const tx = createTxFromRLP(bytes, { common })
      const wire: TxWire = { raw: bytes, hash: query.hash, sender: tx.getSenderAddress().toString(), senderPubKey: tx.getSenderPublicKey(), arrivedAt: Date.now() }
      return wire
    }
    case 'pendingHashes':
      return []
  }
}

port.once('message', (init: ProducerInit) => {
  run(init).catch((err: unknown) => {
    const message = err instanceof ProducerUnreachable ? err.message : `replica failed to start: ${(err as Error).stack ?? err}`
    post({ kind: 'fatal', message })
  })
})
