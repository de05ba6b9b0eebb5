// ethers v6 against a real Keel process over HTTP.

import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { ContractFactory, Contract, JsonRpcProvider, NonceManager, Wallet, parseEther, parseUnits } from 'ethers'
import { compile } from '../helpers/contracts.js'
import { CHAIN_ID, DEV_ADDRESSES, DEV_KEYS, startNode } from '../helpers/node.js'
import { sleep, withTimeout } from '../helpers/rpc.js'

const { Token, Reverter } = compile()

let node
let provider
let deployer
let token

before(async () => {
  node = await startNode({ blockTime: 1 })
  provider = new JsonRpcProvider(node.url, undefined, { pollingInterval: 250 })
  deployer = new Wallet(DEV_KEYS[0], provider)
})

after(async () => {
  provider?.destroy()
  await node?.stop()
})

/** Keeps blocks coming while a test waits for them, whatever the node's empty-block policy. */
async function withTraffic(wallet, body) {
  let running = true
  const traffic = (async () => {
    while (running) {
      const tx = await wallet.sendTransaction({ to: Wallet.createRandom().address, value: 1n })
      await tx.wait()
    }
  })()
  try {
    return await body()
  } finally {
    running = false
    await traffic
  }
}

test('getNetwork reports chain id 24589', async () => {
  const network = await provider.getNetwork()
  assert.equal(network.chainId, BigInt(CHAIN_ID))
  assert.equal(network.name, 'unknown')
})

test('getBlockNumber advances with --block-time 1', async () => {
  const first = await provider.getBlockNumber()
  const later = await withTraffic(new Wallet(DEV_KEYS[1], provider), async () => {
    const deadline = Date.now() + 10_000
    while (Date.now() < deadline) {
      const current = await provider.getBlockNumber()
      if (current >= first + 2) return current
      await sleep(200)
    }
    return provider.getBlockNumber()
  })
  assert.ok(later >= first + 2, `block number went from ${first} to ${later} only`)
})

test('dev account 0 holds 10,000 ether at genesis', async () => {
  assert.equal(await provider.getBalance(DEV_ADDRESSES[0], 0), parseEther('10000'))
})

test('a native transfer is mined and costs exactly value + gasUsed * gasPrice', async () => {
  const sender = new Wallet(DEV_KEYS[2], provider)
  const recipient = Wallet.createRandom().address
  const value = parseEther('1.25')
  const tx = await sender.sendTransaction({ to: recipient, value })
  const receipt = await tx.wait()
  assert.equal(receipt.status, 1)
  assert.equal(receipt.hash, tx.hash)
  assert.equal(receipt.from, sender.address)
  assert.equal(receipt.to, recipient)
  assert.equal(receipt.gasUsed, 21000n)
  const before = await provider.getBalance(sender.address, receipt.blockNumber - 1)
  const afterBalance = await provider.getBalance(sender.address, receipt.blockNumber)
  assert.equal(before - afterBalance, value + receipt.gasUsed * receipt.gasPrice)
  assert.equal(await provider.getBalance(recipient), value)
  const mined = await provider.getTransaction(tx.hash)
  assert.equal(mined.blockHash, receipt.blockHash)
  assert.equal(mined.chainId, BigInt(CHAIN_ID))
})

test('Token deploys through a ContractFactory', async () => {
  const factory = new ContractFactory(Token.abi, Token.bytecode, deployer)
  const deployed = await factory.deploy()
  await deployed.waitForDeployment()
  token = deployed
  const receipt = await deployed.deploymentTransaction().wait()
  assert.equal(receipt.status, 1)
  assert.equal(receipt.contractAddress, await deployed.getAddress())
  assert.equal(await provider.getCode(receipt.contractAddress), Token.deployedBytecode)
  assert.equal(await token.name(), 'Keel Test Token')
  assert.equal(await token.symbol(), 'KTT')
  assert.equal(await token.decimals(), 18n)
  assert.equal(await token.totalSupply(), parseUnits('1000000', 18))
})

test('token transfer, balanceOf and queryFilter(Transfer)', async () => {
  const recipient = DEV_ADDRESSES[3]
  const amount = parseUnits('1234.5', 18)
  const receipt = await (await token.transfer(recipient, amount)).wait()
  assert.equal(receipt.status, 1)
  assert.equal(await token.balanceOf(recipient), amount)
  assert.equal(await token.balanceOf(deployer.address), parseUnits('1000000', 18) - amount)

  const events = await token.queryFilter('Transfer')
  assert.equal(events.length, 2)
  const [mint, transfer] = events
  assert.deepEqual([...mint.args], ['0x0000000000000000000000000000000000000000', deployer.address, parseUnits('1000000', 18)])
  assert.deepEqual([...transfer.args], [deployer.address, recipient, amount])
  assert.equal(transfer.transactionHash, receipt.hash)
  assert.equal(transfer.blockHash, receipt.blockHash)
  assert.equal(transfer.eventName, 'Transfer')
})

test('a transfer beyond the balance reverts with ERC20InsufficientBalance (staticCall and estimateGas)', async () => {
  const poor = new Wallet(DEV_KEYS[4], provider)
  const asPoor = token.connect(poor)
  const needed = 5n

  await assert.rejects(asPoor.transfer.staticCall(DEV_ADDRESSES[0], needed), (err) => {
    assert.equal(err.code, 'CALL_EXCEPTION')
    assert.equal(err.revert?.name, 'ERC20InsufficientBalance')
    assert.deepEqual([...err.revert.args], [poor.address, 0n, needed])
    return true
  })

  await assert.rejects(asPoor.transfer.estimateGas(DEV_ADDRESSES[0], needed), (err) => {
    assert.equal(err.code, 'CALL_EXCEPTION')
    assert.match(err.data, /^0x[0-9a-f]+$/)
    const decoded = token.interface.parseError(err.data)
    assert.equal(decoded?.name, 'ERC20InsufficientBalance')
    assert.deepEqual([...decoded.args], [poor.address, 0n, needed])
    return true
  })
})

test('Reverter.failRequire rejects with reason "nope"', async () => {
  const factory = new ContractFactory(Reverter.abi, Reverter.bytecode, deployer)
  const reverter = await factory.deploy()
  await reverter.waitForDeployment()
  assert.equal(await reverter.ok(), 42n)
  await assert.rejects(reverter.failRequire.staticCall(), (err) => {
    assert.equal(err.code, 'CALL_EXCEPTION')
    assert.equal(err.reason, 'nope')
    assert.equal(err.revert?.name, 'Error')
    return true
  })
  await assert.rejects(reverter.failPanic.staticCall(), (err) => {
    assert.equal(err.code, 'CALL_EXCEPTION')
    assert.equal(err.revert?.name, 'Panic')
    assert.equal(Number(err.revert.args[0]), 0x12)
    return true
  })
})

test("provider.on('block') delivers at least 2 new blocks over HTTP polling", async () => {
  const seen = []
  const gotTwo = new Promise((resolve) => {
    provider.on('block', (number) => {
      seen.push(number)
      if (seen.length >= 2) resolve()
    })
  })
  try {
    await withTraffic(new Wallet(DEV_KEYS[1], provider), () =>
      withTimeout(gotTwo, 15_000, '2 block events'),
    )
  } finally {
    await provider.off('block')
  }
  for (let i = 1; i < seen.length; i++) assert.ok(seen[i] > seen[i - 1], `block events out of order: ${seen}`)
})

test("contract.on('Transfer') receives an event through eth_newFilter/eth_getFilterChanges", async () => {
  const watcher = new Contract(await token.getAddress(), Token.abi, provider)
  const recipient = Wallet.createRandom().address
  const received = new Promise((resolve) => {
    watcher.on('Transfer', (from, to, value, payload) => resolve({ from, to, value, payload }))
  })
  // Give the filter a polling round to be installed before the event happens.
  await sleep(600)
  const receipt = await (await token.transfer(recipient, 77n)).wait()
  try {
    const event = await withTimeout(received, 15_000, 'Transfer event')
    assert.equal(event.from, deployer.address)
    assert.equal(event.to, recipient)
    assert.equal(event.value, 77n)
    assert.equal(event.payload.log.transactionHash, receipt.hash)
  } finally {
    await watcher.removeAllListeners()
  }
})

test('20 concurrent transfers from 4 NonceManager wallets are all mined', async () => {
  const senders = DEV_KEYS.slice(5, 9).map((key) => new NonceManager(new Wallet(key, provider)))
  const recipient = Wallet.createRandom().address
  const sends = []
  for (let round = 0; round < 5; round++) {
    for (const sender of senders) sends.push(sender.sendTransaction({ to: recipient, value: 1000n, gasLimit: 21000n }))
  }
  const txs = await Promise.all(sends)
  assert.equal(new Set(txs.map((tx) => tx.hash)).size, 20)
  const receipts = await Promise.all(txs.map((tx) => tx.wait()))
  for (const receipt of receipts) assert.equal(receipt.status, 1)
  assert.equal(await provider.getBalance(recipient), 20_000n)
  for (const sender of senders) {
    assert.equal(await provider.getTransactionCount(await sender.getAddress(), 'latest'), 5)
  }
})
