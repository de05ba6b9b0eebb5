// keel init, keel db stats, keel backup and keel restore, against real nodes.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Wallet } from 'ethers'
import { DEV_KEYS, startNode } from '../helpers/node.js'
import { rpcResult } from '../helpers/rpc.js'
import { keelCli } from '../helpers/keel-cli.js'

function tempDir(t) {
  const dir = mkdtempSync(join(tmpdir(), 'keel-ops-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

const FUNDED = '0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc'
const GENESIS = {
  config: { chainId: 24589, homesteadBlock: 0, eip150Block: 0, eip155Block: 0, eip158Block: 0, byzantiumBlock: 0,
    constantinopleBlock: 0, petersburgBlock: 0, istanbulBlock: 0, berlinBlock: 0, londonBlock: 0, mergeNetsplitBlock: 0,
    terminalTotalDifficulty: 0, terminalTotalDifficultyPassed: true, shanghaiTime: 0, cancunTime: 0, pragueTime: 0, osakaTime: 0 },
  nonce: '0x0', timestamp: '0x6553f100', extraData: '0x', gasLimit: '0x1c9c380', difficulty: '0x0', baseFeePerGas: '0x3b9aca00',
  alloc: { [FUNDED]: { balance: '0x3635c9adc5dea00000' } },
}

test('init writes the genesis without starting; a node started there serves it; init refuses to overwrite', async (t) => {
  const dir = tempDir(t)
  const genesisFile = join(dir, 'genesis.json')
  writeFileSync(genesisFile, JSON.stringify(GENESIS, null, 2))
  const dataDir = join(dir, 'data')
  const init = await keelCli(['init', '--genesis', genesisFile, '--data-dir', dataDir])
  assert.equal(init.stderr, '')
  assert.equal(init.code, 0)
  const [, genesisHash, stateRoot] = /^chain id 24589, genesis (0x[0-9a-f]{64}), state root (0x[0-9a-f]{64})$/m.exec(init.stdout)
  assert.equal(readFileSync(join(dataDir, 'genesis.json'), 'utf8'), readFileSync(genesisFile, 'utf8'))

  const stats = await keelCli(['db', 'stats', '--json', '--data-dir', dataDir])
  assert.equal(stats.code, 0, stats.stderr)
  const json = JSON.parse(stats.stdout)
  assert.equal(json.head.number, '0')
  assert.equal(json.head.hash, genesisHash)
  assert.equal(json.blocks, '1')
  assert.equal(json.transactions, 0)
  assert.equal(json.chainId, 24589)
  assert.equal(json.source, 'database opened directly (no node running)')
  assert.ok(json.diskBytes > 0)

  const again = await keelCli(['init', '--genesis', genesisFile, '--data-dir', dataDir])
  assert.equal(again.code, 2)
  assert.equal(again.stderr, `keel: ${dataDir} already holds a chain (head block 0); refusing to overwrite it: use a new --data-dir, or remove ${join(dataDir, 'chain')} to start over\n`)
  const missing = await keelCli(['init', '--genesis', join(dir, 'nope.json'), '--data-dir', join(dir, 'other')])
  assert.equal(missing.code, 2)
  assert.equal(missing.stderr, `keel: cannot read genesis ${join(dir, 'nope.json')}: no such file\n`)

  const node = await startNode({ dataDir, dev: false, blockTime: 0, args: ['--metrics-port', '0'] })
  try {
    const block = await rpcResult(node.url, 'eth_getBlockByNumber', ['0x0', false])
    assert.equal(block.hash, genesisHash)
    assert.equal(block.stateRoot, stateRoot)
    assert.equal(await rpcResult(node.url, 'eth_getBalance', [FUNDED, 'latest']), '0x3635c9adc5dea00000')
    const running = await keelCli(['init', '--genesis', genesisFile, '--data-dir', dataDir])
    assert.equal(running.code, 2)
    assert.equal(running.stderr, `keel: a running node holds ${join(dataDir, 'chain')}; refusing to overwrite an existing chain\n`)
  } finally {
    await node.stop()
  }
})

test('init without --genesis creates the default: a new operator key funding the treasury', async (t) => {
  const dataDir = join(tempDir(t), 'data')
  const init = await keelCli(['init', '--data-dir', dataDir])
  assert.equal(init.code, 0, init.stderr)
  const operator = new Wallet(readFileSync(join(dataDir, 'operator.key'), 'utf8').trim()).address
  assert.match(init.stdout, new RegExp(`^operator address ${operator} \\(new key in operator.key\\)$`, 'm'))
  assert.equal(statSync(join(dataDir, 'operator.key')).mode & 0o777, 0o600)
  const genesis = JSON.parse(readFileSync(join(dataDir, 'genesis.json'), 'utf8'))
  assert.equal(genesis.config.chainId, 24589)
  assert.ok(BigInt(genesis.alloc[operator.toLowerCase()].balance) > 0n)
})

/** Light load: a bounded stream of signed transfers from two dev accounts until stopped. */
function startLoad(url) {
  let stopped = false
  let sent = 0
  const senders = DEV_KEYS.slice(1, 3).map((key) => new Wallet(key))
  const loop = (async () => {
    const nonces = await Promise.all(senders.map(async (w) => BigInt(await rpcResult(url, 'eth_getTransactionCount', [w.address, 'pending']))))
    for (let i = 0; i < 400 && !stopped; i++) {
      const s = i % senders.length
      const raw = await senders[s].signTransaction({
        type: 2, chainId: 24589, nonce: Number(nonces[s]++), to: Wallet.createRandom().address, value: 1000n + BigInt(i),
        gasLimit: 21000n, maxFeePerGas: 10n ** 11n, maxPriorityFeePerGas: 10n ** 9n,
      })
      await rpcResult(url, 'eth_sendRawTransaction', [raw])
      sent++
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  })()
  return { stop: async () => { stopped = true; await loop; return sent } }
}

test('backup of a running node under load, restore into a new folder, same head and state root there', async (t) => {
  const dir = tempDir(t)
  const node = await startNode({ dataDir: join(dir, 'live'), dev: true, blockTime: 0, args: ['--metrics-port', '0'] })
  let load
  try {
    load = startLoad(node.url)
    await new Promise((resolve) => setTimeout(resolve, 800))

    const stats = await keelCli(['db', 'stats', '--data-dir', node.dataDir])
    assert.equal(stats.code, 0, stats.stderr)
    assert.match(stats.stdout, new RegExp(`^source +running node \\(admin socket ${join(node.dataDir, 'admin.sock')}\\)$`, 'm'))
    assert.match(stats.stdout, /^head +#\d+ 0x[0-9a-f]{64} /m)
    assert.match(stats.stdout, /^transactions +[1-9]\d*$/m)

    const backupDir = join(dir, 'backup')
    const backup = await keelCli(['backup', backupDir, '--data-dir', node.dataDir])
    assert.equal(backup.stderr, '')
    assert.equal(backup.code, 0)
    assert.match(backup.stdout, /\(taken by the running node\)/)
    const [, number, hash] = /^head #(\d+) (0x[0-9a-f]{64})$/m.exec(backup.stdout)
    const [, stateRoot] = /^state root (0x[0-9a-f]{64})$/m.exec(backup.stdout)
    const sent = await load.stop()
    load = undefined
    assert.ok(sent > 5, `the load sent transactions (${sent})`)
    assert.ok(Number(number) > 0, 'the backup holds mined blocks')
    // the snapshot is a block the live node really sealed
    const live = await rpcResult(node.url, 'eth_getBlockByNumber', [`0x${Number(number).toString(16)}`, false])
    assert.equal(live.hash, hash)
    assert.equal(live.stateRoot, stateRoot)
    const manifest = JSON.parse(readFileSync(join(backupDir, 'keel-backup.json'), 'utf8'))
    assert.deepEqual(manifest.head, { number, hash, stateRoot })
    assert.equal(manifest.format, 'keel-backup/1')

    const notEmpty = await keelCli(['backup', backupDir, '--data-dir', node.dataDir])
    assert.equal(notEmpty.code, 2)
    assert.equal(notEmpty.stderr, `keel: backup folder ${backupDir} exists and is not empty\n`)
    const intoRunning = await keelCli(['restore', backupDir, '--data-dir', node.dataDir])
    assert.equal(intoRunning.code, 2)
    assert.equal(intoRunning.stderr, `keel: a running node holds ${join(node.dataDir, 'chain')}; stop it and restore into a folder without a chain\n`)

    const restoredDir = join(dir, 'restored')
    const restore = await keelCli(['restore', backupDir, '--data-dir', restoredDir])
    assert.equal(restore.stderr, '')
    assert.equal(restore.code, 0)
    assert.match(restore.stdout, new RegExp(`^head #${number} ${hash}$`, 'm'))
    const twice = await keelCli(['restore', backupDir, '--data-dir', restoredDir])
    assert.equal(twice.code, 2)
    assert.equal(twice.stderr, `keel: ${restoredDir} already holds a chain (head block ${number}); refusing to overwrite it: restore into a new --data-dir\n`)

    const restored = await startNode({ dataDir: restoredDir, dev: false, blockTime: 0, args: ['--metrics-port', '0'] })
    try {
      // the restored chain continues from the backup's head (pooled transactions restored with it may be mined on top)
      const headNow = BigInt(await rpcResult(restored.url, 'eth_blockNumber'))
      assert.ok(headNow >= BigInt(number), `restored head ${headNow} >= ${number}`)
      if (headNow > BigInt(number)) {
        const next = await rpcResult(restored.url, 'eth_getBlockByNumber', [`0x${(BigInt(number) + 1n).toString(16)}`, false])
        assert.equal(next.parentHash, hash)
      }
      const block = await rpcResult(restored.url, 'eth_getBlockByNumber', [`0x${Number(number).toString(16)}`, false])
      assert.equal(block.hash, hash)
      assert.equal(block.stateRoot, stateRoot)
      const tag = `0x${Number(number).toString(16)}`
      for (const key of DEV_KEYS.slice(0, 3)) {
        const address = new Wallet(key).address
        assert.equal(
          await rpcResult(restored.url, 'eth_getBalance', [address, tag]),
          await rpcResult(node.url, 'eth_getBalance', [address, tag]),
          `balance of ${address} at the backup head`,
        )
      }
    } finally {
      await restored.stop()
    }
  } finally {
    await load?.stop()
    await node.stop()
  }
})

test('backup and db stats of a stopped node open the database directly; restore refuses a non-backup', async (t) => {
  const dir = tempDir(t)
  const dataDir = join(dir, 'data')
  const init = await keelCli(['init', '--data-dir', dataDir])
  assert.equal(init.code, 0, init.stderr)
  const backup = await keelCli(['backup', join(dir, 'b'), '--data-dir', dataDir])
  assert.equal(backup.code, 0, backup.stderr)
  assert.doesNotMatch(backup.stdout, /running node/)
  assert.match(backup.stdout, /also genesis\.json, operator\.key$/m)
  assert.equal(statSync(join(dir, 'b', 'operator.key')).mode & 0o777, 0o600)
  mkdirSync(join(dir, 'junk'))
  const junk = await keelCli(['restore', join(dir, 'junk'), '--data-dir', join(dir, 'x')])
  assert.equal(junk.code, 2)
  assert.equal(junk.stderr, `keel: ${join(dir, 'junk')} is not a Keel backup (no readable keel-backup.json)\n`)
  const noChain = await keelCli(['db', 'stats', '--data-dir', join(dir, 'x')])
  assert.equal(noChain.code, 2)
  assert.equal(noChain.stderr, `keel: no chain in ${join(dir, 'x')} (no ${join(dir, 'x', 'chain')}); check --data-dir\n`)
  assert.equal(existsSync(join(dir, 'x', 'chain')), false)
})
