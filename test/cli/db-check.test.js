// A damaged chain database: `keel db check` walks a real data folder and names the first problem; a node
// finding its database unreadable at start refuses with the problem and the commands that help, and
// writes nothing; `keel db repair` keeps a copy and lets LevelDB rebuild. Each case damages its own copy
// of one data folder made by a real node (a token contract with storage and logs, plain transfers).

import assert from 'node:assert/strict'
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { ClassicLevel } from 'classic-level'
import { ContractFactory, JsonRpcProvider, NonceManager, Wallet, concat, dataSlice, getBytes, keccak256 } from 'ethers'
import { compile } from '../helpers/contracts.js'
import { keelCli } from '../helpers/keel-cli.js'
import { DEV_KEYS, startNode } from '../helpers/node.js'
import { rpcResult } from '../helpers/rpc.js'

const root = mkdtempSync(join(tmpdir(), 'keel-db-check-'))
after(() => rmSync(root, { recursive: true, force: true }))
const pristine = join(root, 'pristine')
let head
let tokenProof
let tokenAddress

before(async () => {
  const node = await startNode({ dataDir: pristine, blockTime: 0, args: ['--rate-limit', '0'] })
  try {
    const provider = new JsonRpcProvider(node.url, undefined, { staticNetwork: true })
    const wallet = new NonceManager(new Wallet(DEV_KEYS[0], provider))
    const { Token } = compile()
    const token = await new ContractFactory(Token.abi, Token.bytecode, wallet).deploy()
    await token.waitForDeployment()
    for (let i = 0; i < 12; i++) await (await token.transfer(Wallet.createRandom().address, 5)).wait()
    for (let i = 0; i < 6; i++) await (await wallet.sendTransaction({ to: Wallet.createRandom().address, value: 1000n })).wait()
    head = await rpcResult(node.url, 'eth_getBlockByNumber', ['latest', false])
    tokenAddress = await token.getAddress()
    tokenProof = await rpcResult(node.url, 'eth_getProof', [tokenAddress, [], head.number])
    provider.destroy()
  } finally {
    await node.stop()
  }
  // a first check opens the folder once: LevelDB turns its log into a table file, so there are table files to damage
  const first = await keelCli(['db', 'check', '--data-dir', pristine])
  assert.equal(first.code, 0, first.stdout + first.stderr)
  assert.ok(readdirSync(join(pristine, 'chain')).some((f) => f.endsWith('.ldb')), 'no table file to damage')
})

let copies = 0
function copy() {
  const dir = join(root, `copy-${copies++}`)
  cpSync(pristine, dir, { recursive: true })
  return dir
}

const tableFiles = (dir) => readdirSync(join(dir, 'chain')).filter((f) => f.endsWith('.ldb'))
/** name -> content of every table file (LevelDB's open may rewrite its manifest and log, never a table) */
function snapshotOf(dir) {
  const out = {}
  for (const f of tableFiles(dir)) out[f] = readFileSync(join(dir, 'chain', f)).toString('base64')
  return out
}

/** Starts a node on `dir`, which must refuse; returns its output. */
async function refusedStart(dir, problem) {
  const before = snapshotOf(dir)
  const started = await keelCli(['start', '--dev', '--data-dir', dir, '--port', '0', '--metrics=false'], { timeoutMs: 30_000 })
  assert.notEqual(started.code, 0, `the node started on a damaged database:\n${started.stdout}`)
  const said = started.stdout + started.stderr
  assert.match(said, problem)
  assert.match(said, /cannot be used: .*The node did not start and wrote nothing to it/)
  assert.match(said, new RegExp(`keel db check --data-dir ${dir}`))
  assert.match(said, new RegExp(`keel db repair --data-dir ${dir}`))
  assert.match(said, /keel restore BACKUP_DIR --data-dir NEW_DIR/)
  for (const [name, content] of Object.entries(before)) {
    assert.equal(readFileSync(join(dir, 'chain', name)).toString('base64'), content, `the refused start changed or removed ${name}`)
  }
  return said
}

async function check(dir) {
  const result = await keelCli(['db', 'check', '--data-dir', dir, '--json'])
  const report = JSON.parse(result.stdout)
  return { ...result, report }
}

test('db check walks a sound chain: every block, the head state with its contracts and storage, the indexes', async () => {
  const { code, report, stderr } = await check(pristine)
  assert.equal(code, 0, stderr)
  assert.equal(report.ok, true)
  assert.equal(report.head.hash, head.hash)
  assert.equal(report.blocks, Number(head.number) + 1)
  assert.ok(report.transactions >= 19, `${report.transactions} transactions`)
  assert.ok(report.contracts >= 1 && report.storageSlots >= 13, `contracts ${report.contracts}, slots ${report.storageSlots}`)
  assert.ok(report.indexEntries > report.transactions)
  const text = await keelCli(['db', 'check', '--data-dir', pristine])
  assert.match(text.stdout, /^result {13}ok$/m)
})

test('a missing table file: the node refuses to start, db check names it', async () => {
  const dir = copy()
  unlinkSync(join(dir, 'chain', tableFiles(dir)[0]))
  await refusedStart(dir, /LevelDB cannot open it: Corruption: 1 missing files; e\.g\.: .*\.ldb/)
  const { code, report, stderr } = await check(dir)
  assert.equal(code, 1)
  assert.match(report.problem, /^LevelDB cannot open the database: Corruption: 1 missing files/)
  assert.match(stderr, /keel db repair --data-dir/)
})

test('a truncated table file: the node refuses to start before LevelDB opens it', async () => {
  const dir = copy()
  const file = join(dir, 'chain', tableFiles(dir)[0])
  truncateSync(file, Math.floor(statSync(file).size / 2))
  await refusedStart(dir, /table file \d+\.ldb \(\d+ bytes, LevelDB recorded \d+\) is truncated or overwritten/)
  const { code, report } = await check(dir)
  assert.equal(code, 1)
  assert.match(report.problem, /^table file \d+\.ldb \(\d+ bytes, LevelDB recorded \d+\) is truncated or overwritten/)
  // LevelDB's repair drops what it cannot read: the folder opens again, and the check says what is missing
  const repaired = await keelCli(['db', 'repair', '--data-dir', dir])
  assert.match(repaired.stdout, /LevelDB repair done; checking the chain/)
  assert.ok(readdirSync(dir).some((f) => f.startsWith('chain.before-repair-')), 'no copy kept')
  assert.doesNotMatch(repaired.stdout, /truncated or overwritten|LevelDB cannot open/)
  if (repaired.code !== 0) assert.match(repaired.stdout, /^FIRST PROBLEM {6}\S/m)
})

test('a damaged manifest: the node refuses; keel db repair keeps a copy and rebuilds it; the node then serves the same head', async () => {
  const dir = copy()
  const manifest = readdirSync(join(dir, 'chain')).find((f) => f.startsWith('MANIFEST-'))
  const bytes = readFileSync(join(dir, 'chain', manifest))
  bytes.fill(0x5a, 8, Math.min(bytes.length, 40))
  writeFileSync(join(dir, 'chain', manifest), bytes)
  await refusedStart(dir, /LevelDB cannot open it: Corruption/)
  const damaged = {}
  for (const f of readdirSync(join(dir, 'chain'))) if (f !== 'LOCK' && !f.startsWith('LOG')) damaged[f] = readFileSync(join(dir, 'chain', f)).toString('base64')

  const repaired = await keelCli(['db', 'repair', '--data-dir', dir])
  assert.equal(repaired.code, 0, repaired.stdout + repaired.stderr)
  assert.match(repaired.stdout, /copied .* to .*chain\.before-repair-/)
  assert.match(repaired.stdout, /the chain checks out/)
  const kept = readdirSync(dir).find((f) => f.startsWith('chain.before-repair-'))
  assert.ok(kept, 'no copy kept')
  const keptFiles = {}
  for (const f of readdirSync(join(dir, kept))) if (f !== 'LOCK' && !f.startsWith('LOG')) keptFiles[f] = readFileSync(join(dir, kept, f)).toString('base64')
  assert.deepEqual(keptFiles, damaged, 'the kept copy is not the folder as it was')

  const node = await startNode({ dataDir: dir, blockTime: 0 })
  try {
    const block = await rpcResult(node.url, 'eth_getBlockByNumber', [head.number, false])
    assert.equal(block.hash, head.hash)
  } finally {
    await node.stop()
  }
})

test('a missing CURRENT file: the node refuses instead of starting a new chain over the old files', async () => {
  const dir = copy()
  unlinkSync(join(dir, 'chain', 'CURRENT'))
  await refusedStart(dir, /its CURRENT file \(the pointer to the manifest\) is missing/)
  assert.ok(tableFiles(dir).length > 0, 'table files were deleted')
})

/** Edits one key of a stopped copy directly. */
async function editKey(dir, edit) {
  const db = new ClassicLevel(join(dir, 'chain'), { keyEncoding: 'view', valueEncoding: 'view' })
  await db.open()
  try {
    await edit(db)
  } finally {
    await db.close()
  }
}
const key = (prefix, n) => {
  const k = new Uint8Array(9)
  k[0] = prefix.charCodeAt(0)
  new DataView(k.buffer).setBigUint64(1, BigInt(n))
  return k
}

test('db check reports the first problem: a missing header, a body that does not match its root, a missing state node', async () => {
  const middle = Math.floor(Number(head.number) / 2)

  const noHeader = copy()
  await editKey(noHeader, (db) => db.del(key('h', middle)))
  let r = await check(noHeader)
  assert.equal(r.code, 1)
  assert.equal(r.report.problem, `block ${middle}: no header (h)`)

  const badBody = copy()
  await editKey(badBody, async (db) => {
    // block 1 deployed the token: swap its body for block 2's
    await db.put(key('b', 1), await db.get(key('b', 2)))
  })
  r = await check(badBody)
  assert.match(r.report.problem, /^block 1: the transactions hash to root 0x[0-9a-f]{64}, the header's is 0x[0-9a-f]{64}$/)

  const noNode = copy()
  await editKey(noNode, async (db) => {
    // the token's storage root at the head: 's' + the first 7 bytes of keccak(address) + the root
    const k = getBytes(concat(['0x73', dataSlice(keccak256(tokenAddress), 0, 7), tokenProof.storageHash]))
    assert.notEqual(await db.get(k), undefined)
    await db.del(k)
  })
  r = await check(noNode)
  assert.equal(r.report.problem, `state trie: node ${tokenProof.storageHash} (the storage of the account with hashed address ${keccak256(tokenAddress)}) is missing`)
  // the head itself is whole: a node starts on it (the start checks only what it must read)
  const n = await startNode({ dataDir: noNode, blockTime: 0 })
  await n.stop()
})

test("db check: an explorer entry naming a transaction no block holds, and an appearance past the head", async () => {
  const sender = getBytes(Wallet.createRandom().address)
  const ghost = getBytes(keccak256('0x01'))
  const orphan = copy()
  await editKey(orphan, async (db) => {
    // N + sender(20) + nonce(8) -> a transaction hash that no block holds
    const k = new Uint8Array(29)
    k[0] = 'N'.charCodeAt(0)
    k.set(sender, 1)
    await db.put(k, ghost)
  })
  let r = await check(orphan)
  assert.equal(r.code, 1)
  assert.match(r.report.problem, new RegExp(`^transaction by sender and nonce \\(N\\): entry 0x4e[0-9a-f]{56} names transaction ${keccak256('0x01')}, which no block holds$`))

  const ahead = copy()
  await editKey(ahead, async (db) => {
    // I + address(20) + number(8) + index(4), a block past the head
    const k = new Uint8Array(33)
    k[0] = 'I'.charCodeAt(0)
    k.set(sender, 1)
    new DataView(k.buffer).setBigUint64(21, BigInt(head.number) + 5n)
    await db.put(k, new Uint8Array(0))
  })
  r = await check(ahead)
  assert.equal(r.report.problem.startsWith('address appearances (I): entry 0x49'), true, r.report.problem)
  assert.match(r.report.problem, new RegExp(`names block ${BigInt(head.number) + 5n}, past the head ${BigInt(head.number)}$`))
})

test('db check and db repair refuse while a node runs on the folder', async () => {
  const dir = copy()
  const node = await startNode({ dataDir: dir, blockTime: 1 })
  try {
    for (const sub of ['check', 'repair']) {
      const r = await keelCli(['db', sub, '--data-dir', dir])
      assert.equal(r.code, 2, r.stdout + r.stderr)
      assert.match(r.stderr, /a node is running on .*: stop it first/)
    }
    assert.equal(existsSync(join(dir, 'chain.before-repair')), false)
  } finally {
    await node.stop()
  }
})
