// An eth_getLogs answer of more than 64 KiB is written around the logs' bytes (three HTTP chunks, three
// WebSocket fragments) instead of as one string: over HTTP (fetch and ethers), over a WebSocket, with
// numeric and non-ASCII string ids, in a batch and after a new block extended a cached answer, it is the
// same JSON as the blocks' answers one by one (each small enough to go as one string).

import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { ContractFactory, JsonRpcProvider, Wallet } from 'ethers'
import { compile } from '../helpers/contracts.js'
import { CHAIN_ID, DEV_KEYS, startNode, target } from '../helpers/node.js'
import { rawPost, rpcResult } from '../helpers/rpc.js'
import { RawWsClient } from '../helpers/ws.js'

const { Reverter } = compile()
const dataDir = mkdtempSync(join(tmpdir(), 'keel-logs-large-'))
const PER_BLOCK = 80 // ~48 KiB of logs a block: one block's answer stays below 64 KiB
let node
let provider
let emitter

before(async () => {
  node = await startNode({ dataDir, blockTime: 0 })
  provider = new JsonRpcProvider(node.url, CHAIN_ID, { staticNetwork: true, pollingInterval: 50, cacheTimeout: -1 })
  const wallet = new Wallet(DEV_KEYS[0], provider)
  emitter = await (await new ContractFactory(Reverter.abi, Reverter.bytecode, wallet).deploy()).waitForDeployment()
  for (let i = 0; i < 3; i++) await (await emitter.emitMany(PER_BLOCK, { gasLimit: 5_000_000n })).wait()
})

after(async () => {
  provider?.destroy()
  await node?.stop()
  rmSync(dataDir, { recursive: true, force: true })
})

// how the answer is written is Keel's; the answers are checked on either node
const keel = target === 'keel'
const hex = (n) => `0x${n.toString(16)}`
const request = (id, params) => ({ jsonrpc: '2.0', id, method: 'eth_getLogs', params })

async function blockByBlock(address, head) {
  const logs = []
  for (let n = 0; n <= head; n++) {
    const r = await rawPost(node.url, request(1, [{ fromBlock: hex(n), toBlock: hex(n), address }]))
    if (keel) assert.notEqual(r.headers.get('transfer-encoding'), 'chunked', 'a small answer is one string')
    logs.push(...r.json.result)
  }
  return logs
}

test('a large answer over HTTP, a WebSocket and ethers is the blocks\' answers joined; ids, batches and a cached answer extended by a new block', async () => {
  const address = (await emitter.getAddress()).toLowerCase()
  let head = Number(await rpcResult(node.url, 'eth_blockNumber'))
  const expected = await blockByBlock(address, head)
  assert.equal(expected.length, 3 * PER_BLOCK)
  const filter = { fromBlock: '0x0', toBlock: 'latest', address }

  for (const id of [7, 7, 'é-ü', null]) {
    const r = await rawPost(node.url, request(id, [filter]))
    assert.equal(r.status, 200)
    if (keel) assert.equal(r.headers.get('transfer-encoding'), 'chunked', 'written in parts')
    assert.ok(r.text.length > 64 * 1024)
    assert.deepEqual(r.json, { jsonrpc: '2.0', id, result: expected })
  }

  const batch = await rawPost(node.url, [request(1, [filter]), { jsonrpc: '2.0', id: 2, method: 'eth_chainId', params: [] }])
  assert.deepEqual(batch.json, [{ jsonrpc: '2.0', id: 1, result: expected }, { jsonrpc: '2.0', id: 2, result: hex(CHAIN_ID) }])

  const ws = await RawWsClient.connect(node.url.replace('http', 'ws'))
  try {
    for (const id of [11, 'ws-é']) {
      ws.sendRaw(JSON.stringify(request(id, [filter])))
      const deadline = Date.now() + 15_000
      while (!ws.frames.some((f) => f.id === id) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
      assert.deepEqual(ws.frames.find((f) => f.id === id), { jsonrpc: '2.0', id, result: expected })
    }
  } finally {
    ws.socket.close()
  }

  // a new block with logs: the cached answer up to the old head is extended by the new block's logs
  await (await emitter.emitMany(PER_BLOCK, { gasLimit: 5_000_000n })).wait()
  head = Number(await rpcResult(node.url, 'eth_blockNumber'))
  const extended = await blockByBlock(address, head)
  assert.equal(extended.length, 4 * PER_BLOCK)
  assert.deepEqual((await rawPost(node.url, request(8, [filter]))).json.result, extended)
  const viaEthers = await provider.getLogs({ fromBlock: 0, toBlock: head, address })
  assert.equal(viaEthers.length, extended.length)
  assert.deepEqual(viaEthers.map((l) => [l.blockNumber, l.index, l.transactionHash, l.data, l.topics.join()]), extended.map((l) => [Number(l.blockNumber), Number(l.logIndex), l.transactionHash, l.data, l.topics.join()]))
})
