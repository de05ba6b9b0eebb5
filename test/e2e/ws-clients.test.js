// Subscriptions through the WebSocket transports of ethers v6, viem and web3.js v4 against a real Keel
// process: new blocks and Transfer events arrive through eth_subscribe, in order.

import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { Contract, ContractFactory, JsonRpcProvider, NonceManager, Wallet, WebSocketProvider } from 'ethers'
import { createPublicClient, defineChain, webSocket } from 'viem'
import { Web3 } from 'web3'
import { compile } from '../helpers/contracts.js'
import { CHAIN_ID, DEV_ADDRESSES, DEV_KEYS, startNode } from '../helpers/node.js'
import { sleep, withTimeout } from '../helpers/rpc.js'

const { Token } = compile()

let node
let httpProvider
let owner
let token
let tokenAddress

before(async () => {
  node = await startNode({ blockTime: 1, args: ['--metrics-port', '0'] })
  httpProvider = new JsonRpcProvider(node.url, undefined, { pollingInterval: 100, staticNetwork: true })
  owner = new NonceManager(new Wallet(DEV_KEYS[0], httpProvider))
  token = await (await new ContractFactory(Token.abi, Token.bytecode, owner).deploy()).waitForDeployment()
  tokenAddress = await token.getAddress()
})

after(async () => {
  httpProvider?.destroy()
  await node?.stop()
})

/** Sends `count` token transfers (amounts 1..count) to `to`, in one block where possible. */
async function transfers(to, count) {
  const sent = []
  for (let i = 1; i <= count; i++) sent.push(await token.transfer(to, BigInt(i)))
  await Promise.all(sent.map((tx) => tx.wait()))
}

const until = async (check, ms, what) =>
  withTimeout(
    (async () => {
      while (!check()) await sleep(25)
    })(),
    ms,
    what,
  )

const assertConsecutive = (numbers, what) => {
  for (let i = 1; i < numbers.length; i++) assert.equal(numbers[i], numbers[i - 1] + 1, `${what}: ${numbers.join(',')}`)
}

test('ethers WebSocketProvider: on("block") and contract.on("Transfer")', { timeout: 30_000 }, async () => {
  const provider = new WebSocketProvider(node.wsUrl)
  try {
    const blocks = []
    await provider.on('block', (n) => blocks.push(n))
    const recipient = DEV_ADDRESSES[4]
    const events = []
    const watched = new Contract(tokenAddress, Token.abi, provider)
    await watched.on('Transfer', (from, to, value, event) => events.push({ from, to, value, blockNumber: event.log.blockNumber }))
    await until(() => blocks.length >= 1, 10_000, 'first block event')
    await transfers(recipient, 3)
    await until(() => events.length >= 3 && blocks.length >= 3, 10_000, 'three Transfer events')
    assertConsecutive(blocks, 'ethers block events')
    assert.deepEqual(events.map((e) => e.value), [1n, 2n, 3n])
    for (const e of events) {
      assert.equal(e.from, await owner.getAddress())
      assert.equal(e.to, recipient)
    }
  } finally {
    await provider.destroy()
  }
})

test('viem webSocket transport: watchBlocks and watchContractEvent', { timeout: 30_000 }, async () => {
  const chain = defineChain({
    id: CHAIN_ID,
    name: 'Keel',
    nativeCurrency: { name: 'Keel', symbol: 'KEEL', decimals: 18 },
    rpcUrls: { default: { http: [node.url], webSocket: [node.wsUrl] } },
  })
  const client = createPublicClient({ chain, transport: webSocket(node.wsUrl) })
  const blocks = []
  const logs = []
  const errors = []
  const stopBlocks = client.watchBlocks({ poll: false, onBlock: (block) => blocks.push(block), onError: (e) => errors.push(e) })
  const stopEvents = client.watchContractEvent({
    address: tokenAddress,
    abi: Token.abi,
    eventName: 'Transfer',
    poll: false,
    onLogs: (batch) => logs.push(...batch),
    onError: (e) => errors.push(e),
  })
  try {
    await until(() => blocks.length >= 1, 10_000, 'first block')
    await transfers(DEV_ADDRESSES[5], 3)
    await until(() => logs.length >= 3 && blocks.length >= 3, 10_000, 'three logs')
    assert.deepEqual(errors, [])
    assertConsecutive(blocks.map((b) => Number(b.number)), 'viem blocks')
    for (let i = 1; i < blocks.length; i++) assert.equal(blocks[i].parentHash, blocks[i - 1].hash)
    assert.equal(typeof blocks[0].baseFeePerGas, 'bigint')
    assert.deepEqual(logs.map((l) => l.args.value), [1n, 2n, 3n])
    for (const log of logs) {
      assert.equal(log.eventName, 'Transfer')
      assert.equal(log.removed, false)
      assert.equal(log.args.to, DEV_ADDRESSES[5])
    }
  } finally {
    stopBlocks()
    stopEvents()
    await (await client.transport.getRpcClient()).close()
  }
})

test('web3.js v4: subscribe("newBlockHeaders") and subscribe("logs")', { timeout: 30_000 }, async () => {
  const web3 = new Web3(new Web3.providers.WebsocketProvider(node.wsUrl))
  try {
    const heads = []
    const logs = []
    const headers = await web3.eth.subscribe('newBlockHeaders')
    headers.on('data', (h) => heads.push(h))
    const transferTopic = web3.utils.keccak256('Transfer(address,address,uint256)')
    const logSub = await web3.eth.subscribe('logs', { address: tokenAddress, topics: [transferTopic] })
    logSub.on('data', (log) => logs.push(log))
    await until(() => heads.length >= 1, 10_000, 'first header')
    await transfers(DEV_ADDRESSES[6], 2)
    await until(() => logs.length >= 2 && heads.length >= 3, 10_000, 'two logs')
    assertConsecutive(heads.map((h) => Number(h.number)), 'web3 headers')
    for (const h of heads) assert.match(h.hash, /^0x[0-9a-f]{64}$/)
    assert.deepEqual(logs.map((l) => BigInt(l.data)), [1n, 2n])
    for (const log of logs) {
      assert.equal(log.address.toLowerCase(), tokenAddress.toLowerCase())
      assert.equal(log.removed, false)
    }
    await headers.unsubscribe()
    await logSub.unsubscribe()
  } finally {
    web3.currentProvider.disconnect()
  }
})
