// Read replicas over a real NATS JetStream: a producer publishing its blocks, two replicas following,
// clients writing through the replicas, and every answer compared with the producer's at every height.

import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { Contract, ContractFactory, JsonRpcProvider, NonceManager, Transaction, Wallet, WebSocketProvider, parseEther } from 'ethers'
import { createPublicClient, createWalletClient, http } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { compile } from '../helpers/contracts.js'
import { startNats } from '../helpers/nats.js'
import { CHAIN_ID, DEV_ADDRESSES, DEV_KEYS } from '../helpers/node.js'
import { assertSameChain, ready, startProducer, startReplica, writeGenesis } from '../helpers/replication.js'
import { rpc, rpcResult, sleep, withTimeout } from '../helpers/rpc.js'
import { keelChain } from '../helpers/viem.js'

const { Token } = compile()

let nats
let genesis
let producer
let replicaA
let replicaB
let token

before(async () => {
  nats = await startNats()
  genesis = writeGenesis()
  producer = await startProducer(nats, genesis)
  // both start from the producer's snapshot (no --genesis): the command line a fresh replica needs
  // B also runs every block itself (--replica-verify execute)
  ;[replicaA, replicaB] = await Promise.all([startReplica(nats, producer), startReplica(nats, producer, { args: ['--replica-verify', 'execute'] })])
})

after(async () => {
  await Promise.all([replicaA?.stop(), replicaB?.stop()])
  await producer?.stop()
  await nats?.close()
})

test('ethers through a replica deploys an ERC20 and transfers; receipts and newHeads come from the replica', async () => {
  const provider = new JsonRpcProvider(replicaA.url, CHAIN_ID, { staticNetwork: true, pollingInterval: 100 })
  const ws = new WebSocketProvider(replicaB.wsUrl, CHAIN_ID)
  try {
    const heads = []
    await ws.on('block', (n) => heads.push(n))
    // sends back to back: ethers caches eth_getTransactionCount for 250 ms, and a replica's receipt can come sooner
    const deployer = new NonceManager(new Wallet(DEV_KEYS[0], provider))
    const contract = await new ContractFactory(Token.abi, Token.bytecode, deployer).deploy()
    await withTimeout(contract.waitForDeployment(), 30_000, 'deployment through a replica')
    token = await contract.getAddress()
    assert.equal(await provider.getCode(token), Token.deployedBytecode, 'the replica serves the deployed code')

    const erc20 = new Contract(token, Token.abi, deployer)
    for (let i = 1; i <= 3; i++) {
      const tx = await erc20.transfer(DEV_ADDRESSES[i], 1000n * BigInt(i))
      const receipt = await withTimeout(tx.wait(), 30_000, `transfer ${i}`)
      assert.equal(receipt.status, 1)
    }
    const native = await deployer.sendTransaction({ to: DEV_ADDRESSES[5], value: parseEther('1') })
    assert.equal((await withTimeout(native.wait(), 30_000, 'native transfer')).status, 1)
    assert.equal(await erc20.balanceOf(DEV_ADDRESSES[3]), 3000n)

    const head = await provider.getBlockNumber()
    const deadline = Date.now() + 10_000
    while (!heads.includes(head) && Date.now() < deadline) await sleep(50)
    assert.ok(heads.includes(head), `newHeads on replica B announced block ${head} (got ${heads.join(',')})`)
  } finally {
    provider.destroy()
    await ws.destroy()
  }
})

test('viem through the other replica: a transfer, its receipt, and a logs subscription sees it', async () => {
  const chain = keelChain(replicaB.url)
  const account = privateKeyToAccount(DEV_KEYS[1])
  const wallet = createWalletClient({ account, chain, transport: http(replicaB.url) })
  const client = createPublicClient({ chain, transport: http(replicaB.url), pollingInterval: 100 })
  const ws = new WebSocketProvider(replicaA.wsUrl, CHAIN_ID)
  try {
    const logs = []
    await ws.on({ address: token }, (log) => logs.push(log))
    await sleep(200)
    const hash = await wallet.writeContract({ address: token, abi: Token.abi, functionName: 'approve', args: [DEV_ADDRESSES[2], 77n] })
    const receipt = await withTimeout(client.waitForTransactionReceipt({ hash }), 30_000, 'viem receipt through a replica')
    assert.equal(receipt.status, 'success')
    const deadline = Date.now() + 10_000
    while (logs.length === 0 && Date.now() < deadline) await sleep(50)
    assert.equal(logs.length, 1, 'the logs subscription on replica A saw the Approval')
    assert.equal(logs[0].transactionHash, hash)
  } finally {
    await ws.destroy()
  }
})

test('every replica answers exactly as the producer for blocks, receipts, balances, storage, code and proofs at every height', async () => {
  const addresses = DEV_ADDRESSES.slice(0, 6)
  const headA = await assertSameChain(producer, replicaA, { addresses, contracts: [token] })
  const headB = await assertSameChain(producer, replicaB, { addresses, contracts: [token] })
  assert.ok(headA >= 6n && headB >= 6n, `blocks were replicated (heads ${headA}, ${headB})`)
})

test("a write through a replica gets the producer's exact answer; pending nonces are the producer's", async () => {
  const wallet = new Wallet(DEV_KEYS[4])
  const nonce = Number(await rpcResult(producer.url, 'eth_getTransactionCount', [wallet.address, 'pending']))
  const sign = (n, gas = 21_000) =>
    wallet.signTransaction({ type: 2, chainId: CHAIN_ID, nonce: n, to: DEV_ADDRESSES[6], value: 1n, gasLimit: gas, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1n })

  // a nonce gap: pooled on the producer, not mined; the replica's pending nonce and lookup are the producer's
  const gapped = await sign(nonce + 1)
  const sent = await rpc(replicaA.url, 'eth_sendRawTransaction', [gapped])
  assert.equal(sent.result, Transaction.from(gapped).hash)
  const [onProducer, onReplica] = await Promise.all([
    rpcResult(producer.url, 'txpool_status', []),
    rpcResult(replicaB.url, 'txpool_status', []),
  ])
  assert.deepEqual(onReplica, onProducer)
  assert.equal(onReplica.queued, '0x1')
  const byHash = await rpcResult(replicaB.url, 'eth_getTransactionByHash', [sent.result])
  assert.equal(byHash?.hash, sent.result, 'replica B finds a transaction sent through replica A at once')
  assert.equal(byHash.blockHash, null)

  // the same transaction again: the producer's pool refuses it, and the replica passes its words on
  const [direct, forwarded] = await Promise.all([rpc(producer.url, 'eth_sendRawTransaction', [gapped]), rpc(replicaB.url, 'eth_sendRawTransaction', [gapped])])
  assert.ok(direct.error !== undefined, 'the producer refuses a transaction it holds')
  assert.deepEqual(forwarded.error, direct.error)

  // fill the gap: both mined, and every node's pending nonce moves on
  const filler = await rpc(replicaB.url, 'eth_sendRawTransaction', [await sign(nonce)])
  assert.equal(filler.error, undefined)
  const receipt = await waitForReceiptOn(replicaA.url, sent.result)
  assert.equal(receipt.status, '0x1')
  const pending = await Promise.all([producer, replicaA, replicaB].map((n) => rpcResult(n.url, 'eth_getTransactionCount', [wallet.address, 'pending'])))
  assert.deepEqual(pending, Array(3).fill(`0x${(nonce + 2).toString(16)}`))

  // a nonce too low: the producer's wording, code and message, through the replica
  const stale = await rpc(replicaA.url, 'eth_sendRawTransaction', [await sign(nonce)])
  assert.equal(stale.error?.code, -32000)
  assert.match(stale.error.message, /^nonce too low: next nonce \d+, tx nonce \d+$/)
})

test("a replica that joins late starts from the producer's snapshot and answers as the producer", async () => {
  const head = BigInt(await rpcResult(producer.url, 'eth_blockNumber', []))
  const late = await startReplica(nats, producer)
  try {
    const restored = /"msg":"replica restored the producer's snapshot","head":"(\d+)"/.exec(late.stderr())
    assert.ok(restored !== null, `the replica says it restored a snapshot:\n${late.stderr()}`)
    assert.ok(BigInt(restored[1]) >= head, `the snapshot is at the head (${restored[1]} vs ${head})`)
    await assertSameChain(producer, late, { addresses: DEV_ADDRESSES.slice(0, 6), contracts: [token] })
  } finally {
    await late.stop()
  }
})

test('a replica is ready while it keeps up, and says how far behind it is', async () => {
  const [status, body] = await ready(replicaA.url)
  assert.equal(status, 200, JSON.stringify(body))
  assert.equal(body.status, 'ready')
  assert.equal(body.blocksBehind, 0)
  assert.equal(body.stream, 'connected')
})

async function waitForReceiptOn(url, hash, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const receipt = await rpcResult(url, 'eth_getTransactionReceipt', [hash])
    if (receipt !== null) return receipt
    await sleep(50)
  }
  throw new Error(`no receipt for ${hash} on ${url}`)
}


test("newPendingTransactions on a replica's WebSocket announce what the producer pooled", async () => {
  const ws = new WebSocketProvider(replicaA.wsUrl, CHAIN_ID)
  try {
    const seen = []
    await ws.on('pending', (hash) => seen.push(hash))
    await sleep(300)
    // a nonce gap keeps it pooled on the producer: only the producer's pool knows it
    const wallet = new Wallet(DEV_KEYS[8])
    const nonce = Number(await rpcResult(producer.url, 'eth_getTransactionCount', [wallet.address, 'pending']))
    const raw = await wallet.signTransaction({ type: 2, chainId: CHAIN_ID, nonce: nonce + 5, to: DEV_ADDRESSES[1], value: 1n, gasLimit: 21_000, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1n })
    const hash = await rpcResult(producer.url, 'eth_sendRawTransaction', [raw])
    const deadline = Date.now() + 10_000
    while (!seen.includes(hash) && Date.now() < deadline) await sleep(50)
    assert.ok(seen.includes(hash), 'the replica announced the hash the producer pooled')
  } finally {
    await ws.destroy()
  }
})

test("'pending' reads on a replica are the producer's; with the producer down, reads go on and writes get a clear error", async () => {
  const who = DEV_ADDRESSES[4]
  for (const [method, params] of [
    ['eth_getBlockByNumber', ['pending', false]],
    ['eth_getBalance', [who, 'pending']],
    ['eth_getTransactionCount', [who, 'pending']],
    ['eth_call', [{ to: token, data: '0x18160ddd' }, 'pending']],
  ]) {
    // a block sealed between the two reads changes 'pending': compared when the head held still
    for (let attempt = 1; ; attempt++) {
      const headBefore = await rpcResult(producer.url, 'eth_blockNumber', [])
      const [direct, through] = await Promise.all([rpcResult(producer.url, method, params), rpcResult(replicaA.url, method, params)])
      if ((await rpcResult(producer.url, 'eth_blockNumber', [])) !== headBefore && attempt < 5) continue
      assert.deepEqual(through, direct, `${method} at 'pending'`)
      break
    }
  }

  await producer.stop()
  const head = await rpcResult(replicaA.url, 'eth_blockNumber', [])
  assert.equal(typeof (await rpcResult(replicaA.url, 'eth_getBalance', [who, 'latest'])), 'string')
  assert.ok((await rpcResult(replicaA.url, 'eth_getBlockByNumber', [head, true])) !== null)
  const raw = await new Wallet(DEV_KEYS[4]).signTransaction({ type: 2, chainId: CHAIN_ID, nonce: 1000, to: DEV_ADDRESSES[1], value: 1n, gasLimit: 21_000, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1n })
  for (const [method, params] of [
    ['eth_sendRawTransaction', [raw]],
    ['eth_getBalance', [who, 'pending']],
    ['eth_getTransactionCount', [who, 'pending']],
  ]) {
    const answer = await rpc(replicaA.url, method, params)
    assert.equal(answer.error?.code, -32000, `${method}: ${JSON.stringify(answer)}`)
    assert.match(answer.error.message, /^the block producer at http:\/\/127\.0\.0\.1:\d+ cannot be reached: /)
  }
})
