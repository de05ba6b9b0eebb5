import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../../dist/config/load.js'
import { devGenesis } from '../../dist/chain/genesis.js'
import { scratchGenesis, startProducerWarmUp, throwawaySenders, warmUpDir } from '../../dist/chain/producer-warm-up.js'
import { loadFastCrypto } from '../../dist/evm/crypto.js'
import { WARM_UP_TOKEN_ADDRESS, WARM_UP_TOKEN_CODE } from '../../dist/chain/warm-up-token.js'

function scratchDataDir(t) {
  const dataDir = mkdtempSync(join(tmpdir(), 'keel-pwu-'))
  t.after(() => rmSync(dataDir, { recursive: true, force: true }))
  return { dataDir, config: loadConfig({ flags: { 'data-dir': dataDir, 'log-level': 'silent' }, env: {} }) }
}

test('the warm-up mines its transfers on a scratch chain and deletes it, replacing one a crash left behind', async (t) => {
  const { dataDir, config } = scratchDataDir(t)
  mkdirSync(warmUpDir(dataDir))
  writeFileSync(join(warmUpDir(dataDir), 'LOCK'), 'left by a node that died mid warm-up')
  const progress = await startProducerWarmUp(config, devGenesis(24589), () => true, 3, 96).done
  // every transfer mined: none refused by the pool, none left out of its block; the second block's token
  // transfers all succeeded and logged (the senders' balances sit in the token's own slots)
  assert.deepEqual(progress, { blocks: 3, transfers: 3 * 96, tokenTransfers: 96 })
  assert.equal(existsSync(warmUpDir(dataDir)), false)
  assert.deepEqual(readdirSync(dataDir), [], 'nothing else is written to the data folder')
})

test("the scratch chain's genesis: the chain's fork schedule and system contracts, none of its other accounts", async () => {
  await loadFastCrypto()
  const genesis = devGenesis(24589)
  const contract = { code: '0x6000', storage: { '0x01': '0x02' } }
  const withMore = { ...genesis, alloc: { ...genesis.alloc, '0x00000000000000000000000000000000000000c0': contract } }
  const senders = throwawaySenders()
  const scratch = scratchGenesis(withMore, senders)
  assert.deepEqual(scratch.config, genesis.config)
  assert.equal(scratch.gasLimit, genesis.gasLimit)
  const system = '0x0000f90827f1c53a10cb7a02335b175320002935' // EIP-2935's, which --dev deploys
  assert.deepEqual(Object.keys(scratch.alloc).sort(), [system, WARM_UP_TOKEN_ADDRESS, ...senders.map((s) => s.address)].sort())
  assert.deepEqual(scratch.alloc[system], genesis.alloc[system])
  assert.equal(senders.length, 64)
  // the warm-up's token, holding a balance for each sender
  const token = scratch.alloc[WARM_UP_TOKEN_ADDRESS]
  assert.equal(token.code, WARM_UP_TOKEN_CODE)
  assert.equal(Object.keys(token.storage).length, 64)
  assert.ok(Object.values(token.storage).every((v) => BigInt(v) === 10n ** 24n))
})

test('the warm-up builds no block while the node has one to build', async (t) => {
  const { config } = scratchDataDir(t)
  let nodeIdle = false
  let asked = 0
  const startedAt = performance.now()
  const warmUp = startProducerWarmUp(config, devGenesis(24589), () => (asked++, nodeIdle), 2, 32)
  setTimeout(() => (nodeIdle = true), 300)
  const progress = await warmUp.done
  assert.deepEqual(progress, { blocks: 2, transfers: 64, tokenTransfers: 32 })
  assert.ok(asked >= 5, `asked ${asked} times whether the node was idle in the 300 ms it was busy`)
  assert.ok(performance.now() - startedAt >= 300)
})

test('stop() ends the warm-up after the block it is building', async (t) => {
  const { dataDir, config } = scratchDataDir(t)
  let warmUp
  let asked = 0
  // asked before each block: stopped as the second block starts, that one is the last
  warmUp = startProducerWarmUp(config, devGenesis(24589), () => {
    if (++asked === 2) warmUp.stop()
    return true
  }, 100, 16)
  assert.deepEqual(await warmUp.done, { blocks: 2, transfers: 32, tokenTransfers: 16 })
  assert.equal(asked, 2)
  assert.equal(existsSync(warmUpDir(dataDir)), false)
})

test("a node's producer warm-up leaves no trace on its chain, and a transaction sent meanwhile is mined", async (t) => {
  const { startNode, DEV_KEYS, DEV_ADDRESSES } = await import('../helpers/node.js')
  const { rpcResult, sleep } = await import('../helpers/rpc.js')
  const { JsonRpcProvider, Wallet } = await import('ethers')
  const { privateToAddress, bytesToHex } = await import('@ethereumjs/util')
  const node = await startNode({ blockTime: 1 })
  t.after(() => node.stop())
  // sent as the warm-up starts: it waits for no more than the warm-up's block in progress
  const provider = new JsonRpcProvider(node.url, 24589, { staticNetwork: true })
  const sent = await new Wallet(DEV_KEYS[1], provider).sendTransaction({ to: DEV_ADDRESSES[2], value: 1n })
  const receipt = await sent.wait(1, 10_000)
  assert.equal(receipt.status, 1)
  const deadline = Date.now() + 15_000
  while (existsSync(warmUpDir(node.dataDir)) && Date.now() < deadline) await sleep(50)
  assert.equal(existsSync(warmUpDir(node.dataDir)), false, 'the scratch chain is deleted once the warm-up ends')
  // the chain holds the one transaction sent, and none of the throwaway senders' accounts
  const head = Number(await rpcResult(node.url, 'eth_blockNumber'))
  let mined = 0
  for (let n = 0; n <= head; n++) mined += (await rpcResult(node.url, 'eth_getBlockByNumber', [`0x${n.toString(16)}`, false])).transactions.length
  assert.equal(mined, 1)
  const key = new Uint8Array(32).fill(0x5e)
  key[31] = 0
  assert.equal(await rpcResult(node.url, 'eth_getBalance', [bytesToHex(privateToAddress(key)), 'latest']), '0x0')
  assert.deepEqual(await rpcResult(node.url, 'txpool_status'), { pending: '0x0', queued: '0x0' })
})

test('a node stopped during its producer warm-up exits cleanly and removes the scratch chain', async () => {
  const { startNode } = await import('../helpers/node.js')
  const dataDir = mkdtempSync(join(tmpdir(), 'keel-pwu-node-'))
  try {
    const node = await startNode({ blockTime: 1, dataDir })
    const { sleep } = await import('../helpers/rpc.js')
    const deadline = Date.now() + 10_000
    while (!existsSync(warmUpDir(dataDir)) && Date.now() < deadline) await sleep(5)
    assert.ok(existsSync(warmUpDir(dataDir)), 'the warm-up runs after start')
    const exit = await node.stop()
    assert.deepEqual(exit, { code: 0, signal: null })
    assert.equal(existsSync(warmUpDir(dataDir)), false)
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
})
