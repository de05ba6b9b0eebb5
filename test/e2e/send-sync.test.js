// eth_sendRawTransactionSync (EIP-7966, as geth serves it): send a signed transaction and get its
// receipt in the same call, through viem and over raw JSON-RPC.

import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { keccak256, parseEther } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { DEV_ADDRESSES, DEV_KEYS, startNode } from '../helpers/node.js'
import { rpc, rpcResult } from '../helpers/rpc.js'
import { validateSchema } from '../helpers/schema.js'
import { httpClients } from '../helpers/viem.js'

let node
let publicClient
let walletClient
const account = privateKeyToAccount(DEV_KEYS[7])

before(async () => {
  node = await startNode({ blockTime: 1 })
  ;({ publicClient, walletClient } = httpClients(node.url, account))
})

after(async () => {
  await node?.stop()
})

async function signTransfer(overrides = {}) {
  return walletClient.signTransaction(await walletClient.prepareTransactionRequest({ to: DEV_ADDRESSES[9], value: parseEther('0.001'), ...overrides }))
}

test('viem sendRawTransactionSync: the receipt of the mined transaction, in the same call', async () => {
  const serializedTransaction = await signTransfer()
  const started = Date.now()
  const receipt = await walletClient.sendRawTransactionSync({ serializedTransaction })
  assert.ok(Date.now() - started < 5_000)
  assert.equal(receipt.status, 'success')
  assert.equal(receipt.transactionHash, keccak256(serializedTransaction))
  assert.equal(receipt.from.toLowerCase(), account.address.toLowerCase())
  // the same receipt eth_getTransactionReceipt gives, in the execution-apis shape
  const raw = await rpcResult(node.url, 'eth_getTransactionReceipt', [receipt.transactionHash])
  validateSchema('ReceiptInfo', raw)
  assert.equal(BigInt(raw.blockNumber), receipt.blockNumber)
  assert.equal(await publicClient.getTransactionCount({ address: account.address }), 1)
})

test('a transaction that is not mined in time: code 4, geth\'s message, the hash as data; it stays in the pool', async () => {
  // a nonce gap: the transaction waits in the pool's queue
  const nonce = (await publicClient.getTransactionCount({ address: account.address, blockTag: 'pending' })) + 5
  const raw = await signTransfer({ nonce })
  const answer = await rpc(node.url, 'eth_sendRawTransactionSync', [raw, 300])
  assert.deepEqual(answer.error, {
    code: 4,
    message: "The transaction was added to the transaction pool but wasn't processed in 300ms",
    data: keccak256(raw),
  })
  const pooled = await rpcResult(node.url, 'eth_getTransactionByHash', [keccak256(raw)])
  assert.equal(pooled.blockNumber, null)
})

test('refusals are eth_sendRawTransaction\'s; the timeout is a number of milliseconds', async () => {
  const raw = await signTransfer()
  const sent = await rpcResult(node.url, 'eth_sendRawTransaction', [raw])
  const again = await rpc(node.url, 'eth_sendRawTransactionSync', [raw])
  assert.deepEqual(again.error, { code: -32000, message: 'already known' })
  const badTimeout = await rpc(node.url, 'eth_sendRawTransactionSync', [raw, '0x10'])
  assert.deepEqual(badTimeout.error, { code: -32602, message: 'invalid argument 1: json: cannot unmarshal string into Go value of type uint64' })
  assert.deepEqual((await rpc(node.url, 'eth_sendRawTransactionSync', [])).error.code, -32602)
  // one already mined is refused as the pool refuses it, as geth's does
  await publicClient.waitForTransactionReceipt({ hash: sent })
  const known = await rpc(node.url, 'eth_sendRawTransactionSync', [raw, 1000])
  assert.deepEqual(known.error, { code: -32000, message: 'nonce too low: next nonce 2, tx nonce 1' })
})
