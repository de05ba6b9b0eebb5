// eth_getLogs polled up to 'latest' while the chain grows: each new head extends the answer stored for
// the head before (blocks without a match leave it as it was), and the extended answer is what the
// blocks hold, checked block by block; the max-results bound counts the whole range; identical queries
// arriving together get one answer.

import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { ContractFactory, JsonRpcProvider, Wallet } from 'ethers'
import { compile } from '../helpers/contracts.js'
import { CHAIN_ID, DEV_ADDRESSES, DEV_KEYS, startNode } from '../helpers/node.js'
import { rpc, rpcResult } from '../helpers/rpc.js'

const MAX_RESULTS = 6
const { Reverter } = compile()
let node
let provider
let wallet
let emitter
let query

before(async () => {
  node = await startNode({ blockTime: 0, args: ['--logs-max-results', String(MAX_RESULTS)] })
  provider = new JsonRpcProvider(node.url, CHAIN_ID, { staticNetwork: true, pollingInterval: 50, cacheTimeout: -1 })
  wallet = new Wallet(DEV_KEYS[0], provider)
  emitter = await (await new ContractFactory(Reverter.abi, Reverter.bytecode, wallet).deploy()).waitForDeployment()
  query = { fromBlock: '0x0', toBlock: 'latest', address: await emitter.getAddress() }
})

after(async () => {
  provider?.destroy()
  await node?.stop()
})

const getLogs = () => rpcResult(node.url, 'eth_getLogs', [query])

/** The logs of every block up to the head, asked one block at a time (each a query of its own). */
async function blockByBlock() {
  const head = Number(await rpcResult(node.url, 'eth_blockNumber'))
  const out = []
  for (let n = 0; n <= head; n++) {
    const block = await rpcResult(node.url, 'eth_getBlockByNumber', [`0x${n.toString(16)}`, false])
    out.push(...(await rpcResult(node.url, 'eth_getLogs', [{ blockHash: block.hash, address: query.address }])))
  }
  return out
}

async function emit(n) {
  const receipt = await (await emitter.emitMany(n)).wait()
  return receipt.blockNumber
}

test('a poll up to latest grows with the chain and matches the blocks', async () => {
  await emit(2)
  const first = await getLogs()
  assert.equal(first.length, 2)
  assert.deepEqual(first, await blockByBlock())

  await (await wallet.sendTransaction({ to: DEV_ADDRESSES[1], value: 1n })).wait()
  assert.deepEqual(await getLogs(), first, 'a block without a match adds nothing')

  const at = await emit(3)
  const grown = await getLogs()
  assert.equal(grown.length, 5)
  assert.deepEqual(grown.slice(0, 2), first)
  assert.deepEqual(grown, await blockByBlock())
  assert.deepEqual(grown.slice(2).map((l) => Number(l.blockNumber)), [at, at, at])
  assert.deepEqual(grown.slice(2).map((l) => Number(l.logIndex)), [0, 1, 2])
})

test('identical polls arriving together at a new head get the same, whole answer', async () => {
  await emit(1)
  const answers = await Promise.all(Array.from({ length: 8 }, () => getLogs()))
  assert.equal(answers[0].length, MAX_RESULTS)
  for (const a of answers) assert.deepEqual(a, answers[0])
  assert.deepEqual(answers[0], await blockByBlock())
})

test('the max-results bound counts the logs before the new blocks too', async () => {
  const at = await emit(1)
  const answer = await rpc(node.url, 'eth_getLogs', [query])
  assert.equal(answer.error?.code, -32602, JSON.stringify(answer))
  assert.equal(answer.error.message, `query exceeds max results ${MAX_RESULTS}, retry with the range 0-${at - 1}`)
  assert.deepEqual(answer.error.data, { fromBlock: '0x0', toBlock: `0x${(at - 1).toString(16)}`, limit: MAX_RESULTS })
  // the same range asked a way no stored answer covers (a topic wildcard makes it another query)
  const fresh = await rpc(node.url, 'eth_getLogs', [{ ...query, topics: [null] }])
  assert.deepEqual(fresh.error, answer.error)
})
