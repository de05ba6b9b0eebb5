// A Keel chain with contracts, logs and every transaction type the pool takes (legacy, EIP-2930,
// EIP-1559, EIP-7702) exported from the running node and imported into a fresh data folder: the same
// block hashes and state roots, and the same answers. Blob transactions are covered by the hive chain
// (import.test.js): Keel's pool takes none.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ContractFactory, JsonRpcProvider, Wallet } from 'ethers'
import { compile } from '../helpers/contracts.js'
import { keelCli } from '../helpers/keel-cli.js'
import { DEV_KEYS, startNode } from '../helpers/node.js'
import { rpcBatch, rpcResult } from '../helpers/rpc.js'

const { Token } = compile()
const key = DEV_KEYS[0]
const wallet = new Wallet(key)
const GENESIS = {
  config: { chainId: 24589, homesteadBlock: 0, eip150Block: 0, eip155Block: 0, eip158Block: 0, byzantiumBlock: 0,
    constantinopleBlock: 0, petersburgBlock: 0, istanbulBlock: 0, berlinBlock: 0, londonBlock: 0, mergeNetsplitBlock: 0,
    terminalTotalDifficulty: 0, terminalTotalDifficultyPassed: true, shanghaiTime: 0, cancunTime: 0, pragueTime: 0, osakaTime: 0 },
  nonce: '0x0', timestamp: '0x6553f100', extraData: '0x', gasLimit: '0x1c9c380', difficulty: '0x0', baseFeePerGas: '0x3b9aca00',
  alloc: { [wallet.address]: { balance: '0x3635c9adc5dea00000' } },
}

test('export from a running node, import into a fresh folder: same hashes, state roots and receipts', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-round-trip-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const genesisFile = join(dir, 'genesis.json')
  writeFileSync(genesisFile, JSON.stringify(GENESIS))
  const node = await startNode({ dev: false, dataDir: join(dir, 'source'), blockTime: 0, args: ['--genesis', genesisFile] })
  t.after(() => node.stop())
  const provider = new JsonRpcProvider(node.url, undefined, { staticNetwork: true, cacheTimeout: -1 })
  const signer = new Wallet(key, provider)
  const token = await new ContractFactory(Token.abi, Token.bytecode, signer).deploy()
  await token.waitForDeployment()
  const to = '0x00000000000000000000000000000000000000aa'
  const hashes = []
  let nonce = await provider.getTransactionCount(wallet.address)
  // a token transfer (logs), then one transaction of each type
  hashes.push((await token.transfer(to, 5n, { nonce: nonce++ })).hash)
  hashes.push((await signer.sendTransaction({ to, value: 1n, type: 0, gasPrice: 3_000_000_000n, nonce: nonce++ })).hash)
  hashes.push((await signer.sendTransaction({ to, value: 2n, type: 1, gasPrice: 3_000_000_000n, accessList: [{ address: to, storageKeys: [] }], gasLimit: 30_000n, nonce: nonce++ })).hash)
  hashes.push((await signer.sendTransaction({ to, value: 3n, type: 2, nonce: nonce++ })).hash)
  const authorization = await signer.authorize({ address: await token.getAddress(), nonce: nonce + 1, chainId: 24589n })
  hashes.push((await signer.sendTransaction({ to, type: 4, authorizationList: [authorization], gasLimit: 100_000n, nonce: nonce++ })).hash)
  for (const hash of hashes) assert.equal((await provider.waitForTransaction(hash, 1, 20_000)).status, 1)

  const file = join(dir, 'chain.rlp')
  const exported = await keelCli(['export', file, '--data-dir', node.dataDir])
  assert.equal(exported.code, 0, exported.stderr)
  assert.match(exported.stdout, /\(taken by the running node\)/)
  const head = Number(/exported blocks 0-(\d+)/.exec(exported.stdout)[1])
  assert.ok(head >= hashes.length, `head ${head}`)

  const imported = await keelCli(['import', file, '--genesis', genesisFile, '--data-dir', join(dir, 'copy')])
  assert.equal(imported.code, 0, imported.stderr)
  assert.match(imported.stdout, new RegExp(`^imported ${head} blocks \\(1 already in the chain\\)`))
  const copy = await startNode({ dev: false, dataDir: join(dir, 'copy'), args: ['--no-seal'] })
  t.after(() => copy.stop())
  const blocks = (url) => rpcBatch(url, Array.from({ length: head + 1 }, (_, i) => ['eth_getBlockByNumber', [`0x${i.toString(16)}`, false]]))
  const [a, b] = await Promise.all([blocks(node.url), blocks(copy.url)])
  assert.deepEqual(b.map((x) => [x.hash, x.stateRoot]), a.map((x) => [x.hash, x.stateRoot]))
  for (const hash of hashes) {
    assert.deepEqual(await rpcResult(copy.url, 'eth_getTransactionReceipt', [hash]), await rpcResult(node.url, 'eth_getTransactionReceipt', [hash]))
  }
  assert.equal(await rpcResult(copy.url, 'eth_getCode', [wallet.address, 'latest']), await rpcResult(node.url, 'eth_getCode', [wallet.address, 'latest']))
})
