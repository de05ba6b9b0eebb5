// Foundry against Keel, as a deployment runs it: `forge script --broadcast` deploys a contract with
// CREATE and another through the CREATE2 deployer, then calls them; `cast` reads the results back, replays
// a mined transaction on a fork of the chain (`cast run`), and sends, estimates and proves as users do.
// forge and cast are the npm builds of Foundry 1.7.1 (devDependencies); forge compiles with solc-js
// through test/helpers/solc-cli.cjs, so that nothing is downloaded.

import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, chmodSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { getContractAddress, pad } from 'viem'
import { DEV_ADDRESSES, DEV_KEYS, startNode } from '../helpers/node.js'
import { rpcResult } from '../helpers/rpc.js'

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const forgeBin = join(repoRoot, 'node_modules', '@foundry-rs', 'forge-linux-amd64', 'bin', 'forge')
const castBin = join(repoRoot, 'node_modules', '@foundry-rs', 'cast-linux-amd64', 'bin', 'cast')
const DEPLOYER = '0x4e59b44847b379578588920ca78fbf26c0b4956c'

let work
let node
let env

/** Runs a Foundry binary; resolves with its output, rejects with it on a non-zero exit. */
function run(file, args, cwd = work) {
  return new Promise((resolve, reject) => {
    execFile(file, args, { cwd, env, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${file.split('/').pop()} ${args.join(' ')}: ${err.message}\n${stdout}\n${stderr}`))
      else resolve(stdout)
    })
  })
}
const cast = (...args) => run(castBin, [...args, '--rpc-url', node.url]).then((out) => out.trim())

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'keel-foundry-'))
  cpSync(join(repoRoot, 'test', 'fixtures', 'foundry'), join(work, 'project'), { recursive: true })
  const solc = join(work, 'solc')
  writeFileSync(solc, `#!/bin/sh\nexec "${process.execPath}" "${join(repoRoot, 'test', 'helpers', 'solc-cli.cjs')}" "$@"\n`)
  chmodSync(solc, 0o755)
  // Foundry keeps its caches under $HOME/.foundry and $HOME/.svm: a home of the test's own
  mkdirSync(join(work, 'home'))
  env = { PATH: process.env.PATH, HOME: join(work, 'home'), NO_COLOR: '1', FOUNDRY_DISABLE_NIGHTLY_WARNING: '1' }
  node = await startNode({ blockTime: 1 })
})

after(async () => {
  await node?.stop()
  if (work !== undefined) rmSync(work, { recursive: true, force: true })
})

test('forge script --broadcast: CREATE, CREATE2 through the deployer, calls; cast reads, replays, sends and proves', async () => {
  const project = join(work, 'project')
  const out = await run(forgeBin, [
    'script', 'script/Deploy.s.sol:Deploy', '--rpc-url', node.url, '--private-key', DEV_KEYS[0],
    '--broadcast', '--use', join(work, 'solc'), '--offline',
  ], project)
  assert.match(out, /ONCHAIN EXECUTION COMPLETE & SUCCESSFUL/)

  const broadcast = JSON.parse(readFileSync(join(project, 'broadcast', 'Deploy.s.sol', '24589', 'run-latest.json'), 'utf8'))
  assert.deepEqual(broadcast.transactions.map((t) => t.transactionType), ['CREATE', 'CALL', 'CREATE2', 'CALL', 'CALL'])
  assert.equal(broadcast.receipts.length, 5)
  for (const receipt of broadcast.receipts) assert.equal(receipt.status, '0x1')
  const [created, , create2] = broadcast.transactions
  assert.equal(create2.transaction.to, DEPLOYER)
  // CREATE from the sender's first nonce; CREATE2 at the address the deployer, the salt and the init code give
  assert.equal(created.contractAddress, getContractAddress({ from: DEV_ADDRESSES[0], nonce: 0n }).toLowerCase())
  const artifact = JSON.parse(readFileSync(join(project, 'out', 'Deploy.s.sol', 'Counter.json'), 'utf8'))
  const salt = pad('0x07', { size: 32 })
  const counter = getContractAddress({ opcode: 'CREATE2', from: DEPLOYER, salt, bytecode: artifact.bytecode.object })
  assert.equal(create2.contractAddress, counter.toLowerCase())

  assert.equal(await cast('call', counter, 'n()(uint256)'), '2')
  assert.equal(await cast('call', created.contractAddress, 'n()(uint256)'), '1')
  assert.equal(await cast('code', counter), artifact.deployedBytecode.object)

  // cast run: the block's earlier transactions and then this one, on a fork of the parent block's state
  const bump = broadcast.receipts[4]
  const replay = await cast('run', bump.transactionHash)
  assert.match(replay, /Transaction successfully executed/)
  assert.equal(replay.match(/Gas used: (\d+)/)?.[1], String(BigInt(bump.gasUsed)))

  const sent = JSON.parse(await cast('send', counter, 'inc()', '--private-key', DEV_KEYS[1], '--json'))
  assert.equal(sent.status, '0x1')
  assert.equal(await cast('call', counter, 'n()(uint256)'), '3')
  assert.equal(await cast('storage', counter, '0'), pad('0x03', { size: 32 }))
  const estimate = BigInt(await cast('estimate', counter, 'inc()', '--from', DEV_ADDRESSES[2]))
  assert.ok(estimate > 21_000n && estimate < 100_000n, `estimate ${estimate}`)
  const proof = JSON.parse(await cast('proof', counter, '0'))
  assert.equal(proof.nonce, '0x1')
  assert.equal(proof.storageProof[0].value, '0x3')
  assert.equal(await cast('nonce', DEV_ADDRESSES[0]), '5')
  assert.equal(await cast('chain-id'), '24589')
  assert.equal(BigInt(await cast('block-number')), BigInt(await rpcResult(node.url, 'eth_blockNumber')))
})
