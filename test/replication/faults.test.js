// What the block stream survives: NATS stopped under load, a replica or the producer killed with -9,
// blocks larger than a NATS message, a tampered message, a second producer on the same stream.

import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { connect, headers } from '@nats-io/transport-node'
import { jetstream, jetstreamManager } from '@nats-io/jetstream'
import { Objm } from '@nats-io/obj'
import { getBytes, keccak256, Wallet } from 'ethers'
import { RLP } from '@ethereumjs/rlp'
import { decodeBlockMessage, encodeBlockMessage } from '../../dist/replication/block-message.js'
import { startNats } from '../helpers/nats.js'
import { CHAIN_ID, DEV_ADDRESSES, DEV_KEYS } from '../helpers/node.js'
import { assertSameChain, ready, startProducer, startReplica, waitForHead, writeGenesis } from '../helpers/replication.js'
import { scrape, value } from '../helpers/prom.js'
import { rpc, rpcResult, sleep, withTimeout } from '../helpers/rpc.js'

const STREAM = `KEEL_BLOCKS_${CHAIN_ID}`
const SUBJECT = `keel.blocks.${CHAIN_ID}`

/** NATS, a producer and a replica of one genesis, for a describe block; stop() takes the nodes as they are then (restarted ones too). */
function withCluster({ nats: natsOptions = {}, replica: replicaOptions = {} } = {}) {
  let nats
  return {
    async start() {
      nats = await startNats(natsOptions)
      const genesis = writeGenesis()
      const producer = await startProducer(nats, genesis)
      const replica = await startReplica(nats, producer, replicaOptions)
      return { nats, producer, replica }
    },
    async stop({ replica, producer }) {
      await replica?.stop()
      await producer?.stop()
      await nats?.close()
    },
  }
}

/** Runs `fn` with a JetStream manager on `nats`, for a look at the stream itself. */
async function withStream(nats, fn) {
  const nc = await connect({ servers: nats.url })
  try {
    return await fn(await jetstreamManager(nc))
  } finally {
    await nc.close()
  }
}

/** Sends transfers from one dev key, one at a time, until stop() (each answered once sealed: automine). */
function trafficTo(node, keyIndex, { calldataBytes = 0 } = {}) {
  const wallet = new Wallet(DEV_KEYS[keyIndex])
  let running = true
  let sent = 0
  const done = (async () => {
    let nonce = Number(await rpcResult(node.url, 'eth_getTransactionCount', [wallet.address, 'pending']))
    const deadline = Date.now() + 60_000
    while (running && Date.now() < deadline) {
      const raw = await wallet.signTransaction({
        type: 2, chainId: CHAIN_ID, nonce, to: DEV_ADDRESSES[9], value: 1n, data: `0x${'ab'.repeat(calldataBytes)}`,
        // EIP-7623's floor prices non-zero calldata at 40 gas a byte
        gasLimit: 21_000 + 40 * calldataBytes + 1000, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1n,
      })
      const answer = await rpc(node.url, 'eth_sendRawTransaction', [raw]).catch(() => undefined)
      if (answer?.result !== undefined) {
        nonce++
        sent++
      } else {
        await sleep(50)
      }
    }
  })()
  return {
    async stop() {
      running = false
      await done
      return sent
    },
  }
}

describe('NATS stopped under load', () => {
  let nats, producer, replica
  const cluster = withCluster({ replica: { args: ['--ready-max-blocks-behind', '2'] } })
  before(async () => ({ nats, producer, replica } = await cluster.start()))
  after(() => cluster.stop({ replica, producer }))

  test('the producer keeps sealing, the replica stays readable and turns unready, and all catches up when NATS returns', async () => {
    const load = trafficTo(producer, 1)
    await waitForHead(replica.url, 3)
    await nats.stop()
    const cutAt = BigInt(await rpcResult(producer.url, 'eth_blockNumber', []))
    await waitForHead(producer.url, cutAt + 10n)
    // readable, at an older head, and unready once behind (the producer says how far, over --producer-url)
    const replicaHead = BigInt(await rpcResult(replica.url, 'eth_blockNumber', []))
    assert.ok(replicaHead <= cutAt + 1n, `the replica did not move on without NATS (${replicaHead} vs ${cutAt})`)
    assert.equal(typeof (await rpcResult(replica.url, 'eth_getBalance', [DEV_ADDRESSES[9], 'latest'])), 'string')
    let unready
    for (let i = 0; i < 50 && unready === undefined; i++) {
      const [status, body] = await ready(replica.url)
      if (status === 503) unready = body
      else await sleep(200)
    }
    assert.ok(unready !== undefined, 'the replica turned unready while behind')
    assert.equal(unready.reason, 'replica is behind')
    assert.equal(unready.stream, 'unreachable')
    assert.ok(unready.blocksBehind > 2)
    // the metrics say the same: the producer's backlog grows, the replica is cut off
    const [p, r] = await Promise.all([scrape(producer.metricsUrl), scrape(replica.metricsUrl)])
    assert.ok(value(p, 'keel_stream_backlog_blocks', { role: 'producer' }) > 0)
    assert.equal(value(p, 'keel_stream_connected', { role: 'producer' }), 0)
    assert.equal(value(r, 'keel_stream_connected', { role: 'replica' }), 0)
    assert.ok(value(r, 'keel_stream_backlog_blocks', { role: 'replica' }) > 2)

    await nats.start()
    const sent = await load.stop()
    assert.ok(sent > 10, `transfers went on during the outage (${sent})`)
    const head = await assertSameChain(producer, replica, { addresses: [DEV_ADDRESSES[1], DEV_ADDRESSES[9]] })
    const [status] = await ready(replica.url)
    assert.equal(status, 200)
    const [p2, r2] = await Promise.all([scrape(producer.metricsUrl), scrape(replica.metricsUrl)])
    assert.equal(value(p2, 'keel_stream_backlog_blocks', { role: 'producer' }), 0)
    assert.equal(value(p2, 'keel_stream_block', { role: 'producer' }), Number(head))
    assert.equal(value(r2, 'keel_stream_block', { role: 'replica' }), Number(head))
    assert.equal(value(r2, 'keel_stream_connected', { role: 'replica' }), 1)
    // every block applied exactly once, each with its lag (blocks published late from the outbox too)
    assert.equal(value(r2, 'keel_replica_apply_seconds_count'), Number(head))
    assert.equal(value(r2, 'keel_replica_lag_seconds_count'), Number(head))
    assert.ok(value(r2, 'keel_replica_applied_bytes_total') > 0)
  })
})

describe('kill -9', () => {
  let nats, producer, replica
  const cluster = withCluster()
  before(async () => ({ nats, producer, replica } = await cluster.start()))
  after(() => cluster.stop({ replica, producer }))

  test('a replica killed under load restarts from its own head and catches up', async () => {
    const load = trafficTo(producer, 2)
    await waitForHead(replica.url, 5)
    await replica.kill9()
    await sleep(500)
    replica = await replica.restart()
    await load.stop()
    await assertSameChain(producer, replica, { addresses: [DEV_ADDRESSES[2], DEV_ADDRESSES[9]] })
  })

  test('a producer killed under load republishes from its outbox: no block is skipped or applied twice', async () => {
    const load = trafficTo(producer, 3)
    await sleep(1500)
    await producer.kill9()
    await load.stop()
    producer = await producer.restart()
    const more = trafficTo(producer, 4)
    await sleep(1000)
    await more.stop()
    const head = await assertSameChain(producer, replica, { addresses: [DEV_ADDRESSES[3], DEV_ADDRESSES[4], DEV_ADDRESSES[9]] })
    // the stream holds each block exactly once, in order
    await withStream(nats, async (jsm) => {
      const info = await jsm.streams.info(STREAM)
      const numbers = []
      for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
        const msg = await jsm.streams.getMessage(STREAM, { seq })
        numbers.push(Number(msg.header.get('Keel-Block')))
      }
      assert.deepEqual(numbers, Array.from({ length: Number(head) }, (_, i) => i + 1))
    })
  })
})

describe("behind the stream's retention", () => {
  let nats, producer, replica
  const cluster = withCluster()
  before(async () => ({ nats, producer, replica } = await cluster.start()))
  after(() => cluster.stop({ replica, producer }))

  test('a replica whose next block left the stream re-bootstraps from a new snapshot, in place, and says so', async () => {
    let load = trafficTo(producer, 6)
    await waitForHead(replica.url, 3)
    await load.stop()
    await replica.kill9()
    load = trafficTo(producer, 6)
    const head = BigInt(await rpcResult(producer.url, 'eth_blockNumber', []))
    await waitForHead(producer.url, head + 5n)
    await load.stop()
    // retention: the stream keeps only its last two blocks
    await withStream(nats, (jsm) => jsm.streams.purge(STREAM, { keep: 2 }))
    replica = await replica.restart()
    const deadline = Date.now() + 30_000
    while (!/replica restored the producer's snapshot/.test(replica.stderr()) && Date.now() < deadline) await sleep(100)
    assert.match(replica.stderr(), /"code":"gap".*the block stream starts at block \d+, past this replica's next block/)
    assert.match(replica.stderr(), /replica re-bootstrapping from a new snapshot/)
    assert.match(replica.stderr(), /replica restored the producer's snapshot/)
    await assertSameChain(producer, replica, { addresses: [DEV_ADDRESSES[6], DEV_ADDRESSES[9]] })
    // the process restarted its node in place: the metrics listener is a new one, on the line printed again
    const metricsUrl = [...replica.stdout().matchAll(/^keel: metrics on (\S+)$/gm)].at(-1)[1]
    assert.equal(value(await scrape(metricsUrl), 'keel_replica_bootstraps_total'), 1)
  })
})

describe('a snapshot that never comes', () => {
  let nats, nc, producer, replica
  before(async () => {
    nats = await startNats()
    nc = await connect({ servers: nats.url })
  })
  after(async () => {
    await replica?.stop()
    await producer?.stop()
    await nc?.close()
    await nats?.close()
  })

  /** Answers the next snapshot request itself, as a producer would that then died (or whose write failed). */
  function answerOnce(answer) {
    return new Promise((resolve) => {
      nc.subscribe(`keel.snapshot.${CHAIN_ID}`, {
        queue: 'keel-producer',
        max: 1,
        callback: (err, msg) => {
          if (err === null) msg.respond(JSON.stringify(answer))
          resolve()
        },
      })
    })
  }

  test("a replica told of a snapshot that is never written asks again and restores the (restarted) producer's", async () => {
    const asked = answerOnce({ name: 'block-999', head: '999', hash: `0x${'ab'.repeat(32)}` })
    // the producer is not up yet: the replica's first request reaches only the answer above
    const starting = startReplica(nats, { url: 'http://127.0.0.1:9' })
    await withTimeout(asked, 15_000, 'the replica asks for a snapshot')
    producer = await startProducer(nats, writeGenesis(), { blockTime: 1 })
    replica = await starting
    assert.match(replica.stderr(), /the producer now writes another snapshot; waiting for that one.*"was":"block-999"/)
    assert.match(replica.stderr(), /replica restored the producer's snapshot/)
    await assertSameChain(producer, replica)
  })

  test('a replica whose snapshot stops arriving mid-read drops it and asks again', async () => {
    await replica.stop()
    replica = undefined
    // an object whose metadata is complete but whose chunks are gone: a read of it waits for bytes forever
    const os = await new Objm(nc).create(`KEEL_SNAPSHOTS_${CHAIN_ID}`)
    const info = await os.putBlob({ name: 'block-gone' }, new Uint8Array(4096).fill(7))
    const jsm = await jetstreamManager(nc)
    await jsm.streams.purge(`OBJ_KEEL_SNAPSHOTS_${CHAIN_ID}`, { filter: `$O.KEEL_SNAPSHOTS_${CHAIN_ID}.C.${info.nuid}` })
    assert.notEqual(await os.info('block-gone'), null)
    // the producer would answer too: out of the queue group's draw until the replica has asked (kill -9
    // keeps its data folder for the restart)
    await producer.kill9()
    const asked = answerOnce({ name: 'block-gone', head: '1', hash: `0x${'cd'.repeat(32)}` })
    // it waits STALL_MS (20 s) for bytes before it asks again
    const starting = startReplica(nats, { url: 'http://127.0.0.1:9' }, { readyTimeoutMs: 60_000 })
    await withTimeout(asked, 15_000, 'the replica asks for a snapshot')
    producer = await producer.restart()
    replica = await starting
    assert.match(replica.stderr(), /the snapshot stopped arriving; asking again.*"name":"block-gone"/)
    assert.match(replica.stderr(), /replica restored the producer's snapshot/)
    await assertSameChain(producer, replica)
  })
})

describe('blocks larger than a NATS message', () => {
  let nats, producer, replica
  const cluster = withCluster({ nats: { maxPayload: 16 * 1024 } })
  before(async () => ({ nats, producer, replica } = await cluster.start()))
  after(() => cluster.stop({ replica, producer }))

  test('are published in chunks and reassembled by the replica', async () => {
    const load = trafficTo(producer, 5, { calldataBytes: 40_000 })
    await waitForHead(producer.url, 4)
    await load.stop()
    await assertSameChain(producer, replica, { addresses: [DEV_ADDRESSES[5]] })
    await withStream(nats, async (jsm) => {
      const info = await jsm.streams.info(STREAM)
      const last = await jsm.streams.getMessage(STREAM, { seq: info.state.last_seq })
      assert.match(last.header.get('Keel-Chunk'), /^(\d+)\/(\d+)$/)
      const blocks = Number(await rpcResult(producer.url, 'eth_blockNumber', []))
      assert.ok(info.state.messages > blocks, `some blocks took several messages (${info.state.messages} messages, ${blocks} blocks, last ${last.header.get('Keel-Chunk')})`)
    })
  })
})

describe('a tampered stream', () => {
  let source, forged, genesis, producer
  const replicas = []
  before(async () => {
    source = await startNats()
    forged = await startNats()
    genesis = writeGenesis()
    producer = await startProducer(source, genesis)
    const load = trafficTo(producer, 6)
    await waitForHead(producer.url, 4)
    await load.stop()
  })
  after(async () => {
    await Promise.all(replicas.map((r) => r.stop()))
    await producer?.stop()
    await source?.close()
    await forged?.close()
  })

  /** Copies the producer's blocks 1..4 to the forged server's stream, `tamper` changing block 3's message. */
  async function forgeStream(tamper) {
    const from = await connect({ servers: source.url })
    const to = await connect({ servers: forged.url })
    try {
      const src = await jetstreamManager(from)
      const dst = await jetstreamManager(to)
      await dst.streams.delete(STREAM).catch(() => {})
      await dst.streams.add({ name: STREAM, subjects: [SUBJECT] })
      const js = jetstream(to)
      for (let seq = 1; seq <= 4; seq++) {
        const msg = await src.streams.getMessage(STREAM, { seq })
        const number = Number(msg.header.get('Keel-Block'))
        const data = number === 3 ? tamper(msg.data) : msg.data
        if (data === undefined) continue
        // the Keel headers only: the stored copy also keeps the producer's publish expectations
        const h = headers()
        for (const name of ['Keel-Block', 'Keel-Hash', 'Keel-Chunk', 'Keel-Committed-At']) {
          const v = msg.header.get(name)
          if (v !== '') h.set(name, v)
        }
        // a forged header is published under its own hash
        if (number === 3 && data !== msg.data) h.set('Keel-Hash', keccak256(decodeBlockMessage(data).headerRlp))
        await js.publish(SUBJECT, data, { headers: h })
      }
    } finally {
      await from.close()
      await to.close()
    }
  }

  async function followForged(args = []) {
    // from the genesis block: the forged stream has no producer to ask for a snapshot
    const replica = await startReplica(forged, producer, { genesis, args })
    replicas.push(replica)
    try {
      await waitForHead(replica.url, 2)
    } catch (err) {
      err.message += `\n--- replica log ---\n${replica.stderr().slice(-4000)}`
      throw err
    }
    const deadline = Date.now() + 10_000
    while (!/replica stopped following/.test(replica.stderr()) && Date.now() < deadline) await sleep(100)
    return replica
  }

  test('a trie node that is not the hash of its value is refused; the replica keeps its head and says why', async () => {
    await forgeStream((data) => {
      const m = decodeBlockMessage(data)
      const [key, value] = m.trieNodes[0]
      const bad = Uint8Array.from(value)
      bad[bad.length - 1] ^= 1
      m.trieNodes[0] = [key, bad]
      return encodeBlockMessage(m)
    })
    const replica = await followForged()
    assert.match(replica.stderr(), /"code":"bad-write-set".*block 3 .*is not the hash of its value/)
    await sleep(500)
    assert.equal(await rpcResult(replica.url, 'eth_blockNumber', []), '0x2', 'block 3 is never served')
    assert.equal(await rpcResult(replica.url, 'eth_getBlockByNumber', ['0x3', false]), null)
    const [status, body] = await ready(replica.url)
    assert.equal(status, 503)
    assert.match(body.reason, /^replica stopped following the block stream: block 3/)
    const m = await scrape(replica.metricsUrl)
    assert.equal(value(m, 'keel_replica_verify_failures_total', { code: 'bad-write-set' }), 1)
    assert.equal(value(m, 'keel_stream_stopped', { role: 'replica' }), 1)
  })

  test("call frames that are not what the block ran are taken on trust by default, and refused by --replica-verify execute", async () => {
    await forgeStream((data) => {
      const m = decodeBlockMessage(data)
      assert.ok(m.frames.length > 0, 'block 3 has transactions')
      // the first transaction loses its recipient from the explorer's index
      m.frames[0] = { addresses: m.frames[0].addresses.slice(0, 1), creations: [] }
      return encodeBlockMessage(m)
    })
    const trusting = await startReplica(forged, producer, { genesis })
    replicas.push(trusting)
    await waitForHead(trusting.url, 4)
    const replica = await followForged(['--replica-verify', 'execute'])
    assert.match(replica.stderr(), /"code":"state-root-mismatch".*block 3 .*transaction 0's call frames are not the ones the producer sent/)
    assert.equal(await rpcResult(replica.url, 'eth_blockNumber', []), '0x2')
  })

  test('a block that does not follow the head (block 3 missing) is refused', async () => {
    await forgeStream(() => undefined)
    const replica = await followForged()
    assert.match(replica.stderr(), /"code":"not-next".*block 4 .*does not follow the head, block 2/)
    assert.equal(await rpcResult(replica.url, 'eth_blockNumber', []), '0x2')
  })

  test('a header naming a state root the block does not produce passes the checks, and --replica-verify execute refuses it', async () => {
    // block 3 with block 2's state root: a node the replica has, so only running the block tells
    const stateRoot2 = (await rpcResult(producer.url, 'eth_getBlockByNumber', ['0x2', false])).stateRoot
    await forgeStream((data) => {
      const m = decodeBlockMessage(data)
      const fields = RLP.decode(m.headerRlp)
      fields[3] = getBytes(stateRoot2)
      m.headerRlp = RLP.encode(fields)
      return encodeBlockMessage(m)
    })
    const replica = await followForged(['--replica-verify', 'execute'])
    assert.match(replica.stderr(), /"code":"state-root-mismatch".*block 3 .*stateRoot mismatch: the header says 0x[0-9a-f]{64}, executing the block gives 0x[0-9a-f]{64}/)
    assert.equal(await rpcResult(replica.url, 'eth_blockNumber', []), '0x2')
    const m = await scrape(replica.metricsUrl)
    assert.equal(value(m, 'keel_replica_verify_failures_total', { code: 'state-root-mismatch' }), 1)
  })
})

describe('a second producer on the same stream', () => {
  let nats, producer, other
  before(async () => {
    nats = await startNats()
    producer = await startProducer(nats, writeGenesis())
    const load = trafficTo(producer, 7)
    await waitForHead(producer.url, 2)
    await load.stop()
  })
  after(async () => {
    await other?.stop()
    await producer?.stop()
    await nats?.close()
  })

  test('is refused and says so; the first keeps publishing', async () => {
    // another chain (its genesis has another timestamp) with the same chain id
    await sleep(1100)
    other = await startProducer(nats, writeGenesis())
    const load = trafficTo(other, 7)
    await waitForHead(other.url, 3)
    await load.stop()
    const deadline = Date.now() + 10_000
    while (!/block stream refused this producer/.test(other.stderr()) && Date.now() < deadline) await sleep(100)
    assert.match(other.stderr(), /block stream refused this producer.*not on this producer's chain.*another producer publishes to it/)
    const first = trafficTo(producer, 8)
    const before = BigInt(await rpcResult(producer.url, 'eth_blockNumber', []))
    await waitForHead(producer.url, before + 2n)
    await first.stop()
    await withStream(nats, async (jsm) => {
      const last = await jsm.streams.getMessage(STREAM, { last_by_subj: SUBJECT })
      const head = await rpcResult(producer.url, 'eth_getBlockByNumber', ['latest', false])
      assert.equal(last.header.get('Keel-Hash'), head.hash, "the stream ends with the first producer's head")
    })
  })
})
