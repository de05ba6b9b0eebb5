// eth_maxPriorityFeePerGas and eth_gasPrice as geth's oracle suggests them (eth/gasprice SuggestTipCap):
// the 60th percentile of the cheapest tips of recent blocks, tips of 2 wei counted (only those under it are
// left out), and a block with nothing to sample counting as the last suggestion, so that one expensive
// transaction among empty blocks does not set the price.

import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { Wallet } from 'ethers'
import { CHAIN_ID, DEV_ADDRESSES, DEV_KEYS, startNode } from '../helpers/node.js'
import { rpcResult, waitForBlock, waitForReceipt } from '../helpers/rpc.js'

const GWEI = 10n ** 9n
const nodes = []

after(async () => {
  for (const node of nodes) await node.stop()
})

async function send(node, key, tip) {
  const wallet = new Wallet(key)
  const nonce = Number(BigInt(await rpcResult(node.url, 'eth_getTransactionCount', [wallet.address, 'pending'])))
  const raw = await wallet.signTransaction({ type: 2, chainId: CHAIN_ID, nonce, to: DEV_ADDRESSES[9], value: 1n, gasLimit: 21_000n, maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: tip })
  const hash = await rpcResult(node.url, 'eth_sendRawTransaction', [raw])
  return waitForReceipt(node.url, hash)
}

const suggestion = async (node) => BigInt(await rpcResult(node.url, 'eth_maxPriorityFeePerGas'))

test('one block per transaction: the tips of the blocks, 2 wei among them', async () => {
  const node = await startNode({ blockTime: 0 })
  nodes.push(node)
  assert.equal(await suggestion(node), GWEI, 'no block yet: the default')
  await send(node, DEV_KEYS[1], 5n * GWEI)
  assert.equal(await suggestion(node), 5n * GWEI)
  await send(node, DEV_KEYS[2], 2n)
  // [2 wei, 5 gwei]: the 60th percentile of two samples is the first
  assert.equal(await suggestion(node), 2n)
  await send(node, DEV_KEYS[3], 1n)
  // a tip of 1 wei is not sampled: its block counts as the last suggestion (2 wei)
  assert.equal(await suggestion(node), 2n)
  const head = BigInt(await rpcResult(node.url, 'eth_blockNumber'))
  const block = await rpcResult(node.url, 'eth_getBlockByNumber', ['latest', false])
  assert.equal(BigInt(await rpcResult(node.url, 'eth_gasPrice')), BigInt(block.baseFeePerGas) + 2n)
  assert.equal(head, 3n)
})

test('empty blocks count as the last suggestion: one dear transaction among them does not set the price', async () => {
  const node = await startNode({ blockTime: 1 })
  nodes.push(node)
  const receipt = await send(node, DEV_KEYS[4], 50n * GWEI)
  await waitForBlock(node.url, Number(receipt.blockNumber) + 2)
  // the blocks before and after the transaction's are empty: 1 gwei each, and 50 gwei once
  assert.equal(await suggestion(node), GWEI)
})

test('a legacy transaction tips its gas price less the block base fee', async () => {
  const node = await startNode({ blockTime: 0 })
  nodes.push(node)
  const wallet = new Wallet(DEV_KEYS[5])
  const raw = await wallet.signTransaction({ type: 0, chainId: CHAIN_ID, nonce: 0, to: DEV_ADDRESSES[9], value: 1n, gasLimit: 21_000n, gasPrice: 7n * GWEI })
  const receipt = await waitForReceipt(node.url, await rpcResult(node.url, 'eth_sendRawTransaction', [raw]))
  const block = await rpcResult(node.url, 'eth_getBlockByNumber', [receipt.blockNumber, false])
  const tip = 7n * GWEI - BigInt(block.baseFeePerGas)
  assert.ok(tip > 0n && tip < 7n * GWEI, 'the base fee takes a part of the gas price')
  assert.equal(await suggestion(node), tip)
  const history = await rpcResult(node.url, 'eth_feeHistory', ['0x1', receipt.blockNumber, [50]])
  assert.equal(BigInt(history.reward[0][0]), tip)
})
