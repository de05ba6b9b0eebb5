// WebSocket macro benchmarks against running nodes (Keel and, side by side, anvil):
//   - eth_chainId round trips per second over 16 connections (closed loop: one call in flight per socket);
//   - newHeads delivery across 1,000 subscribers: for every block, each subscriber's arrival time behind the
//     first subscriber's (latency p50/p99) and the block's spread (last arrival - first arrival).
// All timestamps are taken in this one client process, so a part of the spread is this process reading
// 1,000 sockets; both nodes are measured the same way.
//
// Alone:  node bench/macro/ws.js --keel ws://127.0.0.1:8545 [--anvil ws://127.0.0.1:8546] [--quick]
//   (anvil: node_modules/.bin/anvil --chain-id 24589 --block-time 1 --port 8546; Keel: keel start --dev)
// From a runner:  import { run } from './macro/ws.js'; await run({ keelUrl, anvilUrl, quick })
// Keel must allow the subscribers from one address: start it with --ws-max-connections-per-ip 0 (or >= 1,100).

import { pathToFileURL } from 'node:url'
import WebSocket from 'ws'

const CONNECT_BATCH = 100

const percentile = (sorted, p) => (sorted.length === 0 ? null : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))])
const round = (x) => (x === null ? null : Math.round(x * 1000) / 1000)

function summary(values) {
  const sorted = Float64Array.from(values).sort()
  return {
    p50: round(percentile(sorted, 50)),
    p99: round(percentile(sorted, 99)),
    max: round(sorted.length === 0 ? null : sorted[sorted.length - 1]),
    samples: sorted.length,
  }
}

async function open(url) {
  const socket = new WebSocket(url, { perMessageDeflate: false })
  await new Promise((resolve, reject) => {
    socket.once('open', resolve)
    socket.once('error', reject)
  })
  socket.on('error', () => {})
  return socket
}

async function openMany(url, count) {
  const sockets = []
  for (let i = 0; i < count; i += CONNECT_BATCH) {
    sockets.push(...(await Promise.all(Array.from({ length: Math.min(CONNECT_BATCH, count - i) }, () => open(url)))))
  }
  return sockets
}

function closeAll(sockets) {
  for (const socket of sockets) socket.terminate()
}

/** eth_chainId round trips per second: `connections` sockets, each with one call in flight, for `durationMs`. */
export async function chainIdRoundTrips(url, { connections = 16, durationMs = 5_000 } = {}) {
  const sockets = await openMany(url, connections)
  const latencies = []
  let completed = 0
  let errors = 0
  const request = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}'
  const startedAt = performance.now()
  const endAt = startedAt + durationMs
  await Promise.all(
    sockets.map(
      (socket) =>
        new Promise((resolve) => {
          let sentAt = 0
          const next = () => {
            if (performance.now() >= endAt) {
              resolve()
              return
            }
            sentAt = performance.now()
            socket.send(request)
          }
          socket.on('message', (data) => {
            latencies.push(performance.now() - sentAt)
            if (data.toString().includes('"error"')) errors++
            completed++
            next()
          })
          socket.once('close', resolve)
          next()
        }),
    ),
  )
  const elapsed = (performance.now() - startedAt) / 1000
  closeAll(sockets)
  return { connections, seconds: round(elapsed), requests: completed, errors, perSecond: Math.round(completed / elapsed), latencyMs: summary(latencies) }
}

const NUMBER_FIELD = '"number":"'

/** The block number of a newHeads notification without parsing all of it (keeps the receive path cheap). */
function headNumber(text) {
  const at = text.indexOf(NUMBER_FIELD)
  if (at < 0) return -1
  return parseInt(text.slice(at + NUMBER_FIELD.length, text.indexOf('"', at + NUMBER_FIELD.length)), 16)
}

/**
 * newHeads delivery across `subscribers` sockets (one subscription each) for `blocks` blocks produced by
 * the node on its own schedule. Latency = arrival - first arrival of the same block; spread per block.
 */
export async function newHeadsDelivery(url, { subscribers = 1000, blocks = 10, timeoutMs = 60_000 } = {}) {
  const sockets = await openMany(url, subscribers)
  const arrivals = new Map() // block number -> Float64Array of arrival times (NaN = not yet)
  // sockets that have the last block: a count, so that checking for the end costs the same whatever the
  // order in which a node writes to its subscribers (scanning every socket at each arrival cost an
  // in-order node ~500k checks during the last block)
  const hasLast = new Uint8Array(subscribers)
  let withLast = 0
  let firstBlock = -1
  let done
  const finished = new Promise((resolve) => {
    done = resolve
  })
  const lastBlock = () => firstBlock + blocks - 1
  await Promise.all(
    sockets.map(
      (socket, i) =>
        new Promise((resolve, reject) => {
          socket.once('message', (data) => {
            const answer = JSON.parse(data.toString())
            if (answer.error !== undefined) {
              reject(new Error(`eth_subscribe: ${answer.error.message}`))
              return
            }
            socket.on('message', (frame) => {
              const t = performance.now()
              const number = headNumber(frame.toString())
              // Start with the first block that begins after every socket subscribed.
              if (firstBlock < 0 || number < firstBlock || number > lastBlock()) return
              let times = arrivals.get(number)
              if (times === undefined) {
                times = new Float64Array(subscribers).fill(NaN)
                arrivals.set(number, times)
              }
              times[i] = t
              if (number === lastBlock() && hasLast[i] === 0) {
                hasLast[i] = 1
                if (++withLast === subscribers) done()
              }
            })
            resolve()
          })
          socket.send('{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}')
        }),
    ),
  )
  // The next block to start after everyone is subscribed: the one after the current head.
  const probe = sockets[0]
  const head = await new Promise((resolve) => {
    const onMessage = (data) => {
      const text = data.toString()
      if (!text.includes('"id":2')) return
      probe.off('message', onMessage)
      resolve(parseInt(JSON.parse(text).result, 16))
    }
    probe.on('message', onMessage)
    probe.send('{"jsonrpc":"2.0","id":2,"method":"eth_blockNumber","params":[]}')
  })
  firstBlock = head + 2
  const timer = setTimeout(done, timeoutMs)
  await finished
  clearTimeout(timer)
  closeAll(sockets)

  const latencies = []
  const spreads = []
  let missed = 0
  for (let n = firstBlock; n <= lastBlock(); n++) {
    const times = arrivals.get(n)
    if (times === undefined) {
      missed += subscribers
      continue
    }
    let first = Infinity
    let last = -Infinity
    for (const t of times) {
      if (Number.isNaN(t)) continue
      if (t < first) first = t
      if (t > last) last = t
    }
    for (const t of times) {
      if (Number.isNaN(t)) missed++
      else latencies.push(t - first)
    }
    spreads.push(last - first)
  }
  return { subscribers, blocks, firstBlock, missed, latencyMs: summary(latencies), spreadMs: summary(spreads) }
}

/** Both measurements for one node. */
export async function measureNode(url, { quick = false } = {}) {
  return {
    chainIdRoundTrips: await chainIdRoundTrips(url, { connections: 16, durationMs: quick ? 2_000 : 5_000 }),
    newHeads: await newHeadsDelivery(url, { subscribers: 1000, blocks: quick ? 3 : 10 }),
  }
}

/** Runner entry: { keel: {...}, anvil: {...} } for the URLs given (http:// is turned into ws://). */
export async function run({ keelUrl, anvilUrl, quick = false } = {}) {
  const results = {}
  if (keelUrl) results.keel = await measureNode(toWs(keelUrl), { quick })
  if (anvilUrl) results.anvil = await measureNode(toWs(anvilUrl), { quick })
  return results
}

const toWs = (url) => url.replace(/^http(s?):/, 'ws$1:')

function argValue(argv, name) {
  const at = argv.indexOf(name)
  return at >= 0 ? argv[at + 1] : undefined
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const argv = process.argv.slice(2)
  const keelUrl = argValue(argv, '--keel')
  const anvilUrl = argValue(argv, '--anvil')
  if (keelUrl === undefined && anvilUrl === undefined) {
    process.stderr.write('usage: node bench/macro/ws.js --keel ws://HOST:PORT [--anvil ws://HOST:PORT] [--quick]\n')
    process.exit(2)
  }
  const results = await run({ keelUrl, anvilUrl, quick: argv.includes('--quick') })
  process.stdout.write(JSON.stringify(results, null, 2) + '\n')
}
