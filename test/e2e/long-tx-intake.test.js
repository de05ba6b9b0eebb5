// A block whose transactions run long (loops until their gas runs out) must not hold up the producer's
// other work: eth_sendRawTransaction is answered while such a block is built, and what was sent
// meanwhile is mined after it, none lost.

import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { Wallet } from 'ethers'
import { CHAIN_ID, DEV_ADDRESSES, DEV_KEYS, startNode } from '../helpers/node.js'
import { rpcResult } from '../helpers/rpc.js'

const GWEI = 10n ** 9n
// init code returning JUMPDEST PUSH1 32 PUSH1 0 KECCAK256 POP PUSH1 0 JUMP: hashes until its gas runs out
const LOOPER_INIT = '0x6a5b6020600020505b600056600052600b6015f3'
// EIP-7825's cap on one transaction's gas (2^24), about 0.8 s of that loop here
const HEAVY_GAS = 16_000_000n
const fees = { type: 2, chainId: CHAIN_ID, maxFeePerGas: 10n * GWEI, maxPriorityFeePerGas: GWEI }

let node
before(async () => {
  node = await startNode()
})
after(async () => {
  await node?.stop()
})

async function mined(hash) {
  for (let i = 0; i < 300; i++) {
    const receipt = await rpcResult(node.url, 'eth_getTransactionReceipt', [hash])
    if (receipt !== null) return receipt
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`${hash} not mined`)
}

const nonceOf = async (wallet) => Number(BigInt(await rpcResult(node.url, 'eth_getTransactionCount', [wallet.address, 'pending'])))

test('eth_sendRawTransaction answers while a block of long-running transactions is built', async () => {
  const deployer = new Wallet(DEV_KEYS[0])
  const deploy = await rpcResult(node.url, 'eth_sendRawTransaction', [
    await deployer.signTransaction({ ...fees, nonce: await nonceOf(deployer), data: LOOPER_INIT, gasLimit: 200_000n }),
  ])
  const looper = (await mined(deploy)).contractAddress
  assert.equal(await rpcResult(node.url, 'eth_getCode', [looper, 'latest']), '0x5b6020600020505b600056')

  const sender = new Wallet(DEV_KEYS[5])
  let nonce = await nonceOf(sender)
  const transfers = []
  for (let i = 0; i < 60; i++) transfers.push(await sender.signTransaction({ ...fees, nonce: nonce++, to: DEV_ADDRESSES[9], value: 1n, gasLimit: 21_000n }))
  const heavy = []
  for (const key of DEV_KEYS.slice(1, 4)) {
    const wallet = new Wallet(key)
    const raw = await wallet.signTransaction({ ...fees, nonce: await nonceOf(wallet), to: looper, gasLimit: HEAVY_GAS })
    heavy.push(await rpcResult(node.url, 'eth_sendRawTransaction', [raw]))
  }
  let heavyMined = false
  const heavyReceipts = Promise.all(heavy.map(mined)).finally(() => {
    heavyMined = true
  })
  // one transfer every 50 ms until the long transactions are mined: some are sent while they run
  const latencies = []
  const sent = []
  while (!heavyMined && transfers.length > 0) {
    const startedAt = performance.now()
    sent.push(await rpcResult(node.url, 'eth_sendRawTransaction', [transfers.shift()]))
    latencies.push(performance.now() - startedAt)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  for (const receipt of await heavyReceipts) {
    assert.equal(receipt.status, '0x0', 'the loop runs out of gas')
    assert.equal(BigInt(receipt.gasUsed), HEAVY_GAS)
  }
  assert.ok(latencies.length >= 10, `${latencies.length} transfers sent while the long transactions were pending`)
  const slowest = Math.max(...latencies)
  assert.ok(slowest < 400, `an eth_sendRawTransaction waited ${Math.round(slowest)} ms for a block to be built`)
  for (const hash of sent) assert.equal((await mined(hash)).status, '0x1')
})
