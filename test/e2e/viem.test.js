// viem against a real Keel process over HTTP.

import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import {
  BaseError,
  ContractFunctionRevertedError,
  encodeFunctionData,
  getAbiItem,
  numberToHex,
  parseEther,
  parseUnits,
} from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { compile } from '../helpers/contracts.js'
import { CHAIN_ID, DEV_KEYS, startNode } from '../helpers/node.js'
import { httpClients } from '../helpers/viem.js'

const { Token, Reverter } = compile()
const transferEvent = getAbiItem({ abi: Token.abi, name: 'Transfer' })

let node
let publicClient
let walletClient
let account
let tokenAddress
let reverterAddress

before(async () => {
  node = await startNode({ blockTime: 1 })
  account = privateKeyToAccount(DEV_KEYS[0])
  ;({ publicClient, walletClient } = httpClients(node.url, account))
})

after(async () => {
  await node?.stop()
})

async function deploy(artifact) {
  const hash = await walletClient.deployContract({ abi: artifact.abi, bytecode: artifact.bytecode })
  const receipt = await publicClient.waitForTransactionReceipt({ hash })
  assert.equal(receipt.status, 'success')
  return receipt.contractAddress
}

test('getChainId is 24589', async () => {
  assert.equal(await publicClient.getChainId(), CHAIN_ID)
})

test('a wallet client sends a transfer and waits for its receipt', async () => {
  const to = privateKeyToAccount(generatePrivateKey()).address
  const hash = await walletClient.sendTransaction({ to, value: parseEther('0.5') })
  const receipt = await publicClient.waitForTransactionReceipt({ hash })
  assert.equal(receipt.status, 'success')
  assert.equal(receipt.transactionHash, hash)
  assert.equal(receipt.from.toLowerCase(), account.address.toLowerCase())
  assert.equal(receipt.to.toLowerCase(), to.toLowerCase())
  assert.equal(receipt.gasUsed, 21000n)
  assert.equal(await publicClient.getBalance({ address: to }), parseEther('0.5'))
  const tx = await publicClient.getTransaction({ hash })
  assert.equal(tx.chainId, CHAIN_ID)
  assert.equal(tx.blockHash, receipt.blockHash)
})

test('deployContract(Token), writeContract transfer and readContract balanceOf', async () => {
  tokenAddress = await deploy(Token)
  assert.equal(await publicClient.getCode({ address: tokenAddress }), Token.deployedBytecode)
  const recipient = privateKeyToAccount(DEV_KEYS[1]).address
  const hash = await walletClient.writeContract({
    address: tokenAddress,
    abi: Token.abi,
    functionName: 'transfer',
    args: [recipient, parseUnits('250', 18)],
  })
  const receipt = await publicClient.waitForTransactionReceipt({ hash })
  assert.equal(receipt.status, 'success')
  assert.equal(receipt.logs.length, 1)
  const read = (who) => publicClient.readContract({ address: tokenAddress, abi: Token.abi, functionName: 'balanceOf', args: [who] })
  assert.equal(await read(recipient), parseUnits('250', 18))
  assert.equal(await read(account.address), parseUnits('1000000', 18) - parseUnits('250', 18))
})

test('getLogs with the Transfer event and an args filter; getContractEvents', async () => {
  const recipient = privateKeyToAccount(DEV_KEYS[1]).address
  const toRecipient = await publicClient.getLogs({
    address: tokenAddress,
    event: transferEvent,
    args: { to: recipient },
    fromBlock: 0n,
    toBlock: 'latest',
  })
  assert.equal(toRecipient.length, 1)
  assert.equal(toRecipient[0].args.from.toLowerCase(), account.address.toLowerCase())
  assert.equal(toRecipient[0].args.to.toLowerCase(), recipient.toLowerCase())
  assert.equal(toRecipient[0].args.value, parseUnits('250', 18))
  assert.equal(toRecipient[0].eventName, 'Transfer')

  const fromZero = await publicClient.getLogs({
    address: tokenAddress,
    event: transferEvent,
    args: { from: '0x0000000000000000000000000000000000000000' },
    fromBlock: 0n,
  })
  assert.equal(fromZero.length, 1)
  assert.equal(fromZero[0].args.value, parseUnits('1000000', 18))

  const all = await publicClient.getContractEvents({ address: tokenAddress, abi: Token.abi, eventName: 'Transfer', fromBlock: 0n })
  assert.equal(all.length, 2)
  assert.ok(all[0].blockNumber <= all[1].blockNumber)
  assert.deepEqual(
    all.map((log) => log.args.value),
    [parseUnits('1000000', 18), parseUnits('250', 18)],
  )
})

test('simulateContract(Reverter.failCustom(7)) rejects with ContractFunctionRevertedError Bad(7)', async () => {
  reverterAddress = await deploy(Reverter)
  await assert.rejects(
    publicClient.simulateContract({ account, address: reverterAddress, abi: Reverter.abi, functionName: 'failCustom', args: [7n] }),
    (err) => {
      assert.ok(err instanceof BaseError, `not a viem error: ${err}`)
      const reverted = err.walk((cause) => cause instanceof ContractFunctionRevertedError)
      assert.ok(reverted instanceof ContractFunctionRevertedError, `no ContractFunctionRevertedError in: ${err.message}`)
      assert.equal(reverted.data?.errorName, 'Bad')
      assert.deepEqual(reverted.data?.args, [7n])
      return true
    },
  )
  await assert.rejects(
    publicClient.simulateContract({ account, address: reverterAddress, abi: Reverter.abi, functionName: 'failRequire' }),
    (err) => {
      const reverted = err.walk((cause) => cause instanceof ContractFunctionRevertedError)
      assert.equal(reverted?.reason, 'nope')
      return true
    },
  )
  const { result } = await publicClient.simulateContract({ account, address: reverterAddress, abi: Reverter.abi, functionName: 'ok' })
  assert.equal(result, 42n)
})

test('estimateGas of a transfer and of a contract call', async () => {
  const transfer = await publicClient.estimateGas({ account, to: privateKeyToAccount(generatePrivateKey()).address, value: 1n })
  assert.equal(transfer, 21000n)
  const emit = await publicClient.estimateContractGas({ account, address: reverterAddress, abi: Reverter.abi, functionName: 'emitMany', args: [3n] })
  assert.ok(emit > 21000n && emit < 1_000_000n, `emitMany(3) estimated at ${emit}`)
})

test('getFeeHistory and estimateFeesPerGas return sane values', async () => {
  const head = await publicClient.getBlockNumber()
  const history = await publicClient.getFeeHistory({ blockCount: 4, rewardPercentiles: [25, 75] })
  const count = Number(head + 1n < 4n ? head + 1n : 4n)
  assert.equal(history.oldestBlock, head + 1n - BigInt(count))
  assert.equal(history.baseFeePerGas.length, count + 1)
  assert.equal(history.gasUsedRatio.length, count)
  assert.equal(history.reward.length, count)
  for (const ratio of history.gasUsedRatio) assert.ok(ratio >= 0 && ratio <= 1, `gasUsedRatio ${ratio}`)
  for (const rewards of history.reward) {
    assert.equal(rewards.length, 2)
    assert.ok(rewards[0] <= rewards[1])
  }
  const fees = await publicClient.estimateFeesPerGas()
  const block = await publicClient.getBlock({ blockTag: 'latest' })
  assert.ok(fees.maxFeePerGas >= block.baseFeePerGas, `maxFeePerGas ${fees.maxFeePerGas} < baseFee ${block.baseFeePerGas}`)
  assert.ok(fees.maxFeePerGas >= fees.maxPriorityFeePerGas)
  assert.ok(fees.maxFeePerGas < parseUnits('10000', 9), `maxFeePerGas ${fees.maxFeePerGas} is not sane`)
  const gasPrice = await publicClient.getGasPrice()
  assert.ok(gasPrice > 0n && gasPrice < parseUnits('10000', 9), `gasPrice ${gasPrice}`)
})

test('createEventFilter + getFilterChanges returns the Ping logs of an emitMany tx', async () => {
  const pingEvent = getAbiItem({ abi: Reverter.abi, name: 'Ping' })
  const filter = await publicClient.createEventFilter({ address: reverterAddress, event: pingEvent })
  try {
    assert.deepEqual(await publicClient.getFilterChanges({ filter }), [])
    const hash = await walletClient.writeContract({ address: reverterAddress, abi: Reverter.abi, functionName: 'emitMany', args: [3n] })
    const receipt = await publicClient.waitForTransactionReceipt({ hash })
    assert.equal(receipt.logs.length, 3)
    const changes = await publicClient.getFilterChanges({ filter })
    assert.equal(changes.length, 3)
    changes.forEach((log, i) => {
      assert.equal(log.eventName, 'Ping')
      assert.equal(log.args.from.toLowerCase(), account.address.toLowerCase())
      assert.equal(log.args.i, BigInt(i))
      assert.equal(log.transactionHash, hash)
      assert.equal(log.logIndex, receipt.logs[i].logIndex)
    })
    assert.deepEqual(await publicClient.getFilterChanges({ filter }), [])
  } finally {
    assert.equal(await publicClient.uninstallFilter({ filter }), true)
  }
})

test('getBlock(latest) carries the London+ header fields', async () => {
  const block = await publicClient.getBlock({ blockTag: 'latest' })
  assert.equal(typeof block.number, 'bigint')
  assert.match(block.hash, /^0x[0-9a-f]{64}$/)
  assert.match(block.parentHash, /^0x[0-9a-f]{64}$/)
  assert.match(block.stateRoot, /^0x[0-9a-f]{64}$/)
  assert.equal(typeof block.baseFeePerGas, 'bigint')
  assert.ok(block.gasLimit > 0n)
  assert.ok(block.gasUsed <= block.gasLimit)
  assert.ok(block.timestamp > 1_600_000_000n)
  assert.equal(block.difficulty, 0n)
  assert.match(block.withdrawalsRoot, /^0x[0-9a-f]{64}$/)
  assert.equal(typeof block.blobGasUsed, 'bigint')
  assert.ok(Array.isArray(block.transactions))
  const parent = await publicClient.getBlock({ blockHash: block.parentHash })
  assert.equal(parent.number, block.number - 1n)
})

test('getTransactionCount: pending counts a just-sent tx, latest catches up once mined', async () => {
  const sender = privateKeyToAccount(DEV_KEYS[2])
  const nonce = await publicClient.getTransactionCount({ address: sender.address, blockTag: 'latest' })
  const hash = await walletClient.sendTransaction({ account: sender, to: account.address, value: 1n })
  const pending = await publicClient.getTransactionCount({ address: sender.address, blockTag: 'pending' })
  const latest = await publicClient.getTransactionCount({ address: sender.address, blockTag: 'latest' })
  assert.equal(pending, nonce + 1)
  assert.ok(latest === nonce || latest === nonce + 1, `latest ${latest} for nonce ${nonce}`)
  await publicClient.waitForTransactionReceipt({ hash })
  assert.equal(await publicClient.getTransactionCount({ address: sender.address, blockTag: 'latest' }), nonce + 1)
})

// EIP-2935 (Prague): the history storage contract, deployed at genesis as anvil and geth --dev do, serves the
// hashes of the last 8191 blocks to anyone who calls it with a block number; the block's own number and
// later ones revert.
test('EIP-2935: the history storage contract answers the hashes of past blocks', async () => {
  const history = '0x0000F90827F1C53a10cb7A02335B175320002935'
  const code = await publicClient.getCode({ address: history })
  assert.match(code, /^0x3373fffffffffffffffffffffffffffffffffffffffe14604657/)
  const head = await publicClient.getBlock({ blockTag: 'latest' })
  assert.ok(head.number >= 2n, `head ${head.number}`)
  for (const n of [0n, head.number - 2n, head.number - 1n]) {
    const { data } = await publicClient.call({ to: history, data: numberToHex(n, { size: 32 }), blockNumber: head.number })
    assert.equal(data, (await publicClient.getBlock({ blockNumber: n })).hash, `hash of block ${n}`)
  }
  await assert.rejects(publicClient.call({ to: history, data: numberToHex(head.number, { size: 32 }), blockNumber: head.number }), /revert/i)
})

// eth_createAccessList answers the gas of a run with the list it found; a transaction that carries the list
// uses exactly that: an ERC20 transfer to a new holder, then one that empties its sender's balance (a
// cleared slot: a refund) and pays a holder that already has tokens.
test('createAccessList: a transaction carrying the list uses the gas it answered', async () => {
  const token = await deploy(Token)
  const holder = privateKeyToAccount(DEV_KEYS[3])
  const third = privateKeyToAccount(generatePrivateKey()).address
  const transfer = (to, amount) => encodeFunctionData({ abi: Token.abi, functionName: 'transfer', args: [to, amount] })
  const cases = [
    { sender: account, data: transfer(holder.address, 500n) },
    { sender: holder, data: transfer(third, 500n) },
  ]
  for (const [i, { sender, data }] of cases.entries()) {
    const { accessList, gasUsed } = await publicClient.createAccessList({ account: sender, to: token, data })
    assert.equal(accessList.length, 1, JSON.stringify(accessList))
    assert.equal(accessList[0].address.toLowerCase(), token.toLowerCase())
    assert.equal(accessList[0].storageKeys.length, 2, 'the two balances')
    const hash = await walletClient.sendTransaction({ account: sender, to: token, data, accessList, gas: gasUsed + 30_000n })
    const receipt = await publicClient.waitForTransactionReceipt({ hash })
    assert.equal(receipt.status, 'success')
    assert.equal(receipt.gasUsed, gasUsed, `case ${i}`)
  }
})
