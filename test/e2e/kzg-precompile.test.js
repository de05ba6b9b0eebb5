// EIP-4844's point evaluation precompile (0x0a) through ethers against a real node: a valid proof (the
// test vector of geth's and revm's precompile tests) answers FIELD_ELEMENTS_PER_BLOB and the BLS modulus,
// in eth_call and in a mined transaction; a bad proof fails the call, and a transaction sending one is
// mined with status 0 and all its gas used, as geth mines it (not dropped from the block).

import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { JsonRpcProvider, Wallet } from 'ethers'
import { CHAIN_ID, DEV_KEYS, startNode } from '../helpers/node.js'

const POINT_EVALUATION = '0x000000000000000000000000000000000000000a'
// versioned hash ‖ z ‖ y ‖ commitment ‖ proof
const VALID_INPUT =
  '0x01e798154708fe7789429634053cbf9f99b619f9f084048927333fce637f549b' +
  '564c0a11a0f704f4fc3e8acfe0f8245f0ad1347b378fbf96e206da11a5d36306' +
  '24d25032e67a7e6a4910df5834b8fe70e6bcfeeac0352434196bdf4b2485d5a1' +
  '8f59a8d2a1a625a17f3fea0fe5eb8c896db3764f3185481bc22f91b4aaffcca25f26936857bc3a7c2539ea8ec3a952b7' +
  '873033e038326e87ed3e1276fd140253fa08e9fc25fb2d9a98527fc22a2c9612fbeafdad446cbc7bcdbdcd780af2c16a'
// 4096 field elements per blob, then the BLS12-381 scalar field modulus
const VALID_OUTPUT =
  '0x0000000000000000000000000000000000000000000000000000000000001000' +
  '73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001'
// the same input with the proof's last byte changed
const BAD_INPUT = `${VALID_INPUT.slice(0, -2)}6b`

let node
let provider
let wallet

before(async () => {
  node = await startNode({ blockTime: 1 })
  provider = new JsonRpcProvider(node.url, CHAIN_ID, { staticNetwork: true, pollingInterval: 200 })
  wallet = new Wallet(DEV_KEYS[3], provider)
})

after(async () => {
  provider?.destroy()
  await node?.stop()
})

test('point evaluation: eth_call verifies a valid proof and refuses a bad one', async () => {
  assert.equal(await provider.call({ to: POINT_EVALUATION, data: VALID_INPUT }), VALID_OUTPUT)
  await assert.rejects(provider.call({ to: POINT_EVALUATION, data: BAD_INPUT }))
  await assert.rejects(provider.call({ to: POINT_EVALUATION, data: '0x00' }), 'an input of the wrong length')
})

test('point evaluation: transactions are mined, with status 1 for a valid proof and 0 for a bad one', async () => {
  const nonce = await provider.getTransactionCount(wallet.address, 'pending')
  const good = await wallet.sendTransaction({ to: POINT_EVALUATION, data: VALID_INPUT, gasLimit: 200_000n, nonce })
  const bad = await wallet.sendTransaction({ to: POINT_EVALUATION, data: BAD_INPUT, gasLimit: 200_000n, nonce: nonce + 1 })
  const goodReceipt = await good.wait()
  assert.equal(goodReceipt.status, 1)
  // 21,000 + calldata + the precompile's 50,000
  assert.ok(goodReceipt.gasUsed > 71_000n && goodReceipt.gasUsed < 200_000n, `gas used ${goodReceipt.gasUsed}`)
  const badReceipt = await provider.waitForTransaction(bad.hash, 1, 20_000)
  assert.ok(badReceipt, 'the transaction with a bad proof was mined')
  assert.equal(badReceipt.status, 0)
  assert.equal(badReceipt.gasUsed, 200_000n, 'a failed precompile call uses all the gas it was given')
  assert.equal(await provider.getTransactionCount(wallet.address, 'latest'), nonce + 2)
})
