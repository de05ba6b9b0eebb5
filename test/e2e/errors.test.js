// Every JSON-RPC error shape over raw HTTP: exact codes, and messages worded as geth words them
// (ethers, viem and web3.js match these strings). Regexes only stand in for numeric parts.

import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import {
  AbiCoder,
  ContractFactory,
  Interface,
  JsonRpcProvider,
  SigningKey,
  Transaction,
  Wallet,
  concat,
  encodeRlp,
  id as keccakText,
  keccak256,
  parseEther,
  parseUnits,
  toBeArray,
} from 'ethers'
import { compile } from '../helpers/contracts.js'
import { CHAIN_ID, DEV_ADDRESSES, DEV_KEYS, startNode } from '../helpers/node.js'
import { rawPost, rpc, rpcResult, waitForBlock, waitForReceipt } from '../helpers/rpc.js'

const { Reverter } = compile()
const GWEI = 1_000_000_000n
/** EIP-7825 (Osaka): no transaction may carry more gas than 2^24. */
const MAX_TX_GAS = 16_777_216n

let node
let provider
let reverterAddress

before(async () => {
  node = await startNode({ blockTime: 1 })
  provider = new JsonRpcProvider(node.url, CHAIN_ID, { staticNetwork: true, pollingInterval: 250 })
  const deployer = new Wallet(DEV_KEYS[4], provider)
  const reverter = await new ContractFactory(Reverter.abi, Reverter.bytecode, deployer).deploy()
  await reverter.waitForDeployment()
  reverterAddress = await reverter.getAddress()
})

after(async () => {
  provider?.destroy()
  await node?.stop()
})

function assertError(response, code, message) {
  assert.ok(response.error, `expected an error, got ${JSON.stringify(response)}`)
  assert.equal(response.jsonrpc, '2.0')
  assert.equal(response.error.code, code, `code of ${JSON.stringify(response.error)}`)
  if (message instanceof RegExp) assert.match(response.error.message, message)
  else assert.equal(response.error.message, message)
  assert.equal('result' in response, false)
}

async function currentFees() {
  const block = await rpcResult(node.url, 'eth_getBlockByNumber', ['latest', false])
  const baseFee = BigInt(block.baseFeePerGas)
  const maxPriorityFeePerGas = GWEI
  return { baseFee, gasLimit: BigInt(block.gasLimit), maxPriorityFeePerGas, maxFeePerGas: baseFee * 2n + maxPriorityFeePerGas }
}

async function nextNonce(address) {
  return Number(BigInt(await rpcResult(node.url, 'eth_getTransactionCount', [address, 'pending'])))
}

/** Signs an EIP-1559 transfer with ethers; `overrides` replace any field. */
async function signTransfer(key, overrides = {}) {
  const wallet = new Wallet(key)
  const fees = await currentFees()
  return wallet.signTransaction({
    type: 2,
    chainId: CHAIN_ID,
    nonce: await nextNonce(wallet.address),
    to: DEV_ADDRESSES[9],
    value: 1n,
    gasLimit: 21000n,
    maxFeePerGas: fees.maxFeePerGas,
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    ...overrides,
  })
}

/** A type-2 transaction encoded by hand: ethers refuses to sign a tip above the fee cap. */
function signRawDynamicFee(key, { nonce, maxPriorityFeePerGas, maxFeePerGas, gasLimit, to, value }) {
  const quantity = (n) => (n === 0n ? '0x' : toBeArray(n))
  const fields = [quantity(BigInt(CHAIN_ID)), quantity(BigInt(nonce)), quantity(maxPriorityFeePerGas), quantity(maxFeePerGas), quantity(gasLimit), to, quantity(value), '0x', []]
  const signature = new SigningKey(key).sign(keccak256(concat(['0x02', encodeRlp(fields)])))
  return concat(['0x02', encodeRlp([...fields, quantity(BigInt(signature.yParity)), toBeArray(signature.r), toBeArray(signature.s)])])
}

const sendRaw = (raw) => rpc(node.url, 'eth_sendRawTransaction', [raw])

// --- Envelope errors -------------------------------------------------------------------------

test('malformed JSON -> -32700 parse error with id null', async () => {
  const { json } = await rawPost(node.url, '{"jsonrpc":"2.0","id":1,"method":"eth_chainId",')
  assertError(json, -32700, 'parse error')
  assert.equal(json.id, null)
})

test('a request without a method -> -32600', async () => {
  const { json } = await rawPost(node.url, { jsonrpc: '2.0', id: 1 })
  assertError(json, -32600, 'invalid request')
})

test('an empty batch [] -> a single -32600 error', async () => {
  const { json } = await rawPost(node.url, '[]')
  assert.equal(Array.isArray(json), false, 'an empty batch answers one error object, not an array')
  assertError(json, -32600, /^(empty batch|invalid request)$/)
  assert.equal(json.id, null)
})

test('the batch [1,2] -> an array of two -32600 errors', async () => {
  const { json } = await rawPost(node.url, '[1,2]')
  assert.ok(Array.isArray(json), `expected an array, got ${JSON.stringify(json)}`)
  assert.equal(json.length, 2)
  for (const item of json) {
    assertError(item, -32600, 'invalid request')
    assert.equal(item.id, null)
  }
})

test('an unknown method -> -32601 with geth wording', async () => {
  assertError(await rpc(node.url, 'foo_bar', []), -32601, 'the method foo_bar does not exist/is not available')
})

test('a malformed address -> -32602 naming argument 0', async () => {
  assertError(await rpc(node.url, 'eth_getBalance', ['0x1234', 'latest']), -32602, /^invalid argument 0: /)
})

test("a bad storage key in eth_getStorageAt / eth_getProof: geth's decodeHash errors (execution-apis get-storage-invalid-key*)", async () => {
  const at = (key) => rpc(node.url, 'eth_getStorageAt', ['0xaa00000000000000000000000000000000000000', key, 'latest'])
  assertError(await at('0xasdf'), -32602, 'invalid hex in storage key: "0xasdf"')
  assertError(await at(`0x${'0'.repeat(65)}`), -32602, `storage key too long (want at most 32 bytes): "0x${'0'.repeat(65)}"`)
  assertError(await at(7), -32602, 'invalid argument 1: json: cannot unmarshal number into Go value of type string')
  // an odd digit count is padded, as geth pads it; 64 digits is the whole slot
  assert.equal((await at('0x1')).result, `0x${'0'.repeat(64)}`)
  assert.equal((await at(`0x${'0'.repeat(64)}`)).result, `0x${'0'.repeat(64)}`)
  const proof = await rpc(node.url, 'eth_getProof', ['0xaa00000000000000000000000000000000000000', ['0xzz'], 'latest'])
  assertError(proof, -32000, 'hex string invalid')
})

test("eth_getStorageValues: geth's empty-request and slot-limit errors (execution-apis get-storage-values-empty-request), keys as the schema's bytesMax32", async () => {
  const values = (requests) => rpc(node.url, 'eth_getStorageValues', [requests, 'latest'])
  const a = '0xaa00000000000000000000000000000000000000'
  assertError(await values({}), -32602, 'empty request')
  assertError(await values({ [a]: [] }), -32602, 'empty request')
  assertError(await values(null), -32602, 'empty request')
  const many = Array.from({ length: 513 }, (_, i) => `0x${i.toString(16)}`)
  assertError(await values({ [a]: many, '0xbb00000000000000000000000000000000000000': many }), -38026, 'too many slots (max 1024)')
  assert.equal((await values({ [a]: many.slice(0, 511), '0xbb00000000000000000000000000000000000000': many })).result['0xbb00000000000000000000000000000000000000'].length, 513, 'exactly 1024 slots are served')
  assertError(await values({ '0xaa00': ['0x0'] }), -32602, 'invalid argument 0: hex string has length 4, want 40 for Address')
  assertError(await values({ aa00000000000000000000000000000000000000: ['0x0'] }), -32602, 'invalid argument 0: hex string without 0x prefix')
  assertError(await values({ [a]: '0x0' }), -32602, 'invalid argument 0: json: cannot unmarshal string into Go value of type []common.Hash')
  assertError(await values({ [a]: ['0xzz'] }), -32602, 'invalid argument 0: json: cannot unmarshal invalid hex string into Go value of type common.Hash')
  assertError(await values({ [a]: [`0x${'0'.repeat(65)}`] }), -32602, /^invalid argument 0: hex string has length 65/)
  assertError(await values([a]), -32602, 'invalid argument 0: json: cannot unmarshal array into Go value of type map[common.Address][]common.Hash')
  // a checksummed address answers under the key the client wrote; a short key is left-padded
  const checksummed = '0xAa00000000000000000000000000000000000000'
  assert.deepEqual((await values({ [checksummed]: ['0x1', `0x${'0'.repeat(64)}`] })).result, { [checksummed]: [`0x${'0'.repeat(64)}`, `0x${'0'.repeat(64)}`] })
})

test('eth_getLogs past the head (either end) -> -32602, as execution-apis filter-error-future-block-range; eth_newFilter reversed -> -32000', async () => {
  const head = BigInt(await rpcResult(node.url, 'eth_blockNumber', []))
  const hex = (n) => `0x${n.toString(16)}`
  assertError(await rpc(node.url, 'eth_getLogs', [{ fromBlock: '0x0', toBlock: hex(head + 1000n) }]), -32602, 'block range extends beyond current head block')
  assertError(await rpc(node.url, 'eth_getLogs', [{ fromBlock: hex(head + 100n), toBlock: hex(head + 200n) }]), -32602, 'block range extends beyond current head block')
  assert.ok(Array.isArray(await rpcResult(node.url, 'eth_getLogs', [{ fromBlock: '0x0', toBlock: hex(head) }])))
  assertError(await rpc(node.url, 'eth_newFilter', [{ fromBlock: '0x5', toBlock: '0x2' }]), -32000, 'invalid from and to block combination: from > to')
})

test('eth_getLogs with fromBlock > toBlock -> -32602 invalid block range params', async () => {
  await waitForBlock(node.url, 2)
  assertError(await rpc(node.url, 'eth_getLogs', [{ fromBlock: '0x2', toBlock: '0x1' }]), -32602, 'invalid block range params')
})

test('eth_getBlockTransactionCountByNumber of a future block -> null', async () => {
  const response = await rpc(node.url, 'eth_getBlockTransactionCountByNumber', ['0xffffffff'])
  assert.equal(response.error, undefined)
  assert.equal(response.result, null)
})

test('eth_getBalance with the block parameter omitted means latest', async () => {
  const omitted = await rpcResult(node.url, 'eth_getBalance', [DEV_ADDRESSES[8]])
  const latest = await rpcResult(node.url, 'eth_getBalance', [DEV_ADDRESSES[8], 'latest'])
  assert.equal(omitted, latest)
  assert.equal(BigInt(omitted), parseEther('10000'))
})

test('ids are echoed: number, string and null', async () => {
  for (const id of [7, 'abc-1', null]) {
    const { json } = await rawPost(node.url, { jsonrpc: '2.0', id, method: 'eth_chainId', params: [] })
    assert.deepEqual(json, { jsonrpc: '2.0', id, result: '0x600d' })
  }
  const { json: batch } = await rawPost(node.url, [
    { jsonrpc: '2.0', id: 'first', method: 'eth_chainId', params: [] },
    { jsonrpc: '2.0', id: 2, method: 'foo_bar', params: [] },
  ])
  assert.equal(batch.length, 2)
  const byId = new Map(batch.map((item) => [item.id, item]))
  assert.equal(byId.get('first').result, '0x600d')
  assertError(byId.get(2), -32601, 'the method foo_bar does not exist/is not available')
})

test('a notification gets no answer', async () => {
  const single = await rawPost(node.url, { jsonrpc: '2.0', method: 'eth_chainId', params: [] })
  assert.ok(single.status >= 200 && single.status < 300, `HTTP ${single.status}`)
  assert.equal(single.text, '')

  const { json } = await rawPost(node.url, [
    { jsonrpc: '2.0', method: 'eth_chainId', params: [] },
    { jsonrpc: '2.0', id: 5, method: 'eth_chainId', params: [] },
  ])
  assert.deepEqual(json, [{ jsonrpc: '2.0', id: 5, result: '0x600d' }])

  const onlyNotifications = await rawPost(node.url, [{ jsonrpc: '2.0', method: 'eth_chainId', params: [] }])
  assert.equal(onlyNotifications.text, '')
})

// --- Reverts ---------------------------------------------------------------------------------

const reverterIface = () => new Interface(Reverter.abi)

test('a require() revert in eth_call -> code 3 "execution reverted: nope" with the Error(string) data', async () => {
  const data = reverterIface().encodeFunctionData('failRequire')
  const expectedData = concat([keccakText('Error(string)').slice(0, 10), AbiCoder.defaultAbiCoder().encode(['string'], ['nope'])])
  const call = await rpc(node.url, 'eth_call', [{ to: reverterAddress, data }, 'latest'])
  assertError(call, 3, 'execution reverted: nope')
  assert.equal(call.error.data, expectedData)

  const estimate = await rpc(node.url, 'eth_estimateGas', [{ from: DEV_ADDRESSES[4], to: reverterAddress, data }])
  assertError(estimate, 3, 'execution reverted: nope')
  assert.equal(estimate.error.data, expectedData)
})

test('an empty revert -> code 3 "execution reverted" with data 0x', async () => {
  const call = await rpc(node.url, 'eth_call', [{ to: reverterAddress, data: reverterIface().encodeFunctionData('failEmpty') }, 'latest'])
  assertError(call, 3, 'execution reverted')
  assert.equal(call.error.data, '0x')
})

test('a custom error revert -> code 3 "execution reverted" with the encoded error as data', async () => {
  const iface = reverterIface()
  const call = await rpc(node.url, 'eth_call', [{ to: reverterAddress, data: iface.encodeFunctionData('failCustom', [7]) }, 'latest'])
  assertError(call, 3, 'execution reverted')
  assert.equal(call.error.data, iface.encodeErrorResult('Bad', [7]))
})

test('a panic revert -> code 3 with the Panic(uint256) data', async () => {
  const call = await rpc(node.url, 'eth_call', [{ to: reverterAddress, data: reverterIface().encodeFunctionData('failPanic') }, 'latest'])
  assert.equal(call.error?.code, 3)
  assert.match(call.error.message, /^execution reverted/)
  assert.equal(call.error.data, concat([keccakText('Panic(uint256)').slice(0, 10), AbiCoder.defaultAbiCoder().encode(['uint256'], [0x12])]))
})

// --- eth_call / eth_estimateGas: halts and refused messages, in geth's words -----------------------

const SCRATCH = '0x00000000000000000000000000000000000c0de5'
const callCode = (code, extra = {}) => rpc(node.url, 'eth_call', [{ to: SCRATCH, ...extra }, 'latest', { [SCRATCH]: { code } }])

test('EVM halts are worded as geth words them (core/vm/errors.go), not as the library does', async () => {
  for (const [code, message] of [
    ['0xfe', 'invalid opcode: INVALID'],
    ['0x0c', 'invalid opcode: opcode 0xc not defined'],
    ['0x600056', 'invalid jump destination'], // PUSH1 0 JUMP
    ['0x01', 'stack underflow (0 <=> 2)'], // ADD on an empty stack
    ['0x60018f', 'stack underflow (1 <=> 16)'], // PUSH1 1 DUP16
    ['0x600160026003f1', 'stack underflow (3 <=> 7)'], // three items for CALL
  ]) {
    assertError(await callCode(code), -32000, message)
  }
  const estimate = await rpc(node.url, 'eth_estimateGas', [{ from: DEV_ADDRESSES[6], to: SCRATCH }, 'latest', { [SCRATCH]: { code: '0xfe' } }])
  assertError(estimate, -32000, 'invalid opcode: INVALID')
})

test('eth_call gets the RPC gas cap (50M), above the EIP-7825 per-transaction cap, as in geth', async () => {
  // GAS PUSH1 0 MSTORE PUSH1 32 PUSH1 0 RETURN: the gas left after the intrinsic 21000 and GAS's own 2
  const call = await callCode('0x5a60005260206000f3')
  assert.equal(BigInt(call.result), 50_000_000n - 21_000n - 2n)
  // also when it names a fee (it then runs as a transaction would, fee charged)
  const fee = { from: DEV_ADDRESSES[6], maxFeePerGas: `0x${(10n * GWEI).toString(16)}`, maxPriorityFeePerGas: '0x1' }
  const paying = await callCode('0x5a60005260206000f3', fee)
  assert.equal(BigInt(paying.result), 50_000_000n - 21_000n - 2n)
})

test('eth_call below the intrinsic gas, then below the EIP-7623 calldata floor: "err: … (supplied gas N)"', async () => {
  // 100 non-zero bytes: intrinsic 21000 + 100 * 16 = 22600, floor 21000 + 400 tokens * 10 = 25000
  const data = `0x${'ff'.repeat(100)}`
  assertError(await callCode('0x', { data, gas: '0x5000' }), -32000, 'err: intrinsic gas too low: have 20480, want 22600 (supplied gas 20480)')
  assertError(await callCode('0x', { data, gas: '0x5a3c' }), -32000, 'err: insufficient gas for floor data gas cost: have 23100, want 25000 (supplied gas 23100)')
})

test('a tip above the fee cap, in eth_call and eth_estimateGas (a tip alone has a fee cap of 0)', async () => {
  const from = DEV_ADDRESSES[6]
  const tipAboveCap = (tip, cap) => `max priority fee per gas higher than max fee per gas: address ${from}, maxPriorityFeePerGas: ${tip}, maxFeePerGas: ${cap}`
  const call = await rpc(node.url, 'eth_call', [{ from, to: DEV_ADDRESSES[9], maxFeePerGas: '0x10', maxPriorityFeePerGas: '0x20', gas: '0x5208' }, 'latest'])
  assertError(call, -32000, `err: ${tipAboveCap(32, 16)} (supplied gas 21000)`)
  const tipOnly = await rpc(node.url, 'eth_call', [{ from, to: DEV_ADDRESSES[9], maxPriorityFeePerGas: '0x1', gas: '0x5208' }, 'latest'])
  assertError(tipOnly, -32000, `err: ${tipAboveCap(1, 0)} (supplied gas 21000)`)
  const estimate = await rpc(node.url, 'eth_estimateGas', [{ from, to: DEV_ADDRESSES[9], maxFeePerGas: '0x10', maxPriorityFeePerGas: '0x20' }])
  assertError(estimate, -32000, new RegExp(`^failed with \\d+ gas: ${tipAboveCap(32, 16)}$`))
})

test('eth_estimateGas of a transfer worth more than the balance fails as geth fails it (not 21000)', async () => {
  const from = DEV_ADDRESSES[7]
  const value = 10n ** 30n
  const noFee = await rpc(node.url, 'eth_estimateGas', [{ from, to: DEV_ADDRESSES[9], value: `0x${value.toString(16)}` }])
  assertError(noFee, -32000, new RegExp(`^failed with \\d+ gas: insufficient funds for gas \\* price \\+ value: address ${from} have \\d+ want ${value}$`))
  // with a fee cap, geth's estimator checks the value against the balance before anything runs
  const withFee = await rpc(node.url, 'eth_estimateGas', [{ from, to: DEV_ADDRESSES[9], value: `0x${value.toString(16)}`, gasPrice: '0x1' }])
  assertError(withFee, -32000, 'insufficient funds for transfer')
  assert.equal(await rpcResult(node.url, 'eth_estimateGas', [{ from, to: DEV_ADDRESSES[9], value: '0x1' }]), '0x5208')
})

test('eth_estimateGas takes a named gas under 21000 as no limit at all, as geth does', async () => {
  const args = { from: DEV_ADDRESSES[6], to: reverterAddress, data: reverterIface().encodeFunctionData('ok') }
  const free = BigInt(await rpcResult(node.url, 'eth_estimateGas', [args]))
  assert.ok(free > 21_000n)
  assert.equal(BigInt(await rpcResult(node.url, 'eth_estimateGas', [{ ...args, gas: '0x5000' }])), free)
  // from 21000 up it is the limit
  assertError(await rpc(node.url, 'eth_estimateGas', [{ ...args, gas: '0x5208' }]), -32000, 'gas required exceeds allowance (21000)')
})

test('a contract may be the sender of eth_call / eth_estimateGas, fees named or not (geth skips EIP-3607 there)', async () => {
  const from = reverterAddress
  const funded = { [from]: { balance: '0x3635c9adc5dea00000' } }
  const fee = { maxFeePerGas: `0x${(100n * GWEI).toString(16)}`, maxPriorityFeePerGas: '0x1' }
  assert.equal(await rpcResult(node.url, 'eth_call', [{ from, to: DEV_ADDRESSES[9], value: '0x1', ...fee }, 'latest', funded]), '0x')
  assert.equal(await rpcResult(node.url, 'eth_estimateGas', [{ from, to: DEV_ADDRESSES[9], value: '0x1', ...fee }, 'latest', funded]), '0x5208')
  // a creation goes through runTx too
  const { Storage } = compile()
  assert.equal(await rpcResult(node.url, 'eth_call', [{ from, data: Storage.bytecode }, 'latest']), Storage.deployedBytecode)
})

test('eth_estimateGas takes block overrides as its fourth parameter, as geth does', async () => {
  // NUMBER PUSH2 0x1000 EQ PUSH1 12 JUMPI PUSH1 0 DUP1 REVERT JUMPDEST STOP: succeeds only in block 0x1000
  const code = `0x${'43' + '611000' + '14' + '600c' + '57' + '6000' + '80' + 'fd' + '5b' + '00'}`
  const args = { from: DEV_ADDRESSES[6], to: SCRATCH }
  const plain = await rpc(node.url, 'eth_estimateGas', [args, 'latest', { [SCRATCH]: { code } }])
  assertError(plain, 3, 'execution reverted')
  const inBlock = await rpcResult(node.url, 'eth_estimateGas', [args, 'latest', { [SCRATCH]: { code } }, { number: '0x1000' }])
  assert.ok(BigInt(inBlock) > 21_000n && BigInt(inBlock) < 22_000n, inBlock)
  assertError(await rpc(node.url, 'eth_estimateGas', [args, 'latest', {}, {}, {}]), -32602, 'too many arguments, want at most 4')
})

test("eth_call's block overrides: blobBaseFee reaches BLOBBASEFEE; beaconRoot and withdrawals are refused, as geth refuses them", async () => {
  // BLOBBASEFEE PUSH1 0 MSTORE PUSH1 32 PUSH1 0 RETURN
  const reader = { [SCRATCH]: { code: '0x4a60005260206000f3' } }
  const blobBaseFee = (overrides) => rpcResult(node.url, 'eth_call', [{ to: SCRATCH }, 'latest', reader, overrides]).then(BigInt)
  // no blob has ever been sent here: the header's excess blob gas is 0, so the price is EIP-4844's minimum
  assert.equal(await blobBaseFee(undefined), 1n)
  assert.equal(await blobBaseFee({ blobBaseFee: '0x77' }), 0x77n)
  // field names match in any case, as Go's encoding/json matches them
  assert.equal(await blobBaseFee({ BlobBaseFee: '0x1234' }), 0x1234n)
  assert.equal(await blobBaseFee({ blobBaseFee: '0x77' }), 0x77n, 'the cached answer is keyed by the overrides')
  assert.equal(await blobBaseFee(undefined), 1n, 'the override stays with its call')
  const beaconRoot = { beaconRoot: `0x${'11'.repeat(32)}` }
  const withdrawals = { Withdrawals: [{ index: '0x0', validatorIndex: '0x1', address: DEV_ADDRESSES[5], amount: '0x1' }] }
  for (const method of ['eth_call', 'eth_estimateGas']) {
    assertError(await rpc(node.url, method, [{ to: SCRATCH }, 'latest', reader, beaconRoot]), -32000, 'block override "beaconRoot" is not supported for this RPC method')
    assertError(await rpc(node.url, method, [{ to: SCRATCH }, 'latest', reader, withdrawals]), -32000, 'block override "withdrawals" is not supported for this RPC method')
  }
  assertError(
    await rpc(node.url, 'eth_call', [{ to: SCRATCH }, 'latest', reader, { withdrawals: {} }]),
    -32602,
    'invalid argument 3: json: cannot unmarshal object into Go struct field BlockOverrides.withdrawals of type types.Withdrawals',
  )
})

// --- eth_sendRawTransaction rejections (all -32000) -------------------------------------------

test('nonce too low', async () => {
  const first = await signTransfer(DEV_KEYS[0], { nonce: 0 })
  const hash = await rpcResult(node.url, 'eth_sendRawTransaction', [first])
  await waitForReceipt(node.url, hash)
  const stale = await signTransfer(DEV_KEYS[0], { nonce: 0, value: 2n })
  assertError(await sendRaw(stale), -32000, 'nonce too low: next nonce 1, tx nonce 0')
})

test('already known (a queued transaction sent twice)', async () => {
  const next = await nextNonce(DEV_ADDRESSES[1])
  const queued = await signTransfer(DEV_KEYS[1], { nonce: next + 1 })
  const hash = await rpcResult(node.url, 'eth_sendRawTransaction', [queued])
  assert.equal(hash, keccak256(queued))
  assertError(await sendRaw(queued), -32000, 'already known')
})

test('replacement transaction underpriced (same nonce, fees +5%)', async () => {
  const next = await nextNonce(DEV_ADDRESSES[2])
  const fees = await currentFees()
  const original = await signTransfer(DEV_KEYS[2], {
    nonce: next + 1,
    maxFeePerGas: fees.maxFeePerGas,
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
  })
  await rpcResult(node.url, 'eth_sendRawTransaction', [original])
  const bumped = await signTransfer(DEV_KEYS[2], {
    nonce: next + 1,
    maxFeePerGas: (fees.maxFeePerGas * 105n) / 100n,
    maxPriorityFeePerGas: (fees.maxPriorityFeePerGas * 105n) / 100n,
  })
  assertError(await sendRaw(bumped), -32000, 'replacement transaction underpriced')
})

test('insufficient funds (a fresh wallet)', async () => {
  const fresh = Wallet.createRandom()
  const raw = await signTransfer(fresh.privateKey, { nonce: 0, value: 5n })
  const cost = 21000n * Transaction.from(raw).maxFeePerGas + 5n
  assertError(await sendRaw(raw), -32000, `insufficient funds for gas * price + value: balance 0, tx cost ${cost}, overshot ${cost}`)
})

test('intrinsic gas too low (gasLimit 20000)', async () => {
  const raw = await signTransfer(DEV_KEYS[3], { gasLimit: 20000n })
  assertError(await sendRaw(raw), -32000, 'intrinsic gas too low: gas 20000, minimum needed 21000')
})

test('max priority fee per gas higher than max fee per gas', async () => {
  const fees = await currentFees()
  const raw = signRawDynamicFee(DEV_KEYS[3], {
    nonce: await nextNonce(DEV_ADDRESSES[3]),
    maxPriorityFeePerGas: fees.maxFeePerGas + 1n,
    maxFeePerGas: fees.maxFeePerGas,
    gasLimit: 21000n,
    to: DEV_ADDRESSES[9],
    value: 1n,
  })
  assertError(await sendRaw(raw), -32000, 'max priority fee per gas higher than max fee per gas')
})

test('gasLimit 100,000,000: over the EIP-7825 cap, which geth checks before the block gas limit', async () => {
  const fees = await currentFees()
  assert.ok(fees.maxFeePerGas * 100_000_000n <= parseEther('1'), 'fees too high to stay under the 1 ether fee cap')
  const raw = await signTransfer(DEV_KEYS[3], { gasLimit: 100_000_000n })
  const expected =
    fees.gasLimit < MAX_TX_GAS ? 'exceeds block gas limit' : `transaction gas limit too high (cap: ${MAX_TX_GAS}, tx: 100000000)`
  assertError(await sendRaw(raw), -32000, expected)
})

test('exceeds block gas limit (a --genesis chain whose block gas limit is under 2^24)', async () => {
  // The dev chain's 150M block gas limit sits above the EIP-7825 cap, so only a smaller chain can show this error.
  const dir = mkdtempSync(join(tmpdir(), 'keel-e2e-genesis-'))
  const genesisPath = join(dir, 'genesis.json')
  writeFileSync(genesisPath, JSON.stringify(smallGasLimitGenesis(10_000_000n)))
  const small = await startNode({ dev: false, args: ['--genesis', genesisPath] })
  try {
    const block = await rpcResult(small.url, 'eth_getBlockByNumber', ['latest', false])
    assert.equal(BigInt(block.gasLimit) <= 10_000_000n, true, `block gas limit ${BigInt(block.gasLimit)}`)
    const wallet = new Wallet(DEV_KEYS[0])
    const raw = await wallet.signTransaction({
      type: 2,
      chainId: CHAIN_ID,
      nonce: 0,
      to: DEV_ADDRESSES[9],
      value: 1n,
      gasLimit: BigInt(block.gasLimit) + 1n,
      maxFeePerGas: BigInt(block.baseFeePerGas) * 2n + GWEI,
      maxPriorityFeePerGas: GWEI,
    })
    assertError(await rpc(small.url, 'eth_sendRawTransaction', [raw]), -32000, 'exceeds block gas limit')
  } finally {
    await small.stop()
    rmSync(dir, { recursive: true, force: true })
  }
})

function smallGasLimitGenesis(gasLimit) {
  const forksAtZero = ['homestead', 'eip150', 'eip155', 'eip158', 'byzantium', 'constantinople', 'petersburg', 'istanbul', 'berlin', 'london', 'mergeNetsplit']
  const config = { chainId: CHAIN_ID, terminalTotalDifficulty: 0, terminalTotalDifficultyPassed: true }
  for (const fork of forksAtZero) config[`${fork}Block`] = 0
  for (const fork of ['shanghai', 'cancun', 'prague', 'osaka']) config[`${fork}Time`] = 0
  return {
    config,
    nonce: '0x0',
    timestamp: `0x${Math.floor(Date.now() / 1000).toString(16)}`,
    extraData: '0x',
    gasLimit: `0x${gasLimit.toString(16)}`,
    difficulty: '0x0',
    baseFeePerGas: `0x${GWEI.toString(16)}`,
    alloc: { [DEV_ADDRESSES[0]]: { balance: `0x${parseEther('100').toString(16)}` } },
  }
}

test('invalid chain id for signer (signed for chain 1)', async () => {
  const raw = await signTransfer(DEV_KEYS[3], { chainId: 1 })
  // geth's pool wraps the signer error as "invalid sender: ..."; both wordings carry geth's sentinel text.
  assertError(await sendRaw(raw), -32000, /^(invalid sender: )?invalid chain id for signer: have 1 want 24589$/)
})

test('only replay-protected (EIP-155) transactions', async () => {
  const fees = await currentFees()
  const wallet = new Wallet(DEV_KEYS[3])
  const raw = await wallet.signTransaction({
    type: 0,
    chainId: 0n,
    nonce: await nextNonce(wallet.address),
    to: DEV_ADDRESSES[9],
    value: 1n,
    gasLimit: 21000n,
    gasPrice: fees.maxFeePerGas,
  })
  assertError(await sendRaw(raw), -32000, 'only replay-protected (EIP-155) transactions allowed over RPC')
})

test('nonce too high (next + 1000)', async () => {
  const next = await nextNonce(DEV_ADDRESSES[3])
  const raw = await signTransfer(DEV_KEYS[3], { nonce: next + 1000 })
  assertError(await sendRaw(raw), -32000, new RegExp(`^nonce too high: tx nonce ${next + 1000}, gapped nonce \\d+$`))
})

test('tx fee exceeds the configured cap (21000 gas * 100,000 gwei = 2.1 ether)', async () => {
  const raw = await signTransfer(DEV_KEYS[3], { maxFeePerGas: parseUnits('100000', 'gwei'), maxPriorityFeePerGas: GWEI })
  assertError(await sendRaw(raw), -32000, 'tx fee (2.10 ether) exceeds the configured cap (1.00 ether)')
})

test('max fee per gas less than block base fee', async (t) => {
  const { baseFee } = await currentFees()
  if (baseFee <= 1n) {
    t.skip(`base fee is ${baseFee}: no fee cap can sit below it`)
    return
  }
  const feeCapTooLow = new RegExp(
    `^max fee per gas less than block base fee: address ${DEV_ADDRESSES[5]}, maxFeePerGas: 1, baseFee: \\d+$`,
  )
  // eth_call/eth_estimateGas with explicit fees run geth's state-transition pre-check; geth's eth_call
  // wraps what it refuses as "err: <reason> (supplied gas N)", its estimator as "failed with N gas: <reason>"
  const call = await rpc(node.url, 'eth_call', [
    { from: DEV_ADDRESSES[5], to: DEV_ADDRESSES[9], value: '0x1', maxFeePerGas: '0x1', maxPriorityFeePerGas: '0x1', gas: '0x7530' },
    'latest',
  ])
  assertError(call, -32000, new RegExp(`^err: ${feeCapTooLow.source.slice(1, -1)} \\(supplied gas 30000\\)$`))
  const estimate = await rpc(node.url, 'eth_estimateGas', [
    { from: DEV_ADDRESSES[5], to: DEV_ADDRESSES[9], value: '0x1', maxFeePerGas: '0x1', maxPriorityFeePerGas: '0x1' },
  ])
  assertError(estimate, -32000, new RegExp(`^failed with \\d+ gas: ${feeCapTooLow.source.slice(1, -1)}$`))
  // geth's pool admits such a tx and parks it until the base fee falls; a node may also refuse it, but
  // then in geth's words. Either way it must not be mined while the base fee stays above its fee cap.
  const raw = await signTransfer(DEV_KEYS[5], { maxFeePerGas: 1n, maxPriorityFeePerGas: 1n })
  const sent = await sendRaw(raw)
  if (sent.error !== undefined) {
    assertError(sent, -32000, feeCapTooLow)
  } else {
    const head = BigInt(await rpcResult(node.url, 'eth_blockNumber', []))
    await waitForBlock(node.url, head + 2n)
    assert.equal(await rpcResult(node.url, 'eth_getTransactionReceipt', [sent.result]), null)
  }
})

test('oversized data (200 KB of calldata)', async () => {
  const raw = await signTransfer(DEV_KEYS[3], { data: `0x${'00'.repeat(200 * 1024)}`, gasLimit: 3_000_000n })
  assertError(await sendRaw(raw), -32000, /^oversized data: transaction size \d+, limit \d+$/)
  const [, size, limit] = /transaction size (\d+), limit (\d+)/.exec((await sendRaw(raw)).error.message)
  assert.ok(Number(size) > Number(limit))
  assert.equal(Number(size), (raw.length - 2) / 2)
})

test('none of the rejected transactions moved the nonce of account 3', async () => {
  assert.equal(await nextNonce(DEV_ADDRESSES[3]), 0)
})
