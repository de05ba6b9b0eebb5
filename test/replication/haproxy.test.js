// One public address over a producer and two replicas: HAProxy in front (health checks on /ready,
// WebSocket tunnels), ethers and viem using it as they would any endpoint, and a replica killed under load.

import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { Contract, ContractFactory, JsonRpcProvider, NonceManager, Wallet, WebSocketProvider } from 'ethers'
import { createPublicClient, createWalletClient, http, parseEther } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { compile } from '../helpers/contracts.js'
import { startHaproxy } from '../helpers/haproxy.js'
import { startNats } from '../helpers/nats.js'
import { CHAIN_ID, DEV_ADDRESSES, DEV_KEYS } from '../helpers/node.js'
import { assertSameChain, startProducer, startReplica, waitForHead, writeGenesis } from '../helpers/replication.js'
import { rawPost, rpcResult, sleep, withTimeout } from '../helpers/rpc.js'
import { keelChain } from '../helpers/viem.js'

const { Token } = compile()

let nats, producer, replicas, lb, token

before(async () => {
  nats = await startNats()
  producer = await startProducer(nats, writeGenesis(), { blockTime: 1 })
  replicas = await Promise.all([startReplica(nats, producer), startReplica(nats, producer)])
  lb = await startHaproxy([producer, ...replicas])
})

after(async () => {
  await lb?.stop()
  await Promise.all((replicas ?? []).map((r) => r.stop()))
  await producer?.stop()
  await nats?.close()
})

test('ethers through the load balancer: an ERC20 deployed and transferred, newHeads and logs over a WebSocket through it', async () => {
  const provider = new JsonRpcProvider(lb.url, CHAIN_ID, { staticNetwork: true, pollingInterval: 200 })
  const ws = new WebSocketProvider(lb.wsUrl, CHAIN_ID)
  try {
    const heads = []
    await ws.on('block', (n) => heads.push(n))
    const deployer = new NonceManager(new Wallet(DEV_KEYS[0], provider))
    const contract = await new ContractFactory(Token.abi, Token.bytecode, deployer).deploy()
    await withTimeout(contract.waitForDeployment(), 60_000, 'deployment through the load balancer')
    token = await contract.getAddress()
    const logs = []
    await ws.on({ address: token }, (log) => logs.push(log))
    await sleep(300)
    const erc20 = new Contract(token, Token.abi, deployer)
    for (let i = 1; i <= 3; i++) {
      const receipt = await withTimeout((await erc20.transfer(DEV_ADDRESSES[i], 10n * BigInt(i))).wait(), 60_000, `transfer ${i}`)
      assert.equal(receipt.status, 1)
    }
    const deadline = Date.now() + 15_000
    while ((logs.length < 3 || heads.length < 3) && Date.now() < deadline) await sleep(100)
    assert.equal(logs.length, 3, 'three Transfer logs over the WebSocket')
    assert.ok(heads.length >= 3, `newHeads over the WebSocket (${heads.length})`)
  } finally {
    provider.destroy()
    await ws.destroy()
  }
})

test('viem through the load balancer: a transfer and its receipt, whichever node answers each poll', async () => {
  const chain = keelChain(lb.url)
  const wallet = createWalletClient({ account: privateKeyToAccount(DEV_KEYS[1]), chain, transport: http(lb.url) })
  const client = createPublicClient({ chain, transport: http(lb.url), pollingInterval: 200 })
  const hash = await wallet.sendTransaction({ to: DEV_ADDRESSES[7], value: parseEther('0.5') })
  const receipt = await withTimeout(client.waitForTransactionReceipt({ hash }), 60_000, 'viem receipt')
  assert.equal(receipt.status, 'success')
  // every node has it now
  for (const node of [producer, ...replicas]) {
    await waitForHead(node.url, receipt.blockNumber)
    assert.equal((await rpcResult(node.url, 'eth_getTransactionReceipt', [hash])).blockHash, receipt.blockHash)
  }
})

test('a replica killed -9 under load: clients see every request answered (retried on another node), and it catches up', async () => {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getBalance', params: [DEV_ADDRESSES[7], 'latest'] })
  let answered = 0
  const failures = []
  let running = true
  const worker = async () => {
    while (running) {
      const res = await rawPost(lb.url, body).catch((err) => ({ status: 0, json: undefined, text: err.message }))
      if (res.status === 200 && typeof res.json?.result === 'string') answered++
      else failures.push(`${res.status} ${res.text.slice(0, 200)}`)
    }
  }
  const load = Array.from({ length: 8 }, worker)
  await sleep(1000)
  await replicas[0].kill9()
  await sleep(2000)
  running = false
  await Promise.all(load)
  assert.deepEqual(failures, [], `${failures.length} of ${answered + failures.length} requests failed through the load balancer`)
  assert.ok(answered > 100, `requests kept being answered (${answered})`)

  replicas[0] = await replicas[0].restart()
  await assertSameChain(producer, replicas[0], { addresses: DEV_ADDRESSES.slice(0, 8), contracts: [token] })
  await assertSameChain(producer, replicas[1], { addresses: DEV_ADDRESSES.slice(0, 8), contracts: [token] })
})
