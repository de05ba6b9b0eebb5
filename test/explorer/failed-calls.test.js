// A call or creation that fails before its frame starts (more value than the caller holds) still makes
// its target appear in the transaction's history, as geth's and Erigon's tracers enter such a call: the
// explorer's address index records a CALL's target and a CREATE's address as the opcode runs, not only
// the frames @ethereumjs reports. A
// SELFDESTRUCT in a static frame fails in its gas check, before its handler runs: its beneficiary is not
// in the history.

import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { Wallet, getCreate2Address, getCreateAddress, keccak256, zeroPadValue } from 'ethers'
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

const BENEFICIARY = '0x00000000000000000000000000000000000be4e0'

async function send(wallet, nonce, data) {
  const raw = await wallet.signTransaction({ type: 2, chainId: CHAIN_ID, nonce, maxFeePerGas: 10n ** 11n, maxPriorityFeePerGas: 10n ** 9n, gasLimit: 300_000n, data })
  const hash = await rpcResult(node.url, 'eth_sendRawTransaction', [raw])
  return { hash, receipt: await receiptOf(hash) }
}

const history = async (address) => (await rpcResult(node.url, 'ots_searchTransactionsBefore', [address, 0, 25])).txs.map((tx) => tx.hash)

async function receiptOf(hash) {
  for (let i = 0; i < 100; i++) {
    const receipt = await rpcResult(node.url, 'eth_getTransactionReceipt', [hash])
    if (receipt !== null) return receipt
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`${hash} not mined within 10 s`)
}

test('the target of a call that failed for want of balance is in the address index', async () => {
  const { hash, receipt } = await send(new Wallet(DEV_KEYS[7]), 0, INIT)
  // the creation succeeds: a failed CALL only pushes 0
  assert.equal(receipt.status, '0x1')
  for (const address of [TARGET, OTHER]) assert.deepEqual(await history(address), [hash], address)
  // an address no opcode named has no history
  assert.deepEqual(await history('0x00000000000000000000000000000000000b0b00'), [])
})

test('the address a CREATE or CREATE2 would have made, when it fails for want of balance, is in the address index', async () => {
  const wallet = new Wallet(DEV_KEYS[9])
  // init code that CREATEs with 1 wei and empty code (length 0, offset 0, value 1), then CREATE2s the same
  // with salt 42, while the contract being created holds nothing: both fail at once, no frame
  const { hash, receipt } = await send(wallet, 0, '0x600060006001f050602a600060006001f55000')
  assert.equal(receipt.status, '0x1')
  const creator = getCreateAddress({ from: wallet.address, nonce: 0 })
  // a contract's nonce starts at 1 (EIP-161), and a failed CREATE does not raise it
  const created = getCreateAddress({ from: creator, nonce: 1 })
  const created2 = getCreate2Address(creator, zeroPadValue('0x2a', 32), keccak256('0x'))
  for (const address of [created, created2]) assert.deepEqual(await history(address), [hash], address)
  for (const address of [created, created2]) assert.equal(await rpcResult(node.url, 'eth_getCode', [address, 'latest']), '0x')
})

test('the beneficiary of a SELFDESTRUCT in a static frame is not in the address index', async () => {
  const wallet = new Wallet(DEV_KEYS[8])
  // a contract whose code is SELFDESTRUCT(BENEFICIARY): init code copies the 22 bytes after it and returns them
  const runtime = `73${BENEFICIARY.slice(2)}ff`
  const deployed = await send(wallet, 0, `0x6016600c60003960166000f3${runtime}`)
  assert.equal(deployed.receipt.status, '0x1')
  const killer = getCreateAddress({ from: wallet.address, nonce: 0 })
  // init code that STATICCALLs it (the SELFDESTRUCT fails inside the static frame) and stops
  const { hash, receipt } = await send(wallet, 1, `0x600060006000600073${killer.slice(2).toLowerCase()}61fffffa5000`)
  assert.equal(receipt.status, '0x1')
  assert.deepEqual(await history(killer), [hash, deployed.hash])
  assert.deepEqual(await history(BENEFICIARY), [])
})
