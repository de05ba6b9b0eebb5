// --block-gas-limit moves the chain's gas limit toward the operator's target by geth's rule (parent / 1024
// - 1 a block at most), up and down; a pooled transaction that no longer fits in a whole block is dropped,
// as geth's pool drops it; and `keel import` (which checks each block's gas limit against its parent's)
// takes the exported chain.

import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { Wallet } from 'ethers'
import { bytesToHex } from '@ethereumjs/util'
import { DEFAULT_GAS_LIMIT, devGenesis } from '../../dist/chain/genesis.js'
import { openChainLevel } from '../../dist/chain/store/level.js'
import { decodeHead, Keys } from '../../dist/chain/store/schema.js'
import { keelCli } from '../helpers/keel-cli.js'
import { CHAIN_ID, DEV_KEYS, startNode } from '../helpers/node.js'
import { writeGenesis } from '../helpers/replication.js'
import { rpc, rpcResult, sleep } from '../helpers/rpc.js'

const GENESIS_GAS_LIMIT = DEFAULT_GAS_LIMIT
/** Osaka's cap on one transaction's gas (EIP-7825) */
const TX_GAS_CAP = 1n << 24n
const genesis = writeGenesis()
const dir = mkdtempSync(join(tmpdir(), 'keel-gas-limit-'))
const dataDir = join(dir, 'chain')
let node

after(async () => {
  await node?.stop()
  rmSync(dir, { recursive: true, force: true })
})

/** geth's core.CalcGasLimit, written out here on its own. */
function calcGasLimit(parent, desired) {
  const delta = parent / 1024n - 1n
  if (parent < desired) return parent + delta > desired ? desired : parent + delta
  if (parent > desired) return parent - delta < desired ? desired : parent - delta
  return parent
}

const gasLimitOf = async (n) => BigInt((await rpcResult(node.url, 'eth_getBlockByNumber', [`0x${n.toString(16)}`, false])).gasLimit)
const head = async () => BigInt(await rpcResult(node.url, 'eth_blockNumber', []))

async function waitForBlock(n) {
  const deadline = Date.now() + 30_000
  while ((await head()) < n && Date.now() < deadline) await sleep(50)
  assert.ok((await head()) >= n, `block ${n} within 30 s`)
}

test('blocks move toward --block-gas-limit by 1/1024 of the parent at most and stay there', async () => {
  const start = (target) => startNode({ dev: false, dataDir, blockTime: 0.25, args: ['--genesis', genesis, '--block-gas-limit', String(target)] })
  assert.equal(GENESIS_GAS_LIMIT, 150_000_000n)
  node = await start(150_200_000n)
  await waitForBlock(4n)
  assert.equal(await gasLimitOf(0n), GENESIS_GAS_LIMIT)
  const expected = [GENESIS_GAS_LIMIT]
  for (let n = 1n; n <= 4n; n++) expected.push(calcGasLimit(expected.at(-1), 150_200_000n))
  assert.deepEqual(expected.slice(1), [150_146_483n, 150_200_000n, 150_200_000n, 150_200_000n])
  for (let n = 1n; n <= 4n; n++) assert.equal(await gasLimitOf(n), expected[Number(n)], `block ${n}`)
  await node.stop()

  // down again, from where the chain is
  node = await start(149_000_000n)
  const from = await head()
  await waitForBlock(from + 3n)
  let parent = await gasLimitOf(from)
  for (let n = from + 1n; n <= from + 3n; n++) {
    const limit = await gasLimitOf(n)
    assert.equal(limit, calcGasLimit(parent, 149_000_000n), `block ${n}`)
    assert.ok(limit < parent)
    parent = limit
  }
})

test('a pooled transaction with more gas than the next block has is dropped, not left waiting', async () => {
  // a chain whose gas limit falls below Osaka's per-transaction cap (EIP-7825: 2^24 gas), so that a
  // transaction can ask for more gas than the next block has
  const low = join(dir, 'low')
  const lowGenesis = join(dir, 'low-genesis.json')
  writeFileSync(lowGenesis, JSON.stringify({ ...devGenesis(CHAIN_ID), gasLimit: `0x${(16_790_000).toString(16)}` }))
  const lowNode = await startNode({ dev: false, dataDir: low, blockTime: 0.25, args: ['--genesis', lowGenesis, '--block-gas-limit', '5000000'] })
  try {
    const wallet = new Wallet(DEV_KEYS[3])
    const nonce = await rpcResult(lowNode.url, 'eth_getTransactionCount', [wallet.address, 'pending'])
    let hash
    let from
    // the intake takes up to the head's gas limit; every next block has less (the limit is falling)
    for (let attempt = 0; attempt < 20 && hash === undefined; attempt++) {
      const latest = await rpcResult(lowNode.url, 'eth_getBlockByNumber', ['latest', false])
      const gasLimit = BigInt(latest.gasLimit) < TX_GAS_CAP ? BigInt(latest.gasLimit) : TX_GAS_CAP
      const raw = await wallet.signTransaction({ type: 2, chainId: CHAIN_ID, nonce: Number(nonce), to: wallet.address, value: 1n, gasLimit, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1n })
      const answer = await rpc(lowNode.url, 'eth_sendRawTransaction', [raw])
      if (answer.error === undefined) {
        hash = answer.result
        from = BigInt(latest.number)
      } else assert.equal(answer.error.message, 'exceeds block gas limit')
    }
    assert.ok(hash !== undefined, "accepted at the head's gas limit")
    const deadline = Date.now() + 30_000
    while (BigInt(await rpcResult(lowNode.url, 'eth_blockNumber', [])) < from + 4n && Date.now() < deadline) await sleep(50)
    assert.equal(await rpcResult(lowNode.url, 'eth_getTransactionByHash', [hash]), null)
    assert.equal(await rpcResult(lowNode.url, 'eth_getTransactionReceipt', [hash]), null)
    assert.equal(await rpcResult(lowNode.url, 'eth_getTransactionCount', [wallet.address, 'pending']), nonce)
  } finally {
    await lowNode.stop()
  }
})

test('keel import takes the exported chain, each gas limit checked against its parent', async () => {
  await node.stop()
  node = undefined
  // the head as the stopped node left it (it seals every 0.25 s until it stops)
  const level = await openChainLevel(join(dataDir, 'chain'))
  const last = decodeHead(await level.get(Keys.meta('head')))
  await level.close()
  const file = join(dir, 'chain.rlp')
  const exported = await keelCli(['export', file, '--from', '1', '--data-dir', dataDir])
  assert.equal(exported.code, 0, exported.stderr)
  const imported = await keelCli(['import', file, '--genesis', genesis, '--data-dir', join(dir, 'copy')])
  assert.equal(imported.code, 0, imported.stderr)
  assert.match(imported.stdout, new RegExp(`^imported ${last.number} blocks[^]*head ${last.number} ${bytesToHex(last.hash)}`))
})
