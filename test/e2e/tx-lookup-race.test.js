// A transaction the node accepted is never unknown: eth_getTransactionByHash and
// eth_getRawTransactionByHash find it in the pool until its block, and in the chain from then on, also
// when asked while the block that takes it out of the pool is being committed.

import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { Wallet } from 'ethers'
import { CHAIN_ID, DEV_ADDRESSES, DEV_KEYS, startNode } from '../helpers/node.js'
import { rpcBatch, rpcResult, waitForReceipt } from '../helpers/rpc.js'

const GWEI = 10n ** 9n
let node

after(async () => {
  await node?.stop()
})

test('accepted transactions are found by hash in every poll while blocks take them from the pool', async () => {
  node = await startNode({ blockTime: 0.25 })
  const wallets = DEV_KEYS.slice(0, 4).map((key) => new Wallet(key))
  const accepted = []
  let sending = true
  const sender = async (wallet) => {
    for (let nonce = 0; nonce < 150; nonce++) {
      const raw = await wallet.signTransaction({ type: 2, chainId: CHAIN_ID, nonce, to: DEV_ADDRESSES[9], value: 1n, gasLimit: 21_000n, maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: GWEI })
      accepted.push(await rpcResult(node.url, 'eth_sendRawTransaction', [raw]))
    }
  }
  const unknown = []
  let polls = 0
  const poller = async () => {
    while (sending || polls === 0) {
      const hashes = accepted.slice(-40)
      if (hashes.length === 0) {
        await new Promise((r) => setTimeout(r, 5))
        continue
      }
      const answers = await rpcBatch(node.url, hashes.flatMap((h) => [['eth_getTransactionByHash', [h]], ['eth_getRawTransactionByHash', [h]]]))
      polls++
      answers.forEach((result, i) => {
        if (result === null || result === '0x') unknown.push(`${i % 2 ? 'raw' : 'tx'} ${hashes[i >> 1]}`)
      })
    }
  }
  const pollers = [poller(), poller()]
  await Promise.all(wallets.map(sender))
  sending = false
  await Promise.all(pollers)
  assert.ok(polls > 20, `only ${polls} polls`)
  assert.deepEqual(unknown, [], 'accepted transactions answered as unknown')
  for (const hash of accepted.slice(-5)) assert.equal((await waitForReceipt(node.url, hash, 10_000)).status, '0x1')
})
