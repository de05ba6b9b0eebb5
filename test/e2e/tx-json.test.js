// A transaction's JSON (eth_getTransactionByHash, a block with full transactions, the pending form) carries
// every signed field exactly: ethers rebuilds the transaction from the JSON alone, and its hash and sender
// come out as the JSON's. Legacy (EIP-155 and unprotected), EIP-2930 with and without an access list, and
// EIP-1559 calls and creations: Keel formats the plain ones from the raw fields, the others through
// @ethereumjs's transaction object (src/json/transaction.ts).

import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { Signature, Transaction, Wallet } from 'ethers'
import { CHAIN_ID, DEV_ADDRESSES, DEV_KEYS, startNode } from '../helpers/node.js'
import { rpcResult, waitForReceipt } from '../helpers/rpc.js'

const GWEI = 10n ** 9n
let node
let wallet

before(async () => {
  node = await startNode({ blockTime: 0, args: ['--rpc-allow-unprotected-txs'] })
  wallet = new Wallet(DEV_KEYS[6])
})

after(async () => {
  await node?.stop()
})

/** The transaction ethers builds from the JSON's fields alone. */
function rebuilt(json) {
  const type = Number(json.type)
  const fields = { type, nonce: Number(json.nonce), gasLimit: BigInt(json.gas), to: json.to, value: BigInt(json.value), data: json.input }
  if (type === 0) {
    fields.gasPrice = BigInt(json.gasPrice)
    if (json.chainId !== undefined) fields.chainId = BigInt(json.chainId)
    fields.signature = Signature.from({ r: json.r, s: json.s, v: BigInt(json.v) })
  } else {
    fields.chainId = BigInt(json.chainId)
    fields.accessList = json.accessList
    if (type === 1) fields.gasPrice = BigInt(json.gasPrice)
    else {
      fields.maxFeePerGas = BigInt(json.maxFeePerGas)
      fields.maxPriorityFeePerGas = BigInt(json.maxPriorityFeePerGas)
    }
    fields.signature = Signature.from({ r: json.r, s: json.s, yParity: Number(json.yParity) })
  }
  return Transaction.from(fields)
}

function assertRebuilds(json, hash) {
  assert.equal(json.hash, hash)
  const tx = rebuilt(json)
  assert.equal(tx.hash, hash, `type ${json.type}: the hash of the transaction rebuilt from its JSON`)
  assert.equal(tx.from.toLowerCase(), json.from)
}

const KINDS = [
  ['legacy, EIP-155', { type: 0, chainId: CHAIN_ID, gasPrice: 2n * GWEI, to: DEV_ADDRESSES[7], value: 5n, gasLimit: 21_000n }],
  ['legacy, unprotected', { type: 0, chainId: 0n, gasPrice: 2n * GWEI, to: DEV_ADDRESSES[7], value: 6n, gasLimit: 21_000n }],
  ['EIP-2930, empty access list', { type: 1, chainId: CHAIN_ID, gasPrice: 2n * GWEI, to: DEV_ADDRESSES[7], value: 7n, gasLimit: 30_000n, accessList: [] }],
  ['EIP-2930, an access list', { type: 1, chainId: CHAIN_ID, gasPrice: 2n * GWEI, to: DEV_ADDRESSES[7], gasLimit: 30_000n, accessList: [{ address: DEV_ADDRESSES[8], storageKeys: [`0x${'00'.repeat(31)}07`] }] }],
  ['EIP-1559 call with data', { type: 2, chainId: CHAIN_ID, maxFeePerGas: 3n * GWEI, maxPriorityFeePerGas: 7n, to: DEV_ADDRESSES[7], value: 10n ** 18n, data: '0xa9059cbb', gasLimit: 40_000n }],
  ['EIP-1559 creation', { type: 2, chainId: CHAIN_ID, maxFeePerGas: 3n * GWEI, maxPriorityFeePerGas: GWEI, data: '0x600160005500', gasLimit: 80_000n }],
]

test('mined: by hash and in the block with full transactions, each kind rebuilds from its JSON', async () => {
  let nonce = Number(await rpcResult(node.url, 'eth_getTransactionCount', [wallet.address, 'pending']))
  for (const [kind, fields] of KINDS) {
    const hash = await rpcResult(node.url, 'eth_sendRawTransaction', [await wallet.signTransaction({ ...fields, nonce: nonce++ })])
    const receipt = await waitForReceipt(node.url, hash)
    assert.equal(receipt.status, '0x1', kind)
    const byHash = await rpcResult(node.url, 'eth_getTransactionByHash', [hash])
    assertRebuilds(byHash, hash)
    assert.equal(byHash.blockHash, receipt.blockHash)
    const block = await rpcResult(node.url, 'eth_getBlockByNumber', [receipt.blockNumber, true])
    const inBlock = block.transactions[Number(receipt.transactionIndex)]
    assert.deepEqual(inBlock, byHash, kind)
    assert.equal(BigInt(inBlock.gasPrice), BigInt(receipt.effectiveGasPrice), `${kind}: the price paid`)
  }
})

test('pending: a transaction the pool holds behind a nonce gap rebuilds from its JSON', async () => {
  const nonce = Number(await rpcResult(node.url, 'eth_getTransactionCount', [wallet.address, 'pending']))
  const [, fields] = KINDS[4]
  const hash = await rpcResult(node.url, 'eth_sendRawTransaction', [await wallet.signTransaction({ ...fields, nonce: nonce + 1 })])
  const pending = await rpcResult(node.url, 'eth_getTransactionByHash', [hash])
  assert.equal(pending.blockHash, null)
  assert.equal(pending.gasPrice, pending.maxFeePerGas, 'pending: the fee cap')
  assertRebuilds(pending, hash)
  const gap = await rpcResult(node.url, 'eth_sendRawTransaction', [await wallet.signTransaction({ ...KINDS[0][1], nonce })])
  await waitForReceipt(node.url, gap)
  await waitForReceipt(node.url, hash)
})
