// eth_getLogs naming no address and no topic reads the blooms of the blocks that have logs: only those
// blocks keep a bloom entry in the database, and the answer over the whole chain is still every log of
// every block (checked block by block), across blocks without logs on both sides.

import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { ContractFactory, JsonRpcProvider, Wallet } from 'ethers'
import { openChainLevel } from '../../dist/chain/store/level.js'
import { decodeNumber, Keys } from '../../dist/chain/store/schema.js'
import { compile } from '../helpers/contracts.js'
import { CHAIN_ID, DEV_ADDRESSES, DEV_KEYS, startNode } from '../helpers/node.js'
import { rpcResult } from '../helpers/rpc.js'

const { Reverter } = compile()
const dataDir = mkdtempSync(join(tmpdir(), 'keel-logs-bloom-'))
let node
let provider

before(async () => {
  node = await startNode({ dataDir, blockTime: 0 })
  provider = new JsonRpcProvider(node.url, CHAIN_ID, { staticNetwork: true, pollingInterval: 50, cacheTimeout: -1 })
})

after(async () => {
  provider?.destroy()
  await node?.stop()
  rmSync(dataDir, { recursive: true, force: true })
})

const hex = (n) => `0x${n.toString(16)}`

test('a query without address or topic finds every log; only blocks with logs keep a bloom', async () => {
  const wallet = new Wallet(DEV_KEYS[0], provider)
  // automine: a block per transaction; the value transfers make blocks without logs
  const transfer = async () => (await (await wallet.sendTransaction({ to: DEV_ADDRESSES[1], value: 1n })).wait()).blockNumber
  const emitter = await (await new ContractFactory(Reverter.abi, Reverter.bytecode, wallet).deploy()).waitForDeployment()
  const withLogs = []
  for (const n of [2, 1]) {
    await transfer()
    await transfer()
    withLogs.push((await (await emitter.emitMany(n)).wait()).blockNumber)
  }
  await transfer()
  const head = await transfer()

  const whole = await rpcResult(node.url, 'eth_getLogs', [{ fromBlock: '0x0', toBlock: hex(head) }])
  const byBlock = []
  for (let n = 0; n <= head; n++) byBlock.push(...(await rpcResult(node.url, 'eth_getLogs', [{ fromBlock: hex(n), toBlock: hex(n) }])))
  assert.equal(whole.length, 3)
  assert.deepEqual(whole, byBlock)
  assert.deepEqual([...new Set(whole.map((log) => Number(log.blockNumber)))], withLogs)
  // a range that starts and ends in blocks without logs
  const inner = await rpcResult(node.url, 'eth_getLogs', [{ fromBlock: hex(withLogs[0] - 1), toBlock: hex(withLogs[1] + 1) }])
  assert.deepEqual(inner, whole)
  assert.deepEqual(await rpcResult(node.url, 'eth_getLogs', [{ fromBlock: hex(withLogs[0] + 1), toBlock: hex(withLogs[1] - 1) }]), [])

  await node.stop()
  const level = await openChainLevel(join(dataDir, 'chain'))
  try {
    const bloomBlocks = []
    for await (const key of level.keys({ gte: Keys.bloom(0n), lte: Keys.bloom(BigInt(head) + 1000n) })) bloomBlocks.push(Number(decodeNumber(key, 1)))
    assert.deepEqual(bloomBlocks, withLogs)
  } finally {
    await level.close()
  }
})
