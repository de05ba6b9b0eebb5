// eth_getTransactionCount at 'pending' is answered on the main thread for a sender with nothing in the
// pool, and by the producer's pool otherwise. Whichever answers, a wallet must see its account's nonce
// past every transaction it has pooled: right after a send, across blocks, and after a restart that
// restores the pool from its journal.

import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { Wallet } from 'ethers'
import { CHAIN_ID, DEV_ADDRESSES, DEV_KEYS, startNode } from '../helpers/node.js'
import { rpc, rpcResult, waitForReceipt } from '../helpers/rpc.js'

const GWEI = 10n ** 9n
let node

after(async () => {
  await node?.stop()
})

const nonceAt = async (address, tag) => Number(BigInt(await rpcResult(node.url, 'eth_getTransactionCount', [address, tag])))
const sign = (wallet, nonce, extra = {}) =>
  wallet.signTransaction({ type: 2, chainId: CHAIN_ID, nonce, to: DEV_ADDRESSES[9], value: 1n, gasLimit: 21_000n, maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: GWEI, ...extra })

test('pooled transactions count at once, a refused one does not, and the pool restored after a restart counts again', async () => {
  // no block for ten minutes: whatever is sent stays in the pool
  node = await startNode({ blockTime: 600 })
  const wallet = new Wallet(DEV_KEYS[3])
  const start = await nonceAt(wallet.address, 'latest')
  assert.equal(await nonceAt(wallet.address, 'pending'), start, 'nothing pooled: the account nonce')
  await rpcResult(node.url, 'eth_sendRawTransaction', [await sign(wallet, start)])
  assert.equal(await nonceAt(wallet.address, 'pending'), start + 1)
  assert.equal(await nonceAt(wallet.address, 'latest'), start)
  // a gap does not move it; a refused transaction (its nonce is taken, the fee is not a replacement's) neither
  await rpcResult(node.url, 'eth_sendRawTransaction', [await sign(wallet, start + 2)])
  const refused = await rpc(node.url, 'eth_sendRawTransaction', [await sign(wallet, start, { value: 2n })])
  assert.ok(refused.error, 'an underpriced replacement is refused')
  assert.equal(await nonceAt(wallet.address, 'pending'), start + 1)
  // a sender whose only transaction was refused has nothing pooled
  const broke = Wallet.createRandom()
  const refusedAlone = await rpc(node.url, 'eth_sendRawTransaction', [await sign(broke, 0)])
  assert.ok(refusedAlone.error, 'an account without funds is refused')
  assert.equal(await nonceAt(broke.address, 'pending'), 0)

  node = await node.restart()
  assert.equal(await nonceAt(wallet.address, 'pending'), start + 1, 'the pool came back from its journal')
  assert.equal(await nonceAt(wallet.address, 'latest'), start)

  // blocks again: once mined, 'pending' and 'latest' agree (the gapped transaction stays queued)
  node = await node.restart({ blockTime: 1 })
  const until = Date.now() + 20_000
  while ((await nonceAt(wallet.address, 'latest')) === start && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 100))
  assert.equal(await nonceAt(wallet.address, 'latest'), start + 1)
  assert.equal(await nonceAt(wallet.address, 'pending'), start + 1)
})

test('a wallet sending one transaction after another, asking the pending nonce after each, while blocks land', async () => {
  node = await node.restart({ blockTime: 0.2 })
  const wallets = [new Wallet(DEV_KEYS[4]), new Wallet(DEV_KEYS[5])]
  const hashes = []
  await Promise.all(wallets.map(async (wallet) => {
    for (let i = 0; i < 25; i++) {
      const nonce = await nonceAt(wallet.address, 'pending')
      hashes.push(await rpcResult(node.url, 'eth_sendRawTransaction', [await sign(wallet, nonce)]))
      // pooled or already mined: either way the next nonce is past it
      assert.equal(await nonceAt(wallet.address, 'pending'), nonce + 1)
      if (i % 5 === 4) await new Promise((resolve) => setTimeout(resolve, 150))
    }
  }))
  for (const hash of hashes) assert.equal((await waitForReceipt(node.url, hash)).status, '0x1')
  for (const wallet of wallets) assert.equal(await nonceAt(wallet.address, 'pending'), await nonceAt(wallet.address, 'latest'))
})
