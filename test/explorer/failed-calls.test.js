// A call that fails before its frame starts (more value than the caller holds) still makes its target
// appear in the transaction's history, as geth's and Erigon's tracers enter such a call: the explorer's
// address index records a CALL's target as the opcode runs, not only the frames @ethereumjs reports.

import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { Wallet } from 'ethers'
import { CHAIN_ID, DEV_KEYS, startNode } from '../helpers/node.js'
import { rpcResult } from '../helpers/rpc.js'

const TARGET = '0x00000000000000000000000000000000000fa11d'
const OTHER = '0x00000000000000000000000000000000000c0de5'

// Init code that CALLs TARGET with 1 wei while the contract being created holds nothing (the call fails
// at once, no frame), then CALLs OTHER with no value (a frame), and stops: PUSH1 0 x4, PUSH1 value,
// PUSH20 to, PUSH2 gas, CALL, POP.
const call = (to, value) => `600060006000600060${value}73${to.slice(2)}61fffff150`
const INIT = `0x${call(TARGET, '01')}${call(OTHER, '00')}00`

let node
before(async () => {
  node = await startNode({ dev: true, blockTime: 1 })
})
after(() => node?.stop())

async function receiptOf(hash) {
  for (let i = 0; i < 100; i++) {
    const receipt = await rpcResult(node.url, 'eth_getTransactionReceipt', [hash])
    if (receipt !== null) return receipt
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`${hash} not mined within 10 s`)
}

test('the target of a call that failed for want of balance is in the address index', async () => {
  const wallet = new Wallet(DEV_KEYS[7])
  const raw = await wallet.signTransaction({ type: 2, chainId: CHAIN_ID, nonce: 0, maxFeePerGas: 10n ** 11n, maxPriorityFeePerGas: 10n ** 9n, gasLimit: 300_000n, data: INIT })
  const hash = await rpcResult(node.url, 'eth_sendRawTransaction', [raw])
  const receipt = await receiptOf(hash)
  // the creation succeeds: a failed CALL only pushes 0
  assert.equal(receipt.status, '0x1')
  for (const address of [TARGET, OTHER]) {
    const page = await rpcResult(node.url, 'ots_searchTransactionsBefore', [address, 0, 25])
    assert.deepEqual(page.txs.map((tx) => tx.hash), [hash], address)
  }
  // an address no opcode named has no history
  const none = await rpcResult(node.url, 'ots_searchTransactionsBefore', ['0x00000000000000000000000000000000000b0b00', 0, 25])
  assert.deepEqual(none.txs, [])
})
