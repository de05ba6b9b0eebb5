// Fan-out at scale against a real Keel process: 1,000 newHeads subscribers on loopback each receive every
// block of a burst, in order and without gaps; a client that stops reading is closed as a slow consumer
// (1008) while a reading client keeps getting every block on time.

import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { Wallet } from 'ethers'
import WebSocket from 'ws'
import { CHAIN_ID, DEV_ADDRESSES, DEV_KEYS, startNode } from '../helpers/node.js'
import { rawPost, rpcResult, sleep, withTimeout } from '../helpers/rpc.js'

const SUBSCRIBERS = 1000
const SENDERS = 8
const TXS_PER_SENDER = 12
const SEND_BUFFER_LIMIT = 64 * 1024

let node
const sockets = []

/** A socket with one newHeads subscription that records block numbers and arrival times. */
async function subscriber(url, subscriptions = 1) {
  const socket = new WebSocket(url)
  sockets.push(socket)
  await new Promise((resolve, reject) => {
    socket.once('open', resolve)
    socket.once('error', reject)
  })
  const heads = []
  const arrivals = []
  let answered = 0
  let allAnswered
  const ready = new Promise((resolve) => {
    allAnswered = resolve
  })
  const closed = new Promise((resolve) => socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })))
  socket.on('error', () => {})
  let id
  socket.on('message', (data) => {
    const text = data.toString()
    if (text.startsWith('{"jsonrpc":"2.0","method":"eth_subscription"')) {
      const message = JSON.parse(text)
      if (message.params.subscription !== id) return
      heads.push(Number(message.params.result.number))
      arrivals.push(performance.now())
      return
    }
    const answer = JSON.parse(text)
    if (answer.id === 0) id = answer.result
    if (++answered === subscriptions) allAnswered()
  })
  for (let i = 0; i < subscriptions; i++) socket.send(JSON.stringify({ jsonrpc: '2.0', id: i, method: 'eth_subscribe', params: ['newHeads'] }))
  await ready
  return { socket, heads, arrivals, closed }
}

/** Signs `count` transfers per sender offline, ready for one eth_sendRawTransaction batch. */
async function signedBurst(nonceBase, count) {
  const out = []
  for (let s = 0; s < SENDERS; s++) {
    const wallet = new Wallet(DEV_KEYS[s])
    const start = nonceBase[s]
    for (let n = 0; n < count; n++) {
      out.push(
        await wallet.signTransaction({
          type: 2,
          chainId: CHAIN_ID,
          nonce: start + n,
          to: DEV_ADDRESSES[9],
          value: 1n,
          gasLimit: 21_000n,
          maxFeePerGas: 100_000_000_000n,
          maxPriorityFeePerGas: 1_000_000_000n,
        }),
      )
    }
    nonceBase[s] = start + count
  }
  return out
}

async function sendBurst(raw) {
  const batch = raw.map((tx, i) => ({ jsonrpc: '2.0', id: i, method: 'eth_sendRawTransaction', params: [tx] }))
  const answers = await rawPost(node.url, JSON.stringify(batch))
  const errors = answers.json.filter((a) => a.error !== undefined)
  assert.deepEqual(errors, [], 'every transaction accepted')
}

before(async () => {
  node = await startNode({
    blockTime: 0,
    args: ['--metrics-port', '0', '--ws-max-connections-per-ip', '0', '--ws-send-buffer-limit', String(SEND_BUFFER_LIMIT)],
  })
})

after(async () => {
  for (const socket of sockets) socket.terminate()
  await node?.stop()
})

const nonces = new Array(SENDERS).fill(0)

test(`${SUBSCRIBERS} subscribers all receive every block of a burst, in order, without gaps`, { timeout: 60_000 }, async () => {
  const subs = []
  for (let i = 0; i < SUBSCRIBERS; i += 100) {
    subs.push(...(await Promise.all(Array.from({ length: 100 }, () => subscriber(node.wsUrl)))))
  }
  const first = Number(await rpcResult(node.url, 'eth_blockNumber'))
  // Three waves, each sent as fast as the client can and each waited for, so the burst spans several
  // blocks whatever the machine's speed (automine may fold one wave into a single block).
  for (let wave = 0; wave < 3; wave++) {
    const before = Number(await rpcResult(node.url, 'eth_blockNumber'))
    await sendBurst(await signedBurst(nonces, TXS_PER_SENDER / 3))
    const waveDeadline = Date.now() + 10_000
    while (Date.now() < waveDeadline && Number(await rpcResult(node.url, 'eth_blockNumber')) === before) await sleep(10)
  }
  const deadline = Date.now() + 30_000
  let last = Number(await rpcResult(node.url, 'eth_blockNumber'))
  // Wait for the pool to drain into blocks, then for every subscriber to have the last one.
  while (Date.now() < deadline) {
    const pending = await rpcResult(node.url, 'txpool_status')
    last = Number(await rpcResult(node.url, 'eth_blockNumber'))
    if (Number(pending.pending) === 0 && Number(pending.queued) === 0) break
    await sleep(50)
  }
  while (Date.now() < deadline && !subs.every((s) => s.heads.at(-1) === last)) await sleep(50)
  assert.ok(last - first >= 2, `the burst made several blocks (${first + 1}..${last})`)
  for (const [i, sub] of subs.entries()) {
    const got = sub.heads.filter((n) => n > first)
    const want = Array.from({ length: last - first }, (_, k) => first + 1 + k)
    assert.deepEqual(got, want, `subscriber ${i} got every block ${first + 1}..${last}`)
    for (let k = 1; k < sub.heads.length; k++) assert.equal(sub.heads[k], sub.heads[k - 1] + 1, `subscriber ${i} has no gap`)
  }
  for (const sub of subs) sub.socket.close()
})

test('a client that stops reading is closed (1008); a reading client keeps receiving on time', { timeout: 60_000 }, async () => {
  // Many subscriptions on one socket make a lot of traffic, so the kernel buffers fill up quickly.
  const slow = await subscriber(node.wsUrl, 1000)
  const reader = await subscriber(node.wsUrl)
  slow.socket._socket.pause()
  const first = Number(await rpcResult(node.url, 'eth_blockNumber'))
  const lateness = []
  for (let round = 0; round < 12; round++) {
    const sentAt = performance.now()
    const before = reader.heads.length
    await sendBurst(await signedBurst(nonces, 1))
    await withTimeout(
      (async () => {
        while (reader.heads.length === before) await sleep(5)
      })(),
      5_000,
      `reader gets round ${round}`,
    )
    lateness.push(reader.arrivals[before] - sentAt)
  }
  const last = Number(await rpcResult(node.url, 'eth_blockNumber'))
  await withTimeout(
    (async () => {
      while (reader.heads.at(-1) !== last) await sleep(10)
    })(),
    5_000,
    'reader reaches the head',
  )
  const got = reader.heads.filter((n) => n > first)
  assert.deepEqual(got, Array.from({ length: last - first }, (_, k) => first + 1 + k), 'reader got every block')
  lateness.sort((a, b) => a - b)
  assert.ok(lateness.at(-1) < 2_000, `reader's worst delay from send to header: ${lateness.at(-1).toFixed(0)} ms`)

  // Reading again drains what the kernel held, then the close frame the server queued.
  slow.socket._socket.resume()
  const closed = await withTimeout(slow.closed, 10_000, 'slow client closed')
  assert.equal(closed.code, 1008)
  assert.match(closed.reason, /too slow/)
  // What it got before the close has no gap; the rest never came.
  for (let k = 1; k < slow.heads.length; k++) assert.equal(slow.heads[k], slow.heads[k - 1] + 1)
  assert.ok(slow.heads.length < last - first, `the slow client was cut off (${slow.heads.length} of ${last - first} blocks)`)
  reader.socket.close()
})
