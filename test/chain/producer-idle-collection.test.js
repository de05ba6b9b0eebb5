// The block producer gives back the heap a burst of transactions grew once it has been idle a few
// seconds (src/util/idle-collection.ts, wired in src/chain/producer-thread.ts): its young generation
// shrinks, which V8 does only in a collection that finds the thread quiet.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Wallet } from 'ethers'
import { CHAIN_ID, DEV_KEYS, startNode } from '../helpers/node.js'
import { samples, scrape, value } from '../helpers/prom.js'
import { rpcBatch, sleep, waitForReceipt } from '../helpers/rpc.js'

const MiB = 1024 * 1024
// 400 transfers grow the young generation to its bound without bringing a full collection of their own
// (a larger burst leaves V8 one to finish, which shrinks the heap with or without the idle collection)
const PER_SENDER = 40

test('an idle producer gives back the heap its burst of transfers grew', async () => {
  const node = await startNode()
  try {
    const signed = await Promise.all(
      DEV_KEYS.map(async (key, s) => {
        const wallet = new Wallet(key)
        const list = []
        for (let nonce = 0; nonce < PER_SENDER; nonce++) {
          const to = `0x${(0xa1d1e000 + s * PER_SENDER + nonce).toString(16).padStart(40, '0')}`
          list.push(await wallet.signTransaction({ to, value: 1n, nonce, gasLimit: 21_000n, maxFeePerGas: 50n * 10n ** 9n, maxPriorityFeePerGas: 10n ** 9n, type: 2, chainId: CHAIN_ID }))
        }
        return list
      }),
    )
    // each sender's transfers in nonce order, 50 to a batch; the senders side by side
    const lastHashes = await Promise.all(
      signed.map(async (list) => {
        let last
        for (let i = 0; i < list.length; i += 50) {
          const hashes = await rpcBatch(node.url, list.slice(i, i + 50).map((raw) => ['eth_sendRawTransaction', [raw]]))
          last = hashes.at(-1)
        }
        return last
      }),
    )
    for (const hash of lastHashes) await waitForReceipt(node.url, hash, 60_000)

    // the producer posts its heap every 5 s; the collection comes 6 s into its idle spell
    const producerHeap = async () => value(await scrape(node.metricsUrl), 'keel_thread_heap_total_bytes', { thread: 'producer' })
    // its first report may still be due (a fast burst ends within 5 s of the start)
    for (let tries = 0; samples(await scrape(node.metricsUrl), 'keel_thread_heap_total_bytes', { thread: 'producer' }).length === 0; tries++) {
      assert.ok(tries < 20, 'the producer reported no heap')
      await sleep(500)
    }
    let afterBurst = 0
    for (let i = 0; i < 6; i++) {
      afterBurst = Math.max(afterBurst, await producerHeap())
      await sleep(500)
    }
    let least = afterBurst
    const deadline = Date.now() + 20_000
    while (Date.now() < deadline && least > afterBurst - 4 * MiB) {
      await sleep(1000)
      least = Math.min(least, await producerHeap())
    }
    assert.ok(
      least <= afterBurst - 4 * MiB,
      `the producer's heap ${(afterBurst / MiB).toFixed(1)} MiB after the burst, ${(least / MiB).toFixed(1)} at least over 20 s of idle`,
    )
  } finally {
    await node.stop()
  }
})
