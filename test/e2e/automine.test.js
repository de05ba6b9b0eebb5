// Automining (--block-time 0), eth_sendRawTransaction answers once the block holding the transaction is
// sealed, as anvil's and Hardhat's automine do: the receipt is there when a client asks for it next, so
// ethers' wait() cannot miss the block (it asks for the receipt, then takes the block number as the
// point to poll from; with no block after the one that mined the transaction it would wait for ever).
// A transaction that cannot go in the next block (a nonce gap) is answered at once.

import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { JsonRpcProvider, NonceManager, Wallet } from 'ethers'
import { CHAIN_ID, DEV_ADDRESSES, DEV_KEYS, startNode } from '../helpers/node.js'
import { rpcResult } from '../helpers/rpc.js'

const GWEI = 10n ** 9n
let node

before(async () => {
  node = await startNode({ blockTime: 0 })
})

after(async () => {
  await node?.stop()
})

const sign = (wallet, nonce) =>
  wallet.signTransaction({ type: 2, chainId: CHAIN_ID, nonce, to: DEV_ADDRESSES[9], value: 1n, gasLimit: 21_000n, maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: GWEI })

test('the receipt is there as soon as eth_sendRawTransaction answers, send after send and sends at once', async () => {
  const wallet = new Wallet(DEV_KEYS[2])
  let nonce = Number(BigInt(await rpcResult(node.url, 'eth_getTransactionCount', [wallet.address, 'pending'])))
  for (let i = 0; i < 30; i++) {
    const hash = await rpcResult(node.url, 'eth_sendRawTransaction', [await sign(wallet, nonce++)])
    const receipt = await rpcResult(node.url, 'eth_getTransactionReceipt', [hash])
    assert.ok(receipt !== null, `receipt of send ${i}`)
    assert.equal(receipt.status, '0x1')
  }
  const raws = []
  for (let i = 0; i < 20; i++) raws.push(await sign(wallet, nonce++))
  const hashes = await Promise.all(raws.map((raw) => rpcResult(node.url, 'eth_sendRawTransaction', [raw])))
  for (const hash of hashes) assert.ok((await rpcResult(node.url, 'eth_getTransactionReceipt', [hash])) !== null)
})

test('a transaction behind a nonce gap is answered at once and stays in the pool', async () => {
  const wallet = new Wallet(DEV_KEYS[3])
  const nonce = Number(BigInt(await rpcResult(node.url, 'eth_getTransactionCount', [wallet.address, 'pending'])))
  const started = Date.now()
  const hash = await rpcResult(node.url, 'eth_sendRawTransaction', [await sign(wallet, nonce + 1)])
  assert.ok(Date.now() - started < 1_000, `answered in ${Date.now() - started} ms`)
  assert.equal(await rpcResult(node.url, 'eth_getTransactionReceipt', [hash]), null)
  assert.equal((await rpcResult(node.url, 'eth_getTransactionByHash', [hash])).blockNumber, null)
  // the gap filled: both are mined
  const filler = await rpcResult(node.url, 'eth_sendRawTransaction', [await sign(wallet, nonce)])
  assert.ok((await rpcResult(node.url, 'eth_getTransactionReceipt', [filler])) !== null)
  const until = Date.now() + 10_000
  let receipt = null
  while (receipt === null && Date.now() < until) receipt = await rpcResult(node.url, 'eth_getTransactionReceipt', [hash])
  assert.equal(receipt?.status, '0x1')
})

test("ethers' wait() after each send, 60 times, with no other blocks", async () => {
  const provider = new JsonRpcProvider(node.url, CHAIN_ID, { staticNetwork: true })
  const wallet = new NonceManager(new Wallet(DEV_KEYS[4], provider))
  try {
    for (let i = 0; i < 60; i++) {
      const tx = await wallet.sendTransaction({ to: DEV_ADDRESSES[9], value: BigInt(i + 1) })
      // ethers polls blocks every 4 s: a wait that missed its block would take that long, or for ever
      const started = Date.now()
      const receipt = await tx.wait()
      assert.equal(receipt.status, 1)
      assert.ok(Date.now() - started < 2_000, `wait ${i} took ${Date.now() - started} ms`)
    }
  } finally {
    provider.destroy()
  }
})
