// keel import and keel export against the hive test chain: every block executed and written as chain.rlp
// has it, the head state as headstate.json has it, served by `keel start --no-seal`; a corrupted file stops at the right block with the right
// message and leaves the prefix usable; a second run resumes; export reproduces the file byte for byte.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { keelCli } from '../helpers/keel-cli.js'
import { startNode } from '../helpers/node.js'
import { rpcBatch, rpcResult, sleep } from '../helpers/rpc.js'
import { HIVE, HIVE_CHAIN, HIVE_GENESIS, HIVE_HEAD_STATE, hiveBlocks } from './hive-chain.js'

const blocks = hiveBlocks()
const head = blocks[blocks.length - 1]

function tempDir(t) {
  const dir = mkdtempSync(join(tmpdir(), 'keel-import-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

const importInto = (dataDir, files, extra = []) => keelCli(['import', ...files, '--data-dir', dataDir, ...extra])

/** Starts a node without sealing on the data folder and returns the hash and state root of blocks 0..n. */
async function servedBlocks(t, dataDir) {
  const node = await startNode({ dev: false, dataDir, args: ['--no-seal', '--rate-limit', '0'] })
  t.after(() => node.stop())
  const number = BigInt(await rpcResult(node.url, 'eth_blockNumber'))
  const answers = await rpcBatch(node.url, Array.from({ length: Number(number) + 1 }, (_, i) => ['eth_getBlockByNumber', [`0x${i.toString(16)}`, false]]))
  return { node, number, blocks: answers }
}

test('the hive chain imports with every block hash and state root of chain.rlp, and keel start --no-seal serves it', async (t) => {
  const dir = tempDir(t)
  const dataDir = join(dir, 'data')
  const out = await importInto(dataDir, [HIVE_CHAIN], ['--genesis', HIVE_GENESIS])
  assert.equal(out.stderr, '')
  assert.equal(out.code, 0)
  assert.match(out.stdout, new RegExp(`^imported ${blocks.length} blocks \\(0 already in the chain\\)`))
  assert.match(out.stdout, new RegExp(`head ${head.number} ${head.hash}`))

  const served = await servedBlocks(t, dataDir)
  assert.equal(served.number, head.number)
  for (const b of blocks) {
    const got = served.blocks[Number(b.number)]
    assert.equal(got.hash, b.hash, `block ${b.number} hash`)
    assert.equal(got.stateRoot, b.stateRoot, `block ${b.number} state root`)
  }
  // the head state: every account of headstate.json, its balance, nonce, code, storage root and listed slots
  const headState = JSON.parse(readFileSync(HIVE_HEAD_STATE, 'utf8'))
  assert.equal(served.blocks.at(-1).stateRoot, `0x${headState.root}`)
  const accounts = Object.values(headState.accounts)
  const proofs = await rpcBatch(served.node.url, accounts.map((a) => ['eth_getProof', [a.address, [], 'latest']]))
  const codes = await rpcBatch(served.node.url, accounts.map((a) => ['eth_getCode', [a.address, 'latest']]))
  const slots = accounts.flatMap((a) => Object.entries(a.storage ?? {}).map(([slot, value]) => ({ address: a.address, slot, value })))
  const values = await rpcBatch(served.node.url, slots.map((s) => ['eth_getStorageAt', [s.address, s.slot, 'latest']]))
  accounts.forEach((a, i) => {
    assert.equal(BigInt(proofs[i].balance), BigInt(a.balance), `${a.address} balance`)
    assert.equal(BigInt(proofs[i].nonce), BigInt(a.nonce), `${a.address} nonce`)
    assert.equal(proofs[i].codeHash, a.codeHash, `${a.address} code hash`)
    assert.equal(proofs[i].storageHash, a.root, `${a.address} storage root`)
    assert.equal(codes[i], a.code ?? '0x', `${a.address} code`)
  })
  slots.forEach((s, i) => assert.equal(BigInt(values[i]), BigInt(`0x${s.value}`), `${s.address} slot ${s.slot}`))
  assert.ok(slots.length > 0)

  // the explorer's indexes were written with each imported block: every transaction by its sender and
  // nonce, and a sender's history newest first
  const txHashes = served.blocks.flatMap((b) => b.transactions)
  assert.ok(txHashes.length > 20)
  const txs = await rpcBatch(served.node.url, txHashes.map((h) => ['eth_getTransactionByHash', [h]]))
  const found = await rpcBatch(served.node.url, txs.map((tx) => ['ots_getTransactionBySenderAndNonce', [tx.from, tx.nonce]]))
  assert.deepEqual(found, txHashes)
  const bySender = new Map()
  for (const tx of txs) bySender.set(tx.from, [...(bySender.get(tx.from) ?? []), tx])
  const [busiest, sent] = [...bySender].sort((a, b) => b[1].length - a[1].length)[0]
  const history = await rpcResult(served.node.url, 'ots_searchTransactionsBefore', [busiest, 0, 25])
  const expectedHistory = txs.filter((tx) => tx.from === busiest || tx.to === busiest).reverse().slice(0, 25).map((tx) => tx.hash)
  assert.ok(sent.length >= 2)
  assert.deepEqual(history.txs.map((tx) => tx.hash).slice(0, expectedHistory.length), expectedHistory)

  // --no-seal: a valid transaction (the conformance suite's) is checked and pooled, and no block is sealed for it
  const fixture = readFileSync(join(HIVE, 'eth_sendRawTransaction', 'send-dynamic-fee-transaction.io'), 'utf8').split('\n')
  const request = JSON.parse(fixture.find((l) => l.startsWith('>> ')).slice(3))
  const expected = JSON.parse(fixture.find((l) => l.startsWith('<< ')).slice(3))
  assert.equal(await rpcResult(served.node.url, 'eth_sendRawTransaction', request.params), expected.result)
  const pool = await rpcResult(served.node.url, 'txpool_status')
  assert.equal(BigInt(pool.pending) + BigInt(pool.queued), 1n)
  await sleep(2_500)
  assert.equal(BigInt(await rpcResult(served.node.url, 'eth_blockNumber')), head.number)
  assert.equal(await rpcResult(served.node.url, 'eth_getTransactionReceipt', [expected.result]), null)
  await served.node.stop()

  // export: blocks 1.. are chain.rlp byte for byte; all of it (with block 0) imports into a fresh folder
  const exported = join(dir, 'out.rlp')
  const exp = await keelCli(['export', exported, '--from', '1', '--data-dir', dataDir])
  assert.equal(exp.code, 0, exp.stderr)
  assert.deepEqual(readFileSync(exported), readFileSync(HIVE_CHAIN))
  const gz = join(dir, 'all.rlp.gz')
  assert.equal((await keelCli(['export', gz, '--data-dir', dataDir])).code, 0)
  const again = await importInto(join(dir, 'copy'), [gz], ['--genesis', HIVE_GENESIS])
  assert.equal(again.code, 0, again.stderr)
  assert.match(again.stdout, new RegExp(`^imported ${blocks.length} blocks \\(1 already in the chain\\)[^]*head ${head.number} ${head.hash}`))
  const refused = await keelCli(['export', exported, '--data-dir', dataDir])
  assert.equal(refused.code, 2)
  assert.match(refused.stderr, /exists; refusing to overwrite it/)
})

test('a flipped byte in a later block stops the import there; the prefix is served, and the good file resumes', async (t) => {
  const dir = tempDir(t)
  const dataDir = join(dir, 'data')
  const bad = blocks[39]
  const bytes = new Uint8Array(readFileSync(HIVE_CHAIN))
  // the last byte of block 40's state root
  const at = bad.offset + Buffer.from(bad.raw).indexOf(Buffer.from(bad.stateRoot.slice(2), 'hex')) + 31
  bytes[at] ^= 0x01
  const file = join(dir, 'flipped.rlp')
  writeFileSync(file, bytes)
  const out = await importInto(dataDir, [file], ['--genesis', HIVE_GENESIS])
  assert.equal(out.code, 1)
  assert.match(out.stderr, new RegExp(`^keel: import stopped: block ${bad.number} \\(0x[0-9a-f]{64}\\): stateRoot mismatch: the header says 0x${bad.stateRoot.slice(2, -2)}[0-9a-f]{2}, executing the block gives ${bad.stateRoot}\\n$`))

  const served = await servedBlocks(t, dataDir)
  assert.equal(served.number, bad.number - 1n)
  assert.equal(served.blocks.at(-1).hash, blocks[38].hash)
  await served.node.stop()

  const resumed = await importInto(dataDir, [HIVE_CHAIN])
  assert.equal(resumed.code, 0, resumed.stderr)
  assert.match(resumed.stdout, new RegExp(`^imported ${blocks.length - 39} blocks \\(39 already in the chain\\)[^]*head ${head.number} ${head.hash}`))
})

test('a truncated file, a missing parent and a wrong genesis are refused with their reason', async (t) => {
  const dir = tempDir(t)
  const whole = readFileSync(HIVE_CHAIN)
  // truncated (and gzipped): the blocks before the cut are imported
  const truncated = join(dir, 'truncated.rlp.gz')
  writeFileSync(truncated, gzipSync(whole.subarray(0, whole.length - 100)))
  const a = await importInto(join(dir, 'a'), [truncated], ['--genesis', HIVE_GENESIS])
  assert.equal(a.code, 1)
  assert.match(a.stderr, new RegExp(`^keel: import stopped: ${truncated.replaceAll('.', '\\.')}: truncated: the block at byte ${head.offset} ends past the end of the file \\(${whole.length - 100} bytes\\)\\n$`))
  const resumed = await importInto(join(dir, 'a'), [HIVE_CHAIN])
  assert.match(resumed.stdout, /^imported 1 blocks \(53 already in the chain\)/)

  // block 12 left out
  const gap = join(dir, 'gap.rlp')
  writeFileSync(gap, Buffer.concat(blocks.filter((b) => b.number !== 12n).map((b) => b.raw)))
  const b = await importInto(join(dir, 'b'), [gap], ['--genesis', HIVE_GENESIS])
  assert.equal(b.code, 1)
  assert.match(b.stderr, new RegExp(`^keel: import stopped: block 13 \\(${blocks[12].hash}\\): missing parent: the chain ends at block 11 and the file has no block 12 before this one\\n$`))

  // another genesis (one more byte of extraData)
  const genesis = JSON.parse(readFileSync(HIVE_GENESIS, 'utf8'))
  genesis.extraData = `${genesis.extraData}00`
  const otherGenesis = join(dir, 'other-genesis.json')
  writeFileSync(otherGenesis, JSON.stringify(genesis))
  const c = await importInto(join(dir, 'c'), [HIVE_CHAIN], ['--genesis', otherGenesis])
  assert.equal(c.code, 1)
  assert.match(c.stderr, /^keel: import stopped: wrong genesis: block 1 builds on 0x44fd89d504659cd58f48f4796b77a7e7012cf296a2409afa2f6c3cb99b5b3d99, the data folder's genesis is 0x[0-9a-f]{64} \(the chain file needs the genesis\.json it was made with\)\n$/)

  // a new folder without --genesis
  const d = await importInto(join(dir, 'd'), [HIVE_CHAIN])
  assert.equal(d.code, 2)
  assert.match(d.stderr, /has no chain yet: give the genesis the chain file was made with \(--genesis FILE\)/)
})
