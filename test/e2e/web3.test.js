// web3.js v4 against a real Keel process over HTTP.

import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { Web3 } from 'web3'
import { CHAIN_ID, DEV_ADDRESSES, DEV_KEYS, startNode } from '../helpers/node.js'

let node
let web3

before(async () => {
  node = await startNode({ blockTime: 1 })
  web3 = new Web3(node.url)
  web3.eth.transactionPollingInterval = 250
})

after(async () => {
  await node?.stop()
})

test('eth.getChainId() is 24589n', async () => {
  assert.equal(await web3.eth.getChainId(), BigInt(CHAIN_ID))
  assert.equal(await web3.eth.net.getId(), BigInt(CHAIN_ID))
})

test('a locally signed EIP-1559 transaction is sent and its receipt fetched', async () => {
  const recipient = web3.eth.accounts.create().address
  const value = web3.utils.toWei('0.75', 'ether')
  const block = await web3.eth.getBlock('latest')
  const nonce = await web3.eth.getTransactionCount(DEV_ADDRESSES[0], 'pending')
  const maxPriorityFeePerGas = 1_000_000_000n
  const signed = await web3.eth.accounts.signTransaction(
    {
      from: DEV_ADDRESSES[0],
      to: recipient,
      value,
      gas: 21000n,
      maxPriorityFeePerGas,
      maxFeePerGas: block.baseFeePerGas * 2n + maxPriorityFeePerGas,
      nonce,
      chainId: BigInt(CHAIN_ID),
      type: 2n,
    },
    DEV_KEYS[0],
  )
  const receipt = await web3.eth.sendSignedTransaction(signed.rawTransaction)
  assert.equal(receipt.status, 1n)
  assert.equal(receipt.transactionHash, signed.transactionHash)
  assert.equal(receipt.gasUsed, 21000n)
  assert.equal(receipt.to.toLowerCase(), recipient.toLowerCase())
  assert.equal(await web3.eth.getBalance(recipient), BigInt(value))

  const fetched = await web3.eth.getTransactionReceipt(signed.transactionHash)
  assert.equal(fetched.blockHash, receipt.blockHash)
  const tx = await web3.eth.getTransaction(signed.transactionHash)
  assert.equal(tx.nonce, BigInt(nonce))
  assert.equal(tx.chainId, BigInt(CHAIN_ID))
  assert.equal(await web3.eth.getTransactionCount(DEV_ADDRESSES[0], 'latest'), BigInt(nonce) + 1n)
})
