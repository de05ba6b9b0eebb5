// The eth_call result cache as a client sees it: a repeated request at 'latest' is answered from the
// cache (no pool call) with the same answer, reverts included; a new head runs it again; invalid
// requests are refused every time.

import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { ContractFactory, Interface, JsonRpcProvider, Wallet } from 'ethers'
import { compile } from '../helpers/contracts.js'
import { CHAIN_ID, DEV_KEYS, startNode } from '../helpers/node.js'
import { scrape, value } from '../helpers/prom.js'
import { rpc, rpcResult } from '../helpers/rpc.js'

const { Token, Reverter } = compile()
let node
let provider
let token
let reverter

before(async () => {
  node = await startNode({ blockTime: 0 })
  provider = new JsonRpcProvider(node.url, CHAIN_ID, { staticNetwork: true, pollingInterval: 100, cacheTimeout: -1 }) // no client-side answer cache: nonces move between requests
  const deployer = new Wallet(DEV_KEYS[0], provider)
  token = await (await new ContractFactory(Token.abi, Token.bytecode, deployer).deploy()).waitForDeployment()
  reverter = await (await new ContractFactory(Reverter.abi, Reverter.bytecode, deployer).deploy()).waitForDeployment()
})

after(async () => {
  provider?.destroy()
  await node?.stop()
})

const poolCalls = async () => value(await scrape(node.metricsUrl), 'keel_call_pool_calls_total')

test('a repeated eth_call at latest is answered from the cache until the head moves', async () => {
  const holder = Wallet.createRandom().address
  const iface = new Interface(Token.abi)
  const call = { to: await token.getAddress(), data: iface.encodeFunctionData('balanceOf', [holder]) }
  const zero = await rpcResult(node.url, 'eth_call', [call, 'latest'])
  assert.equal(BigInt(zero), 0n)

  const runs = await poolCalls()
  for (let i = 0; i < 5; i++) assert.equal(await rpcResult(node.url, 'eth_call', [call, 'latest']), zero)
  assert.equal(await rpcResult(node.url, 'eth_call', [call]), zero, 'the tag omitted is the same question')
  assert.equal(await poolCalls(), runs, 'the repeats ran nothing in the pool')

  await (await token.transfer(holder, 7n)).wait()
  const beforeNewHead = await poolCalls()
  const moved = await rpcResult(node.url, 'eth_call', [call, 'latest'])
  assert.equal(BigInt(moved), 7n, 'the new head answers anew')
  assert.equal(await poolCalls(), beforeNewHead + 1)
})

test('a cached revert is answered as the revert, every time', async () => {
  const call = { to: await reverter.getAddress(), data: new Interface(Reverter.abi).encodeFunctionData('failRequire') }
  const first = await rpc(node.url, 'eth_call', [call, 'latest'])
  const runs = await poolCalls()
  const again = await rpc(node.url, 'eth_call', [call, 'latest'])
  assert.equal(first.error.code, 3)
  assert.deepEqual(again.error, first.error)
  assert.equal(await poolCalls(), runs, 'the repeat ran nothing in the pool')
})

test('an invalid request is refused every time, not answered from the cache', async () => {
  for (let i = 0; i < 2; i++) {
    const bad = await rpc(node.url, 'eth_call', [{ to: '0x1234', data: '0x' }, 'latest'])
    assert.equal(bad.error.code, -32602)
  }
})
