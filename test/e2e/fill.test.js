// eth_fillTransaction (execution-apis, as geth's TransactionArgs.setDefaults fills a transaction): the
// filled, unsigned transaction is what ethers serialises from the same fields, and once signed it is
// mined as it is; refusals in geth's words.

import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { ContractFactory, JsonRpcProvider, Transaction, Wallet, decodeRlp, encodeRlp, keccak256 } from 'ethers'
import { compile } from '../helpers/contracts.js'
import { CHAIN_ID, DEV_ADDRESSES, DEV_KEYS, startNode } from '../helpers/node.js'
import { rpc, rpcResult, waitForReceipt } from '../helpers/rpc.js'
import { validateMethodResult } from '../helpers/schema.js'

let node
let provider
let reverter
const wallet = new Wallet(DEV_KEYS[4])
const RECIPIENT = DEV_ADDRESSES[9]

before(async () => {
  node = await startNode({ blockTime: 1 })
  provider = new JsonRpcProvider(node.url, CHAIN_ID, { staticNetwork: true, pollingInterval: 250 })
  const { Reverter } = compile()
  const deployed = await new ContractFactory(Reverter.abi, Reverter.bytecode, new Wallet(DEV_KEYS[5], provider)).deploy()
  await deployed.waitForDeployment()
  reverter = { address: await deployed.getAddress(), iface: deployed.interface }
})

after(async () => {
  provider?.destroy()
  await node?.stop()
})

const fill = (tx) => rpc(node.url, 'eth_fillTransaction', [tx])

/** geth's encoding of an unsigned typed transaction: ethers' signing payload with empty v, r, s appended. */
function withEmptySignature(unsigned) {
  const fields = decodeRlp(`0x${unsigned.slice(4)}`)
  return `${unsigned.slice(0, 4)}${encodeRlp([...fields, '0x', '0x', '0x']).slice(2)}`
}

/** ethers' transaction from the filled JSON fields (not from `raw`, which is what it is compared with). */
function ethersTx(json) {
  return Transaction.from({
    type: Number(json.type),
    chainId: json.chainId === undefined ? undefined : BigInt(json.chainId),
    nonce: Number(json.nonce),
    to: json.to,
    gasLimit: BigInt(json.gas),
    gasPrice: json.type === '0x0' || json.type === '0x1' ? BigInt(json.gasPrice) : undefined,
    maxFeePerGas: json.maxFeePerGas === undefined ? undefined : BigInt(json.maxFeePerGas),
    maxPriorityFeePerGas: json.maxPriorityFeePerGas === undefined ? undefined : BigInt(json.maxPriorityFeePerGas),
    value: BigInt(json.value),
    data: json.input,
    accessList: json.accessList,
  })
}

test('a transfer: fee-market defaults, the pending nonce, 21000 gas; ethers serialises the same bytes, and signed it is mined', async () => {
  const before = await rpcResult(node.url, 'eth_getBlockByNumber', ['latest', false])
  const { result, error } = await fill({ from: wallet.address, to: RECIPIENT, value: '0x2a' })
  assert.equal(error, undefined)
  const after = await rpcResult(node.url, 'eth_getBlockByNumber', ['latest', false])
  validateMethodResult('eth_fillTransaction', result)
  const { tx, raw } = result
  assert.equal(tx.type, '0x2')
  assert.equal(tx.chainId, '0x600d')
  assert.equal(tx.nonce, await rpcResult(node.url, 'eth_getTransactionCount', [wallet.address, 'pending']))
  assert.equal(tx.gas, '0x5208')
  assert.equal(tx.value, '0x2a')
  assert.equal(tx.to, RECIPIENT.toLowerCase())
  // geth's defaults: the oracle's tip, and a max fee that leaves room for the base fee to double
  const tip = BigInt(tx.maxPriorityFeePerGas)
  assert.equal(tip, BigInt(await rpcResult(node.url, 'eth_maxPriorityFeePerGas')))
  const room = BigInt(tx.maxFeePerGas) - tip
  assert.ok([before, after].some((b) => room === 2n * BigInt(b.baseFeePerGas)), `max fee - tip = ${room}, base fees ${before.baseFeePerGas} / ${after.baseFeePerGas}`)
  assert.deepEqual([tx.v, tx.r, tx.s, tx.yParity], ['0x0', '0x0', '0x0', '0x0'])
  assert.equal(withEmptySignature(ethersTx(tx).unsignedSerialized), raw, 'raw is the EIP-1559 encoding of these fields with empty signature values')
  assert.equal(tx.hash, keccak256(raw))

  const signed = await wallet.signTransaction(ethersTx(tx))
  const hash = await rpcResult(node.url, 'eth_sendRawTransaction', [signed])
  const receipt = await waitForReceipt(node.url, hash)
  assert.equal(receipt.status, '0x1')
  assert.equal(BigInt(await rpcResult(node.url, 'eth_getBalance', [RECIPIENT, receipt.blockNumber])) >= 42n, true)
})

test('the nonce counts transactions still in the pool', async () => {
  const { result: first } = await fill({ from: wallet.address, to: RECIPIENT })
  const signed = await wallet.signTransaction(ethersTx(first.tx))
  const hash = await rpcResult(node.url, 'eth_sendRawTransaction', [signed])
  const { result: second } = await fill({ from: wallet.address, to: RECIPIENT })
  assert.equal(BigInt(second.tx.nonce), BigInt(first.tx.nonce) + 1n)
  await waitForReceipt(node.url, hash)
})

test('gasPrice makes a legacy transaction (9 RLP fields, empty signature); with an access list, EIP-2930; a creation gets its gas estimated', async () => {
  const { result: legacy } = await fill({ from: wallet.address, to: RECIPIENT, gasPrice: '0x3b9aca00' })
  validateMethodResult('eth_fillTransaction', legacy)
  assert.equal(legacy.tx.type, '0x0')
  assert.equal(legacy.tx.gasPrice, '0x3b9aca00')
  assert.equal(legacy.tx.chainId, undefined, 'an unsigned legacy transaction carries no chain id, as geth prints it')
  const fields = decodeRlp(legacy.raw)
  assert.equal(fields.length, 9)
  assert.deepEqual(fields.slice(6), ['0x', '0x', '0x'])

  const { result: create } = await fill({ from: wallet.address, input: '0x6001600055', gasPrice: '0x3b9aca00', accessList: [] })
  validateMethodResult('eth_fillTransaction', create)
  assert.equal(create.tx.type, '0x1')
  assert.equal(create.tx.to, null)
  assert.equal(withEmptySignature(ethersTx(create.tx).unsignedSerialized), create.raw)
  const estimate = await rpcResult(node.url, 'eth_estimateGas', [{ from: wallet.address, input: '0x6001600055', gasPrice: '0x3b9aca00', accessList: [] }])
  assert.equal(create.tx.gas, estimate)
})

test('an EIP-7702 authorization list makes a set-code transaction', async () => {
  const authorization = { chainId: '0x600d', address: RECIPIENT, nonce: '0x0', yParity: '0x1', r: '0x1', s: '0x2' }
  const { result, error } = await fill({ from: wallet.address, to: wallet.address, authorizationList: [authorization], gas: '0x186a0' })
  assert.equal(error, undefined)
  validateMethodResult('eth_fillTransaction', result)
  assert.equal(result.tx.type, '0x4')
  assert.equal(result.tx.gas, '0x186a0', 'a gas limit given is kept')
  assert.equal(result.tx.authorizationList.length, 1)
  assert.equal(result.tx.authorizationList[0].address, RECIPIENT.toLowerCase())
  assert.ok(result.raw.startsWith('0x04'))
})

test("refusals in geth's words; a reverting estimate answers as eth_estimateGas does", async () => {
  const expectError = async (tx, code, message) => {
    const { error } = await fill(tx)
    assert.equal(error?.code, code, JSON.stringify(error))
    assert.equal(error.message, message)
  }
  await expectError({ to: RECIPIENT, gasPrice: '0x1', maxFeePerGas: '0x2' }, -32000, 'both gasPrice and (maxFeePerGas or maxPriorityFeePerGas) specified')
  await expectError({ to: RECIPIENT, maxFeePerGas: '0x1', maxPriorityFeePerGas: '0x2' }, -32000, 'maxFeePerGas (0x1) < maxPriorityFeePerGas (0x2)')
  await expectError({ to: RECIPIENT, maxFeePerGas: '0x0', maxPriorityFeePerGas: '0x0' }, -32000, 'maxFeePerGas must be non-zero')
  await expectError({ to: RECIPIENT, gasPrice: '0x0' }, -32000, 'gasPrice must be non-zero after london fork')
  await expectError({ from: wallet.address }, -32000, 'contract creation without any data provided')
  await expectError({ to: RECIPIENT, chainId: '0x1' }, -32000, "chainId does not match node's (have=1, want=24589)")
  await expectError({ to: RECIPIENT, nonce: '0xffffffffffffffff', gas: '0x5208' }, -32000, 'nonce cannot equal or exceed MAX_UINT64 (2^64-1), given 18446744073709551615')
  await expectError({ to: RECIPIENT, gas: '0x5208', maxFeePerGas: `0x8${'0'.repeat(63)}`, maxPriorityFeePerGas: '0x1' }, -32000, 'gasLimit * maxFeePerGas cannot exceed MAX_INTEGER (2^256-1)')
  await expectError({ to: RECIPIENT, blobVersionedHashes: [`0x01${'0'.repeat(62)}`] }, -32000, 'transaction type not supported')
  const { error } = await fill({ from: wallet.address, to: reverter.address, input: reverter.iface.encodeFunctionData('failRequire', []) })
  const viaEstimate = await rpc(node.url, 'eth_estimateGas', [{ from: wallet.address, to: reverter.address, input: reverter.iface.encodeFunctionData('failRequire', []) }])
  assert.equal(error?.code, 3)
  assert.deepEqual(error, viaEstimate.error)
  // nothing was sent: the sender's nonce did not move
  assert.equal(await rpcResult(node.url, 'eth_getTransactionCount', [DEV_ADDRESSES[6], 'pending']), '0x0')
})
