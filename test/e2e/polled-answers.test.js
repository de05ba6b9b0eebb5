// What wallets and dapps poll, answered from what the node keeps between calls, must stay what it would
// compute afresh: eth_getCode (one answer per code, shared by every contract with that code and by every
// request id), eth_feeHistory (answers kept by range and percentiles, rewards kept with each block for the
// last percentiles asked), eth_getStorageAt at 'latest' (from the read caches, without a promise) and
// eth_getTransactionCount at 'pending' (asks from many clients travel to the producer together), and a
// transaction's receipt and body polled before it is sent, while pending and once mined (a hash not found
// is answered from memory until a block holding it arrives). The rewards are checked against geth's algorithm computed here from the blocks and
// receipts, on a block built so that geth's whole-gas threshold and a fractional one pick different tips.

import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { Contract, ContractFactory, Interface, JsonRpcProvider, Transaction, Wallet, toBeHex, toQuantity, zeroPadValue } from 'ethers'
import { compile } from '../helpers/contracts.js'
import { CHAIN_ID, DEV_ADDRESSES, DEV_KEYS, startNode } from '../helpers/node.js'
import { rawPost, rpc, rpcBatch, rpcResult, waitForBlock, waitForReceipt } from '../helpers/rpc.js'

const GWEI = 10n ** 9n
let node
let provider
let Storage
const deployed = []

before(async () => {
  node = await startNode({ blockTime: 2 })
  provider = new JsonRpcProvider(node.url, CHAIN_ID, { staticNetwork: true, pollingInterval: 200 })
  Storage = compile().Storage
  const deployer = new Wallet(DEV_KEYS[0], provider)
  for (let i = 0; i < 2; i++) {
    const contract = await new ContractFactory(Storage.abi, Storage.bytecode, deployer).deploy()
    const receipt = await contract.deploymentTransaction().wait()
    deployed.push({ address: await contract.getAddress(), blockNumber: receipt.blockNumber })
  }
})

after(async () => {
  provider?.destroy()
  await node?.stop()
})

test('eth_getCode: contracts with the same code, any request id, and the block before deployment', async () => {
  const [a, b] = deployed
  for (let round = 0; round < 2; round++) {
    assert.equal(await rpcResult(node.url, 'eth_getCode', [a.address, 'latest']), Storage.deployedBytecode)
    assert.equal(await rpcResult(node.url, 'eth_getCode', [b.address, 'latest']), Storage.deployedBytecode)
  }
  // one batch, ids of each kind: every answer carries its own id
  const batch = [
    { jsonrpc: '2.0', id: 7, method: 'eth_getCode', params: [a.address, 'latest'] },
    { jsonrpc: '2.0', id: 'seven', method: 'eth_getCode', params: [b.address, 'latest'] },
    { jsonrpc: '2.0', id: null, method: 'eth_getCode', params: [a.address, toQuantity(a.blockNumber)] },
    { jsonrpc: '2.0', id: 8, method: 'eth_getCode', params: [a.address, toQuantity(a.blockNumber - 1)] },
    { jsonrpc: '2.0', id: 9, method: 'eth_getCode', params: [DEV_ADDRESSES[1], 'latest'] },
  ]
  const { json } = await rawPost(node.url, batch)
  assert.deepEqual(json, [
    { jsonrpc: '2.0', id: 7, result: Storage.deployedBytecode },
    { jsonrpc: '2.0', id: 'seven', result: Storage.deployedBytecode },
    { jsonrpc: '2.0', id: null, result: Storage.deployedBytecode },
    { jsonrpc: '2.0', id: 8, result: '0x' },
    { jsonrpc: '2.0', id: 9, result: '0x' },
  ])
})

/** geth's eth/gasprice processBlock: tips sorted, weighted by gas used, threshold cut to whole gas. */
async function gethRewards(blockNumber, percentiles) {
  const block = await rpcResult(node.url, 'eth_getBlockByNumber', [toQuantity(blockNumber), true])
  const receipts = await rpcResult(node.url, 'eth_getBlockReceipts', [toQuantity(blockNumber)])
  if (block.transactions.length === 0) return percentiles.map(() => '0x0')
  const baseFee = BigInt(block.baseFeePerGas)
  const sorted = block.transactions
    .map((tx, i) => {
      const tip = tx.maxPriorityFeePerGas !== undefined
        ? (BigInt(tx.maxPriorityFeePerGas) < BigInt(tx.maxFeePerGas) - baseFee ? BigInt(tx.maxPriorityFeePerGas) : BigInt(tx.maxFeePerGas) - baseFee)
        : BigInt(tx.gasPrice) - baseFee
      return { tip, gas: Number(BigInt(receipts[i].gasUsed)) }
    })
    .sort((x, y) => (x.tip < y.tip ? -1 : x.tip > y.tip ? 1 : 0))
  const total = Number(BigInt(block.gasUsed))
  let i = 0
  let sum = sorted[0].gas
  return percentiles.map((p) => {
    const threshold = Math.floor((total * p) / 100)
    while (sum < threshold && i < sorted.length - 1) sum += sorted[++i].gas
    return toQuantity(sorted[i].tip)
  })
}

/** A plain transfer at 1 gwei tip and a contract call at 2 gwei, sealed in one block. */
async function twoTipBlock() {
  const transferer = new Wallet(DEV_KEYS[2])
  const caller = new Wallet(DEV_KEYS[3])
  const data = new Interface(Storage.abi).encodeFunctionData('set', [987654321n])
  for (let attempt = 0; attempt < 4; attempt++) {
    // right after a block is sealed, so that both wait in the pool for the same next block
    await waitForBlock(node.url, BigInt(await rpcResult(node.url, 'eth_blockNumber')) + 1n)
    const [n1, n2] = await rpcBatch(node.url, [
      ['eth_getTransactionCount', [transferer.address, 'pending']],
      ['eth_getTransactionCount', [caller.address, 'pending']],
    ])
    const fees = { type: 2, chainId: CHAIN_ID, maxFeePerGas: 100n * GWEI }
    const raws = [
      await transferer.signTransaction({ ...fees, nonce: Number(n1), to: DEV_ADDRESSES[9], value: 1n, gasLimit: 21_000n, maxPriorityFeePerGas: GWEI }),
      await caller.signTransaction({ ...fees, nonce: Number(n2), to: deployed[0].address, data, gasLimit: 100_000n, maxPriorityFeePerGas: 2n * GWEI }),
    ]
    const hashes = await rpcBatch(node.url, raws.map((raw) => ['eth_sendRawTransaction', [raw]]))
    const receipts = [await waitForReceipt(node.url, hashes[0]), await waitForReceipt(node.url, hashes[1])]
    if (receipts[0].blockNumber === receipts[1].blockNumber) return { number: BigInt(receipts[0].blockNumber), receipts }
  }
  throw new Error('could not get both transactions into one block')
}

test('eth_feeHistory: rewards as geth computes them, for each set of percentiles, asked again and again', async () => {
  const { number, receipts } = await twoTipBlock()
  const total = Number(BigInt(receipts[0].gasUsed) + BigInt(receipts[1].gasUsed))
  // the threshold lands on 21,000.5 gas: geth cuts it to 21,000, which the transfer (1 gwei) covers
  const edge = (21_000.5 * 100) / total
  const setA = [edge, 50, 100]
  const setB = [0, 10, 90]
  const at = toQuantity(number)
  const first = await rpcResult(node.url, 'eth_feeHistory', ['0x1', at, setA])
  assert.deepEqual(first.reward, [await gethRewards(number, setA)])
  assert.deepEqual(first.reward[0], [toQuantity(GWEI), toQuantity(2n * GWEI), toQuantity(2n * GWEI)])
  const other = await rpcResult(node.url, 'eth_feeHistory', ['0x1', at, setB])
  assert.deepEqual(other.reward, [await gethRewards(number, setB)])
  assert.deepEqual(await rpcResult(node.url, 'eth_feeHistory', ['0x1', at, setA]), first)

  // a range holding the block, asked three times with each set
  const wide = toQuantity(number + 1n)
  await waitForBlock(node.url, number + 1n)
  const expectedA = []
  const expectedB = []
  for (let n = number - 2n; n <= number + 1n; n++) {
    expectedA.push(await gethRewards(n, setA))
    expectedB.push(await gethRewards(n, setB))
  }
  for (let round = 0; round < 3; round++) {
    const a = await rpcResult(node.url, 'eth_feeHistory', ['0x4', wide, setA])
    const b = await rpcResult(node.url, 'eth_feeHistory', ['0x4', wide, setB])
    assert.equal(a.oldestBlock, toQuantity(number - 2n))
    assert.deepEqual(a.reward, expectedA)
    assert.deepEqual(b.reward, expectedB)
    for (let k = 0; k < 4; k++) {
      const block = await rpcResult(node.url, 'eth_getBlockByNumber', [toQuantity(number - 2n + BigInt(k)), false])
      assert.equal(a.baseFeePerGas[k], block.baseFeePerGas)
      assert.equal(a.gasUsedRatio[k], Number(BigInt(block.gasUsed)) / Number(BigInt(block.gasLimit)))
    }
    assert.deepEqual({ ...b, reward: undefined }, { ...a, reward: undefined })
  }
  // the same range without percentiles has no rewards, and the next block's base fee last
  const bare = await rpcResult(node.url, 'eth_feeHistory', ['0x4', wide])
  assert.equal('reward' in bare, false)
  await waitForBlock(node.url, number + 2n)
  const next = await rpcResult(node.url, 'eth_getBlockByNumber', [toQuantity(number + 2n), false])
  assert.equal(bare.baseFeePerGas[4], next.baseFeePerGas)
})

test("eth_feeHistory at 'latest' follows the head", async () => {
  const seen = new Set()
  for (let i = 0; i < 3; i++) {
    const head = BigInt(await rpcResult(node.url, 'eth_blockNumber'))
    const latest = await rpcResult(node.url, 'eth_feeHistory', ['0x2', 'latest', [50]])
    if (BigInt(latest.oldestBlock) === head - 1n) {
      assert.deepEqual(latest, await rpcResult(node.url, 'eth_feeHistory', ['0x2', toQuantity(head), [50]]))
    }
    seen.add(latest.oldestBlock)
    await waitForBlock(node.url, head + 1n)
  }
  assert.ok(seen.size >= 2, `the oldest block moved with the head: ${[...seen]}`)
})

test("eth_feeHistory's argument errors, in geth's order, codes and words", async () => {
  const head = BigInt(await rpcResult(node.url, 'eth_blockNumber'))
  const error = async (params) => (await rpc(node.url, 'eth_feeHistory', params)).error
  // decoding the arguments: invalid params
  assert.deepEqual(await error(['0x2', 'latest', 'x']), { code: -32602, message: 'invalid argument 2: json: cannot unmarshal string into Go value of type []float64' })
  assert.deepEqual(await error(['0x2', 'latest', [10, '20']]), { code: -32602, message: 'invalid argument 2: json: cannot unmarshal string into Go value of type float64' })
  // no blocks asked: an empty history, whatever the percentiles or the range
  for (const params of [['0x0', 'latest', [90, 10]], ['0x0', toQuantity(head + 1000n), [101]]]) {
    const empty = await rpcResult(node.url, 'eth_feeHistory', params)
    assert.equal(empty.oldestBlock, '0x0')
    assert.deepEqual(empty.gasUsedRatio, [])
  }
  // the percentiles and the range: plain errors in geth (-32000), percentiles printed with %f
  assert.deepEqual(await error(['0x2', 'latest', Array.from({ length: 101 }, (_, i) => i / 2)]), { code: -32000, message: 'invalid reward percentile: over the query limit 100' })
  assert.deepEqual(await error(['0x2', 'latest', [10, 100.5]]), { code: -32000, message: 'invalid reward percentile: 100.500000' })
  assert.deepEqual(await error(['0x2', 'latest', [-1]]), { code: -32000, message: 'invalid reward percentile: -1.000000' })
  assert.deepEqual(await error(['0x2', 'latest', [75, 25]]), { code: -32000, message: 'invalid reward percentile: #0:75.000000 > #1:25.000000' })
  const beyond = await error(['0x2', toQuantity(head + 1000n), [50]])
  assert.equal(beyond.code, -32000)
  assert.match(beyond.message, new RegExp(`^request beyond head block: requested ${head + 1000n}, head \\d+$`))
  // a null percentile reads as 0, equal percentiles are allowed, 100 of them are
  const nulls = await rpcResult(node.url, 'eth_feeHistory', ['0x1', toQuantity(head), [null, 0, 50, 50]])
  const zeros = await rpcResult(node.url, 'eth_feeHistory', ['0x1', toQuantity(head), [0, 0, 50, 50]])
  assert.deepEqual(nulls, zeros)
  const hundred = await rpcResult(node.url, 'eth_feeHistory', ['0x1', toQuantity(head), Array.from({ length: 100 }, (_, i) => i)])
  assert.equal(hundred.reward[0].length, 100)
})

test("eth_getStorageAt at 'latest', asked again and again, follows each block's writes", async () => {
  const writer = new Wallet(DEV_KEYS[4], provider)
  const contract = new Contract(deployed[1].address, Storage.abi, writer)
  const slot = (v) => zeroPadValue(toBeHex(v), 32)
  const at = []
  for (const value of [5n, 0n, 2n ** 255n + 7n]) {
    const receipt = await (await contract.set(value)).wait()
    at.push(receipt.blockNumber)
    for (let i = 0; i < 3; i++) {
      const [latest, inBlock] = await rpcBatch(node.url, [
        ['eth_getStorageAt', [deployed[1].address, '0x0', 'latest']],
        ['eth_getStorageAt', [deployed[1].address, '0x0', toQuantity(receipt.blockNumber)]],
      ])
      assert.equal(inBlock, slot(value))
      // 'latest' may have moved on by a block, never past a write of this test
      assert.equal(latest, slot(value))
    }
  }
  assert.equal(await rpcResult(node.url, 'eth_getStorageAt', [deployed[1].address, '0x0', toQuantity(at[0])]), slot(5n))
  assert.equal(await rpcResult(node.url, 'eth_getStorageAt', [deployed[1].address, '0x0', toQuantity(at[1])]), slot(0n))
  // slots never written, of a contract and of an account without code
  assert.equal(await rpcResult(node.url, 'eth_getStorageAt', [deployed[1].address, '0x1', 'latest']), slot(0n))
  assert.equal(await rpcResult(node.url, 'eth_getStorageAt', [DEV_ADDRESSES[8], '0x0', 'latest']), slot(0n))
})

test("eth_getTransactionCount at 'pending', asked by many clients at once and in one batch", async () => {
  const sender = new Wallet(DEV_KEYS[5])
  const start = Number(BigInt(await rpcResult(node.url, 'eth_getTransactionCount', [sender.address, 'pending'])))
  const sign = (nonce) =>
    sender.signTransaction({ type: 2, chainId: CHAIN_ID, nonce, to: DEV_ADDRESSES[9], value: 1n, gasLimit: 21_000n, maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: GWEI })
  // two that follow on, one after a gap: the gapped one does not move the pending nonce
  for (const nonce of [start, start + 1, start + 3]) await rpcResult(node.url, 'eth_sendRawTransaction', [await sign(nonce)])
  const others = [DEV_ADDRESSES[6], DEV_ADDRESSES[7], '0x000000000000000000000000000000000000dEaD']
  const expected = new Map([[sender.address, toQuantity(start + 2)]])
  for (const address of others) expected.set(address, await rpcResult(node.url, 'eth_getTransactionCount', [address, 'latest']))
  const asks = []
  for (let i = 0; i < 40; i++) asks.push([...expected.keys()][i % expected.size])
  const answers = await Promise.all(asks.map((address) => rpc(node.url, 'eth_getTransactionCount', [address, 'pending'])))
  answers.forEach((answer, i) => assert.equal(answer.result, expected.get(asks[i]), `${asks[i]}: ${JSON.stringify(answer)}`))
  const batched = await rpcBatch(node.url, asks.map((address) => ['eth_getTransactionCount', [address, 'pending']]))
  batched.forEach((nonce, i) => assert.equal(nonce, expected.get(asks[i])))
  // a bad address in the middle of a batch fails alone
  const mixed = await rawPost(node.url, [
    { jsonrpc: '2.0', id: 1, method: 'eth_getTransactionCount', params: [sender.address, 'pending'] },
    { jsonrpc: '2.0', id: 2, method: 'eth_getTransactionCount', params: ['0x1234', 'pending'] },
    { jsonrpc: '2.0', id: 3, method: 'eth_getTransactionCount', params: [others[0], 'pending'] },
  ])
  assert.equal(mixed.json[0].result, toQuantity(start + 2))
  assert.equal(mixed.json[1].error.code, -32602)
  assert.equal(mixed.json[2].result, expected.get(others[0]))
})

test('a transaction asked for before it is sent, then pending, then mined: each poll answers what the node holds', async () => {
  const sender = new Wallet(DEV_KEYS[8])
  const nonce = Number(BigInt(await rpcResult(node.url, 'eth_getTransactionCount', [sender.address, 'pending'])))
  const raw = await sender.signTransaction({ type: 2, chainId: CHAIN_ID, nonce, to: DEV_ADDRESSES[9], value: 5n, gasLimit: 21_000n, maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: GWEI })
  const hash = Transaction.from(raw).hash
  // not sent yet: unknown, asked again and again (the later asks are answered from memory)
  for (let i = 0; i < 3; i++) {
    assert.equal(await rpcResult(node.url, 'eth_getTransactionReceipt', [hash]), null)
    assert.equal(await rpcResult(node.url, 'eth_getTransactionByHash', [hash]), null)
  }
  const head = Number(BigInt(await rpcResult(node.url, 'eth_blockNumber')))
  assert.equal(await rpcResult(node.url, 'eth_sendRawTransaction', [raw]), hash)
  // pending: in the pool, without a receipt
  const pending = await rpcResult(node.url, 'eth_getTransactionByHash', [hash])
  assert.equal(pending.hash, hash)
  assert.equal(pending.blockNumber, null)
  assert.equal(await rpcResult(node.url, 'eth_getTransactionReceipt', [hash]), null)
  assert.equal(await rpcResult(node.url, 'eth_getRawTransactionByHash', [hash]), raw)
  // polled as a wallet polls it until it is mined
  let receipt = null
  const until = Date.now() + 20_000
  while (receipt === null && Date.now() < until) {
    receipt = await rpcResult(node.url, 'eth_getTransactionReceipt', [hash])
    if (receipt === null) await new Promise((resolve) => setTimeout(resolve, 50))
  }
  assert.ok(receipt !== null, 'mined within 20 s')
  assert.equal(receipt.transactionHash, hash)
  assert.equal(receipt.status, '0x1')
  assert.ok(Number(BigInt(receipt.blockNumber)) > head)
  const mined = await rpcResult(node.url, 'eth_getTransactionByHash', [hash])
  assert.equal(mined.blockHash, receipt.blockHash)
  assert.equal(mined.transactionIndex, receipt.transactionIndex)
})

test('eth_createAccessList: the gas of a run with the list, as a transaction carrying it uses; asked again, the same; at a later block, that block', async () => {
  const writer = new Wallet(DEV_KEYS[6], provider)
  const contract = await new ContractFactory(Storage.abi, Storage.bytecode, writer).deploy()
  await contract.deploymentTransaction().wait()
  const address = (await contract.getAddress()).toLowerCase()
  const request = { from: writer.address, to: address, data: contract.interface.encodeFunctionData('set', [9n]) }
  const first = await rpcResult(node.url, 'eth_createAccessList', [request, 'latest'])
  assert.deepEqual(first.accessList, [{ address, storageKeys: [zeroPadValue('0x', 32)] }])
  for (let i = 0; i < 3; i++) assert.deepEqual(await rpcResult(node.url, 'eth_createAccessList', [request, 'latest']), first)
  const head = await rpcResult(node.url, 'eth_blockNumber')
  const receipt = await (await contract.set(9n, { accessList: first.accessList, gasLimit: 100_000n })).wait()
  // the slot went from 0 to 9 in that transaction: the run with the list paid exactly what it did
  assert.equal(BigInt(first.gasUsed), receipt.gasUsed)
  // at the head before it, still the same answer; at the block after the write, writing 9 again costs less
  assert.deepEqual(await rpcResult(node.url, 'eth_createAccessList', [request, head]), first)
  const after = await rpcResult(node.url, 'eth_createAccessList', [request, toQuantity(receipt.blockNumber)])
  assert.deepEqual(after.accessList, first.accessList)
  assert.ok(BigInt(after.gasUsed) < BigInt(first.gasUsed), `${after.gasUsed} < ${first.gasUsed}`)
  const latest = await rpcResult(node.url, 'eth_createAccessList', [request, 'latest'])
  assert.equal(latest.gasUsed, after.gasUsed)
  // a request that pays a fee runs as a whole transaction, one that does not runs the message alone: the
  // same list and gas either way, for a call that reaches a second contract too
  const fees = { maxFeePerGas: toQuantity(100n * GWEI), maxPriorityFeePerGas: toQuantity(GWEI) }
  const copy = { from: writer.address, to: deployed[0].address, data: contract.interface.encodeFunctionData('copyFrom', [address]) }
  for (const plain of [request, copy, { ...request, accessList: [{ address: DEV_ADDRESSES[3], storageKeys: [zeroPadValue('0x07', 32)] }] }]) {
    const paying = await rpcResult(node.url, 'eth_createAccessList', [{ ...plain, ...fees }, toQuantity(receipt.blockNumber)])
    assert.deepEqual(await rpcResult(node.url, 'eth_createAccessList', [plain, toQuantity(receipt.blockNumber)]), paying)
  }
})
