// debug_storageRangeAt as geth answers it: an ERC20's storage slots in hashed-key order, checked slot by
// slot against eth_getStorageAt, paged with nextKey, read within a block before one of its transactions,
// and geth's errors. Driven with ethers.

import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { ContractFactory, JsonRpcProvider, Wallet, keccak256, toBeHex, zeroPadValue } from 'ethers'
import { compile } from '../helpers/contracts.js'
import { CHAIN_ID, DEV_ADDRESSES, DEV_KEYS, startNode, target } from '../helpers/node.js'
import { rpc, rpcResult, sleep } from '../helpers/rpc.js'

const HOLDERS = 12
/** 17 slots fit: 17 entries of 159 characters and the 93 around them */
const RESPONSE_LIMIT = 2800
/** anvil answers debug_storageRangeAt with -32601 */
const skip = target !== 'keel' && 'anvil does not serve debug_storageRangeAt'

let node
let provider
let token
/** the receipts of the transfers to the holders, in order */
const transfers = []
/** a block and index after every transfer: the state before it is the state after them */
let after_

before(async () => {
  if (skip) return
  // a response limit the history contract's slots can pass (below), that the token's fit in
  node = await startNode({ blockTime: 0.25, args: ['--batch-response-max-size', String(RESPONSE_LIMIT)] })
  provider = new JsonRpcProvider(node.url, CHAIN_ID, { staticNetwork: true, pollingInterval: 200 })
  const wallet = new Wallet(DEV_KEYS[7], provider)
  const { Token } = compile()
  token = await new ContractFactory(Token.abi, Token.bytecode, wallet).deploy()
  await token.waitForDeployment()
  let nonce = await provider.getTransactionCount(wallet.address, 'pending')
  const sent = []
  for (let i = 0; i < HOLDERS; i++) {
    const holder = `0x${(0xa000 + i).toString(16).padStart(40, '0')}`
    sent.push(await token.transfer(holder, 1000n + BigInt(i), { nonce: nonce++, gasLimit: 100_000n }))
  }
  for (const tx of sent) transfers.push(await tx.wait())
  const last = await (await wallet.sendTransaction({ to: DEV_ADDRESSES[8], value: 1n, nonce: nonce++ })).wait()
  after_ = { block: last.blockHash, number: last.blockNumber, index: last.index }
})

after(async () => {
  provider?.destroy()
  await node?.stop()
})

const range = (block, index, start, max, address) =>
  rpcResult(node.url, 'debug_storageRangeAt', [block, index, address ?? token.target, start, max])

/** The token's slots as eth_getStorageAt reads them at `blockTag`: hashed key -> value, in key order. */
async function expectedSlots(blockTag) {
  const holders = [DEV_ADDRESSES[7], ...Array.from({ length: HOLDERS }, (_, i) => `0x${(0xa000 + i).toString(16).padStart(40, '0')}`)]
  // OpenZeppelin 5's ERC20: _balances (slot 0), _allowances (1), _totalSupply (2), _name (3), _symbol (4)
  const slots = [toBeHex(2, 32), toBeHex(3, 32), toBeHex(4, 32), ...holders.map((h) => keccak256(zeroPadValue(h, 32) + toBeHex(0, 32).slice(2)))]
  const out = new Map()
  for (const slot of slots) {
    const value = await rpcResult(node.url, 'eth_getStorageAt', [token.target, slot, blockTag])
    if (BigInt(value) !== 0n) out.set(keccak256(slot), value)
  }
  return new Map([...out].sort(([a], [b]) => (a < b ? -1 : 1)))
}

test('every slot in hashed-key order, each as eth_getStorageAt reads it, key null, no next key', { skip }, async () => {
  const expected = await expectedSlots(`0x${(after_.number - 1).toString(16)}`)
  assert.equal(expected.size, 3 + 1 + HOLDERS)
  const result = await range(after_.block, after_.index, '0x00', 100)
  assert.deepEqual(Object.keys(result.storage), [...expected.keys()])
  for (const [hashedKey, value] of expected) assert.deepEqual(result.storage[hashedKey], { key: null, value })
  assert.equal(result.nextKey, null)
})

test('paging: maxResult slots from a start key, nextKey the first left out', { skip }, async () => {
  const keys = [...(await expectedSlots(`0x${(after_.number - 1).toString(16)}`)).keys()]
  const seen = []
  let start = '0x'
  for (let page = 0; page < 10 && start !== null; page++) {
    const result = await range(after_.block, after_.index, start, 5)
    assert.ok(Object.keys(result.storage).length <= 5)
    seen.push(...Object.keys(result.storage))
    start = result.nextKey
  }
  assert.equal(start, null)
  assert.deepEqual(seen, keys)
  // a start that is a key includes it; a shorter start is the smallest key it prefixes
  const fromThird = await range(after_.block, after_.index, keys[2], 2)
  assert.deepEqual(Object.keys(fromThird.storage), keys.slice(2, 4))
  assert.equal(fromThird.nextKey, keys[4])
  const upper = await range(after_.block, after_.index, '0x80', 100)
  assert.deepEqual(Object.keys(upper.storage), keys.filter((k) => k >= '0x80'))
  // maxResult 0: nothing, and the first key as the next one
  assert.deepEqual(await range(after_.block, after_.index, '0x00', 0), { storage: {}, nextKey: keys[0] })
  // past the last key
  assert.deepEqual(await range(after_.block, after_.index, `0x${'ff'.repeat(32)}`, 10), { storage: {}, nextKey: null })
})

test('within a block: the state before the transaction at txIndex', { skip }, async () => {
  const receipt = transfers[transfers.length - 1]
  const holder = `0x${(0xa000 + HOLDERS - 1).toString(16).padStart(40, '0')}`
  const slot = keccak256(keccak256(zeroPadValue(holder, 32) + toBeHex(0, 32).slice(2)))
  const before = await range(receipt.blockHash, receipt.index, '0x', 100)
  assert.equal(before.storage[slot], undefined, 'the holder has no balance before its transfer')
  const later = await range(after_.block, after_.index, '0x', 100)
  assert.equal(BigInt(later.storage[slot].value), 1000n + BigInt(HOLDERS - 1))
  // by number too
  assert.deepEqual(await range(`0x${receipt.blockNumber.toString(16)}`, receipt.index, '0x', 100), before)
})

test("an account without storage, and geth's errors", { skip }, async () => {
  assert.deepEqual(await range(after_.block, after_.index, '0x', 10, DEV_ADDRESSES[9]), { storage: null, nextKey: null })
  const count = (await rpcResult(node.url, 'eth_getBlockByHash', [after_.block, false])).transactions.length
  const outOfRange = await rpc(node.url, 'debug_storageRangeAt', [after_.block, count, token.target, '0x', 10])
  assert.deepEqual(outOfRange.error, { code: -32000, message: `transaction index ${count} out of range for block ${after_.block}` })
  const genesis = await rpc(node.url, 'debug_storageRangeAt', ['0x0', 0, token.target, '0x', 10])
  assert.deepEqual(genesis.error, { code: -32000, message: 'no transaction in genesis' })
  const unknown = `0x${'ab'.repeat(32)}`
  const missing = await rpc(node.url, 'debug_storageRangeAt', [unknown, 0, token.target, '0x', 10])
  assert.deepEqual(missing.error, { code: -32000, message: `block ${unknown} not found` })
  const hexIndex = await rpc(node.url, 'debug_storageRangeAt', [after_.block, '0x0', token.target, '0x', 10])
  assert.deepEqual(hexIndex.error, { code: -32602, message: 'invalid argument 1: json: cannot unmarshal string into Go value of type int' })
  const fewer = await rpc(node.url, 'debug_storageRangeAt', [after_.block, 0, token.target, '0x'])
  assert.equal(fewer.error?.code, -32602)
})

test('an answer past --batch-response-max-size is -32003; the walk stops there', { skip }, async () => {
  // EIP-2935's contract keeps one slot a block: more blocks than fit. A transaction's block comes at the
  // next 0.25-s slot; an empty one only once the clock passes the head's whole-second timestamp (~1 a
  // second, and none while the transactions' blocks have run their timestamps ahead)
  const wallet = new Wallet(DEV_KEYS[7], provider)
  const head = async () => Number(await rpcResult(node.url, 'eth_blockNumber', []))
  // nonces counted here: ethers answers a repeated eth_getTransactionCount from its 250-ms cache
  let nonce = Number(await rpcResult(node.url, 'eth_getTransactionCount', [wallet.address, 'pending']))
  const fees = { type: 2, chainId: CHAIN_ID, maxFeePerGas: 10n ** 11n, maxPriorityFeePerGas: 10n ** 9n, gasLimit: 21_000n }
  for (let i = 0; i < 40; i++) {
    const before = await head()
    if (before >= 24) break
    await rpcResult(node.url, 'eth_sendRawTransaction', [await wallet.signTransaction({ ...fees, to: DEV_ADDRESSES[8], value: 1n, nonce: nonce++ })])
    // its block: the next slot
    for (let polls = 0; polls < 100 && (await head()) === before; polls++) await sleep(25)
  }
  assert.ok((await head()) >= 24, 'block 24 reached')
  const marker = await (await wallet.sendTransaction({ to: DEV_ADDRESSES[8], value: 1n, nonce: nonce++ })).wait()
  const history = '0x0000f90827f1c53a10cb7a02335b175320002935'
  const fits = await range(marker.blockHash, marker.index, '0x', 17, history)
  assert.equal(Object.keys(fits.storage).length, 17)
  assert.ok(JSON.stringify(fits).length <= RESPONSE_LIMIT)
  const tooLarge = await rpc(node.url, 'debug_storageRangeAt', [marker.blockHash, marker.index, history, '0x', 18])
  assert.deepEqual(tooLarge.error, {
    code: -32003,
    message: `response too large: the storage range passed ${RESPONSE_LIMIT} bytes (--batch-response-max-size); ask for fewer slots with maxResult`,
  })
})
