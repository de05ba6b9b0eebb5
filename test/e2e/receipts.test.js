// Receipts are built one at a time, the first time each is asked for (src/rpc/methods/chain-json.ts):
// asked in any order, each names its own gas and its logs' block-wide indexes, and equals its entry in
// eth_getBlockReceipts and its logs in eth_getLogs.

import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { ContractFactory, Interface, Wallet, toQuantity } from 'ethers'
import { compile } from '../helpers/contracts.js'
import { CHAIN_ID, DEV_ADDRESSES, DEV_KEYS, startNode } from '../helpers/node.js'
import { rpcBatch, rpcResult, waitForBlock, waitForReceipt } from '../helpers/rpc.js'

const GWEI = 10n ** 9n
const { Token } = compile()
let node
let token

before(async () => {
  node = await startNode({ blockTime: 2 })
  const deployer = new Wallet(DEV_KEYS[0])
  const deploy = await new ContractFactory(Token.abi, Token.bytecode).getDeployTransaction()
  const nonce = Number(await rpcResult(node.url, 'eth_getTransactionCount', [deployer.address, 'pending']))
  const raw = await deployer.signTransaction({ ...deploy, type: 2, chainId: CHAIN_ID, nonce, gasLimit: 3_000_000n, maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: GWEI })
  token = (await waitForReceipt(node.url, await rpcResult(node.url, 'eth_sendRawTransaction', [raw]))).contractAddress
})

after(async () => {
  await node?.stop()
})

/** Token transfers and plain transfers, interleaved, from one sender into one block. */
async function mixedBlock() {
  const sender = new Wallet(DEV_KEYS[0])
  const transfer = (to, amount) => new Interface(Token.abi).encodeFunctionData('transfer', [to, amount])
  const shapes = [
    { to: token, data: transfer(DEV_ADDRESSES[1], 1n), gasLimit: 100_000n },
    { to: DEV_ADDRESSES[2], value: 1n, gasLimit: 21_000n },
    { to: token, data: transfer(DEV_ADDRESSES[3], 2n), gasLimit: 100_000n },
    { to: token, data: transfer(DEV_ADDRESSES[4], 3n), gasLimit: 100_000n },
    { to: DEV_ADDRESSES[5], value: 2n, gasLimit: 21_000n },
    { to: token, data: transfer(DEV_ADDRESSES[6], 4n), gasLimit: 100_000n },
  ]
  for (let attempt = 0; attempt < 4; attempt++) {
    // right after a block is sealed, so that all wait in the pool for the same next block
    await waitForBlock(node.url, BigInt(await rpcResult(node.url, 'eth_blockNumber')) + 1n)
    const nonce = Number(await rpcResult(node.url, 'eth_getTransactionCount', [sender.address, 'pending']))
    const raws = await Promise.all(shapes.map((shape, i) => sender.signTransaction({ ...shape, type: 2, chainId: CHAIN_ID, nonce: nonce + i, maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: GWEI })))
    const hashes = await rpcBatch(node.url, raws.map((raw) => ['eth_sendRawTransaction', [raw]]))
    // the block number from the transaction, not its receipt: no receipt of the block is asked for yet
    let first
    for (let i = 0; i < 100 && (first === undefined || first.blockNumber === null); i++) {
      first = await rpcResult(node.url, 'eth_getTransactionByHash', [hashes[0]])
      if (first.blockNumber === null) await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const block = await rpcResult(node.url, 'eth_getBlockByNumber', [first.blockNumber, false])
    if (hashes.every((h) => block.transactions.includes(h))) return { block, hashes }
  }
  throw new Error('could not get the transfers into one block')
}

test('receipts asked one by one, last first, match the block\'s receipts, logs and gas', async () => {
  const { block, hashes } = await mixedBlock()
  const indexes = hashes.map((h) => block.transactions.indexOf(h))
  // the last first, then the rest backwards: each built on its own, before the block's others
  const one = []
  for (let k = hashes.length - 1; k >= 0; k--) one[k] = await rpcResult(node.url, 'eth_getTransactionReceipt', [hashes[k]])
  const all = await rpcResult(node.url, 'eth_getBlockReceipts', [block.number])
  assert.equal(all.length, block.transactions.length)
  for (let k = 0; k < hashes.length; k++) assert.deepEqual(one[k], all[indexes[k]], `receipt ${k}`)

  let cumulative = 0n
  let logIndex = 0
  for (let i = 0; i < all.length; i++) {
    const r = all[i]
    assert.equal(r.transactionIndex, toQuantity(i))
    assert.equal(r.transactionHash, block.transactions[i])
    cumulative += BigInt(r.gasUsed)
    assert.equal(BigInt(r.cumulativeGasUsed), cumulative, `receipt ${i}'s cumulative gas`)
    for (const log of r.logs) assert.equal(log.logIndex, toQuantity(logIndex++))
  }
  assert.equal(cumulative, BigInt(block.gasUsed))
  assert.equal(logIndex, 4, 'four token transfers, four Transfer logs')
  assert.deepEqual(one.map((r) => r.logs.length), [1, 0, 1, 1, 0, 1])
  const logs = await rpcResult(node.url, 'eth_getLogs', [{ fromBlock: block.number, toBlock: block.number }])
  assert.deepEqual(logs, all.flatMap((r) => r.logs))
})
