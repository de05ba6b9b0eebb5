// eth_simulateV1 against the chain itself: a block the node mined is simulated again on top of its
// parent, with the mined block's header fields as block overrides and its transactions as calls (with
// validation, as the producer checks them). The simulated block must reach the same state root, receipts
// root, bloom and gas as the mined one, and its calls the receipts' gas and logs: the simulation runs
// what the producer runs, and its state roots are real. (The transactions root and the hashes differ: the
// calls are the unsigned transactions.)

import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { ContractFactory, JsonRpcProvider, Wallet } from 'ethers'
import { compile } from '../helpers/contracts.js'
import { CHAIN_ID, DEV_KEYS, startNode } from '../helpers/node.js'
import { rpcResult } from '../helpers/rpc.js'

let node
let provider
let wallet
let token

before(async () => {
  node = await startNode({ blockTime: 1 })
  provider = new JsonRpcProvider(node.url, CHAIN_ID, { staticNetwork: true, pollingInterval: 100 })
  wallet = new Wallet(DEV_KEYS[4], provider)
  const { Token } = compile()
  const factory = new ContractFactory(Token.abi, Token.bytecode, wallet)
  token = await factory.deploy()
  await token.waitForDeployment()
})

after(async () => {
  provider?.destroy()
  await node?.stop()
})

/** Mines `send()`'s transactions and returns their block, which must hold nothing else. */
async function minedAlone(send) {
  const sent = await send()
  const receipts = await Promise.all(sent.map((tx) => provider.waitForTransaction(tx.hash)))
  const number = receipts[0].blockNumber
  for (const r of receipts) assert.equal(r.blockNumber, number, 'the transactions were sent to land in one block')
  const block = await rpcResult(node.url, 'eth_getBlockByNumber', [`0x${number.toString(16)}`, true])
  assert.equal(block.transactions.length, sent.length, 'nothing else was mined in that block')
  return { block, receipts: await Promise.all(receipts.map((r) => rpcResult(node.url, 'eth_getTransactionReceipt', [r.hash]))) }
}

async function resimulate(block) {
  const calls = block.transactions.map((tx) => ({
    from: tx.from,
    to: tx.to,
    input: tx.input,
    value: tx.value,
    gas: tx.gas,
    nonce: tx.nonce,
    maxFeePerGas: tx.maxFeePerGas,
    maxPriorityFeePerGas: tx.maxPriorityFeePerGas,
  }))
  const blockOverrides = {
    number: block.number,
    time: block.timestamp,
    gasLimit: block.gasLimit,
    feeRecipient: block.miner,
    prevRandao: block.mixHash,
    baseFeePerGas: block.baseFeePerGas,
  }
  const parent = `0x${(BigInt(block.number) - 1n).toString(16)}`
  const [simulated] = await rpcResult(node.url, 'eth_simulateV1', [{ blockStateCalls: [{ blockOverrides, calls }], validation: true }, parent])
  return simulated
}

function assertSameBlock(simulated, block, receipts) {
  assert.equal(simulated.number, block.number)
  assert.equal(simulated.parentHash, block.parentHash)
  assert.equal(simulated.stateRoot, block.stateRoot, 'state root')
  assert.equal(simulated.receiptsRoot, block.receiptsRoot, 'receipts root')
  assert.equal(simulated.logsBloom, block.logsBloom, 'bloom')
  assert.equal(simulated.gasUsed, block.gasUsed, 'gas used')
  assert.equal(simulated.requestsHash, block.requestsHash)
  assert.notEqual(simulated.transactionsRoot, block.transactionsRoot, 'the calls are unsigned transactions')
  assert.equal(simulated.calls.length, receipts.length)
  simulated.calls.forEach((call, i) => {
    assert.equal(call.status, receipts[i].status)
    assert.equal(call.gasUsed, receipts[i].gasUsed)
    assert.deepEqual(
      call.logs.map((l) => [l.address, l.topics, l.data, l.logIndex, l.transactionIndex]),
      receipts[i].logs.map((l) => [l.address, l.topics, l.data, l.logIndex, l.transactionIndex]),
    )
    assert.equal(call.logs.every((l) => l.blockHash === simulated.hash && l.transactionHash === simulated.transactions[i]), true)
  })
}

test('a mined block of token transfers, simulated again on its parent, reaches the same state root, receipts and logs', async () => {
  const recipients = ['0x00000000000000000000000000000000000a11ce', '0x0000000000000000000000000000000000000b0b']
  const { block, receipts } = await minedAlone(async () => {
    const nonce = await provider.getTransactionCount(wallet.address, 'pending')
    return Promise.all([
      token.transfer(recipients[0], 1234n, { nonce, gasLimit: 100_000n }),
      token.transfer(recipients[1], 5678n, { nonce: nonce + 1, gasLimit: 100_000n }),
      wallet.sendTransaction({ to: recipients[1], value: 10n ** 15n, nonce: nonce + 2 }),
    ])
  })
  assert.equal(receipts[0].logs.length, 1)
  assertSameBlock(await resimulate(block), block, receipts)
  // nothing of the simulation reached the chain: the recipient holds the one mined transfer
  assert.equal(BigInt(await rpcResult(node.url, 'eth_getBalance', [recipients[1], 'latest'])), 10n ** 15n)
})

test('a transaction that reverts: the same failed receipt, the fee still paid to the same state root', async () => {
  const { block, receipts } = await minedAlone(async () => {
    const nonce = await provider.getTransactionCount(wallet.address, 'pending')
    // more tokens than the sender holds: the token reverts with a custom error
    return [await token.transfer('0x00000000000000000000000000000000000a11ce', 10n ** 30n, { nonce, gasLimit: 100_000n })]
  })
  assert.equal(receipts[0].status, '0x0')
  const simulated = await resimulate(block)
  assertSameBlock(simulated, block, receipts)
  assert.equal(simulated.calls[0].error.code, 3)
  assert.equal(simulated.calls[0].returnData, '0x', 'a failed call returns nothing (geth), its revert data is in the error')
  assert.match(simulated.calls[0].error.data, /^0xe450d38c/, "OpenZeppelin's ERC20InsufficientBalance")
})
