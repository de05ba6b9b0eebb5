// geth's raw-transaction getters: eth_getRawTransactionByHash (mined, or still in the pool) and
// eth_getRawTransactionByBlock{Hash,Number}AndIndex answer the bytes the sender signed; where there is
// no such transaction or block, geth answers empty bytes ("0x"), not null.

import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { Transaction, Wallet, keccak256, toQuantity } from 'ethers'
import { CHAIN_ID, DEV_ADDRESSES, DEV_KEYS, startNode } from '../helpers/node.js'
import { rpc, rpcResult, waitForReceipt } from '../helpers/rpc.js'

let node
let wallet

before(async () => {
  node = await startNode({ blockTime: 1 })
  wallet = new Wallet(DEV_KEYS[3])
})

after(async () => {
  await node?.stop()
})

const signTransfer = async (nonce, value) =>
  wallet.signTransaction({
    type: 2,
    chainId: CHAIN_ID,
    nonce,
    to: DEV_ADDRESSES[4],
    value,
    gasLimit: 21_000n,
    maxFeePerGas: 100n * 10n ** 9n,
    maxPriorityFeePerGas: 10n ** 9n,
  })

test('the bytes the sender signed, from the pool and then from the block, by hash and by position', async () => {
  const nonce = Number(await rpcResult(node.url, 'eth_getTransactionCount', [wallet.address, 'pending']))
  // the later nonce first: it waits in the pool (queued) until the gap is filled
  const later = await signTransfer(nonce + 1, 2n)
  const laterHash = await rpcResult(node.url, 'eth_sendRawTransaction', [later])
  assert.equal(await rpcResult(node.url, 'eth_getRawTransactionByHash', [laterHash]), later)

  const first = await signTransfer(nonce, 1n)
  const firstHash = await rpcResult(node.url, 'eth_sendRawTransaction', [first])
  const receipts = [await waitForReceipt(node.url, firstHash), await waitForReceipt(node.url, laterHash)]
  for (const [raw, hash, receipt] of [[first, firstHash, receipts[0]], [later, laterHash, receipts[1]]]) {
    const byHash = await rpcResult(node.url, 'eth_getRawTransactionByHash', [hash])
    assert.equal(byHash, raw)
    assert.equal(keccak256(byHash), hash)
    assert.equal(Transaction.from(byHash).from, wallet.address)
    const index = receipt.transactionIndex
    assert.equal(await rpcResult(node.url, 'eth_getRawTransactionByBlockHashAndIndex', [receipt.blockHash, index]), raw)
    assert.equal(await rpcResult(node.url, 'eth_getRawTransactionByBlockNumberAndIndex', [receipt.blockNumber, index]), raw)
    // the same transaction as eth_getTransactionByBlockNumberAndIndex describes it
    const described = await rpcResult(node.url, 'eth_getTransactionByBlockNumberAndIndex', [receipt.blockNumber, index])
    assert.equal(described.hash, hash)
  }
  const head = await rpcResult(node.url, 'eth_getBlockByNumber', ['latest', false])
  if (head.transactions.length > 0) {
    assert.equal(keccak256(await rpcResult(node.url, 'eth_getRawTransactionByBlockNumberAndIndex', ['latest', '0x0'])), head.transactions[0])
  }
})

test('no such transaction or block: "0x", as geth answers; bad arguments: -32602', async () => {
  const unknown = `0x${'ab'.repeat(32)}`
  assert.equal(await rpcResult(node.url, 'eth_getRawTransactionByHash', [unknown]), '0x')
  assert.equal(await rpcResult(node.url, 'eth_getRawTransactionByBlockHashAndIndex', [unknown, '0x0']), '0x')
  assert.equal(await rpcResult(node.url, 'eth_getRawTransactionByBlockNumberAndIndex', [toQuantity(1n << 40n), '0x0']), '0x')
  // the genesis block holds no transaction
  assert.equal(await rpcResult(node.url, 'eth_getRawTransactionByBlockNumberAndIndex', ['0x0', '0x0']), '0x')
  const badHash = await rpc(node.url, 'eth_getRawTransactionByHash', ['0x1234'])
  assert.equal(badHash.error?.code, -32602)
  const badIndex = await rpc(node.url, 'eth_getRawTransactionByBlockNumberAndIndex', ['latest', 1])
  assert.equal(badIndex.error?.code, -32602)
  const missing = await rpc(node.url, 'eth_getRawTransactionByBlockHashAndIndex', [unknown])
  assert.equal(missing.error?.code, -32602)
})
