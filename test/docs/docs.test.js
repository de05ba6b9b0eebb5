// README.md cannot rot: every fenced block of the user guide it is gets extracted and exercised, and so
// do the fenced blocks of the docs/ pages listed in DOCS.
//   ```sh test      run with bash (keel = this checkout) in a folder whose ./data is a running node's
//   ```js test      run as an ES module against the same node, PRIVATE_KEY = a freshly credited key
//   ```json metamask, ```js hardhat, ```sh foundry, ```sh deploy
//                   checked for content (MetaMask, Hardhat, Foundry, Docker, kubectl are not installed)
//   ```text         sample output, not run
// Blocks run in document order; the node is started without --dev, so operator.key exists.

import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { execFile, spawn, execFileSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import vm from 'node:vm'
import { Wallet } from 'ethers'
import { OPTIONS_BY_FLAG } from '../../dist/config/options.js'
import { startNode, waitForLine } from '../helpers/node.js'
import { keelCli, repoRoot } from '../helpers/keel-cli.js'

const DOCS = ['README.md', 'docs/architecture.md']
const LOCAL_HTTP = 'http://127.0.0.1:8545'
const LOCAL_WS = 'ws://127.0.0.1:8545'
const KNOWN_TAGS = new Set(['sh quickstart', 'sh test', 'js test', 'json metamask', 'js hardhat', 'sh foundry', 'sh deploy', 'text'])

/** Fenced blocks of a markdown file: { tag, code, line }. */
export function fencedBlocks(markdown) {
  const blocks = []
  const lines = markdown.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(.*)$/.exec(lines[i])
    if (!open) continue
    const start = i
    const body = []
    for (i++; i < lines.length && lines[i] !== '```'; i++) body.push(lines[i])
    blocks.push({ tag: open[1].trim(), code: body.join('\n'), line: start + 1 })
  }
  return blocks
}

let work
let node
let privateKey
const snippetDir = join(repoRoot, 'test', 'docs', '.snippets')

function run(file, args, options) {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: 120_000, ...options }, (err, stdout, stderr) => resolve({ code: err ? (err.code ?? 1) : 0, stdout, stderr }))
  })
}

/** The guides' local URLs point at the test node; a `keel credit` relying on the default --rpc gets the node's URL. */
const local = (code) =>
  code
    .replaceAll(LOCAL_HTTP, node.url)
    .replaceAll(LOCAL_WS, node.wsUrl)
    .split('\n')
    .map((line) => (/^keel credit /.test(line) && !line.includes('--rpc') ? `${line} --rpc ${node.url}` : line))
    .join('\n')

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'keel-docs-'))
  node = await startNode({ dataDir: join(work, 'data'), dev: false, blockTime: 0, args: ['--metrics-port', '0'] })
  // a shim so that the guides' `keel ...` lines run this checkout
  mkdirSync(join(work, 'bin'))
  writeFileSync(join(work, 'bin', 'keel'), `#!/bin/sh\nexec "${process.execPath}" "${join(repoRoot, 'bin', 'keel.js')}" "$@"\n`)
  chmodSync(join(work, 'bin', 'keel'), 0o755)
  // the genesis.json that the operator guide's `keel init --genesis genesis.json` reads
  writeFileSync(join(work, 'genesis.json'), readFileSync(join(node.dataDir, 'genesis.json')))
  // the user guide's PRIVATE_KEY: a new account, credited by the operator
  const user = Wallet.createRandom()
  privateKey = user.privateKey
  const credited = await keelCli(['credit', user.address, '5', '--rpc', node.url, '--data-dir', node.dataDir])
  assert.equal(credited.code, 0, credited.stderr)
  mkdirSync(snippetDir, { recursive: true })
})

after(async () => {
  await node?.stop()
  rmSync(work, { recursive: true, force: true })
  rmSync(snippetDir, { recursive: true, force: true })
})

const checks = {
  /** README's first two commands: `npm ci && npm start` really starts a node; `npm test` is what CI runs. */
  async 'sh quickstart'(block) {
    const commands = block.code.split('\n').map((l) => l.replace(/#.*$/, '').trim()).filter(Boolean)
    assert.deepEqual(commands, ['npm ci && npm start', 'npm ci && npm test'])
    assert.match(readFileSync(join(repoRoot, '.ci', 'run'), 'utf8'), /^npm test$/m, '.ci/run calls the README test command')
    const dataDir = join(work, 'quickstart-data')
    // npm ci already ran for this checkout: `npm start` builds and starts a node
    const child = spawn('npm', ['start', '--', '--data-dir', dataDir, '--port', '0', '--metrics-port', '0'], {
      cwd: repoRoot,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    try {
      // npm start builds first, hence the longer wait
      const [, url] = await waitForLine(child, /keel: listening on (http:\/\/127\.0\.0\.1:\d+)/, 90_000)
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}' })
      assert.equal((await res.json()).result, '0x600d')
      assert.ok(existsSync(join(dataDir, 'operator.key')), 'the embedded default generated an operator key')
    } finally {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      process.kill(-child.pid, 'SIGTERM')
      await exited
    }
  },
  async 'sh test'(block) {
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('KEEL_')))
    env.PATH = `${join(work, 'bin')}:${env.PATH}`
    const result = await run('bash', ['-e', '-o', 'pipefail', '-c', local(block.code)], { cwd: work, env })
    assert.equal(result.code, 0, `exit ${result.code}\n${result.stderr}${result.stdout}`)
    if (block.code.includes('eth_chainId')) assert.equal(JSON.parse(result.stdout).result, '0x600d')
    if (block.code.includes('admin_dbStats')) assert.match(JSON.parse(result.stdout).result.head.hash, /^0x[0-9a-f]{64}$/)
    return result
  },
  async 'js test'(block, index) {
    const file = join(snippetDir, `snippet-${index}.mjs`)
    writeFileSync(file, local(block.code))
    const result = await run(process.execPath, [file], { env: { ...process.env, PRIVATE_KEY: privateKey }, timeout: 60_000 })
    assert.equal(result.code, 0, `exit ${result.code}\n${result.stderr}${result.stdout}`)
    if (block.code.includes('getNetwork') || block.code.includes('getChainId')) assert.match(result.stdout, /^chain 24589n?$/m)
    if (block.code.includes('receipt')) assert.match(result.stdout, /status (1|success)$/m)
  },
  'json metamask'(block) {
    const params = JSON.parse(block.code)
    assert.equal(params.chainId, '0x600d')
    assert.equal(Number(params.chainId), 24589)
    assert.equal(params.nativeCurrency.decimals, 18)
    assert.match(params.nativeCurrency.symbol, /^[A-Z0-9]{2,6}$/)
    assert.equal(params.rpcUrls[0], LOCAL_HTTP)
  },
  'js hardhat'(block) {
    const sandbox = { module: { exports: {} }, process: { env: { PRIVATE_KEY: privateKey } } }
    vm.runInNewContext(block.code, sandbox)
    const keel = sandbox.module.exports.networks.keel
    assert.equal(keel.chainId, 24589)
    assert.equal(keel.url, LOCAL_HTTP)
    assert.deepEqual([...keel.accounts], [privateKey])
  },
  'sh foundry'(block) {
    const lines = block.code.split('\n').filter((l) => l.trim() !== '')
    for (const line of lines) {
      assert.match(line, /^(forge|cast) /)
      assert.ok(line.includes(`--rpc-url ${LOCAL_HTTP}`), line)
      if (line.startsWith('forge ')) assert.ok(line.includes('--chain 24589'), line)
    }
    // the cast lines run as written, against the test's node, with Foundry's cast (a devDependency)
    const cast = join(repoRoot, 'node_modules', '@foundry-rs', 'cast-linux-amd64', 'bin', 'cast')
    const home = mkdtempSync(join(tmpdir(), 'keel-docs-cast-'))
    try {
      for (const line of lines.filter((l) => l.startsWith('cast '))) {
        const args = line.split(/\s+/).slice(1).map((arg) => (arg === LOCAL_HTTP ? node.url : arg))
        const out = execFileSync(cast, args, { encoding: 'utf8', env: { PATH: process.env.PATH, HOME: home } }).trim()
        if (args[0] === 'chain-id') assert.equal(out, '24589', line)
        else assert.match(out, /^\d+$/, line)
      }
    } finally {
      rmSync(home, { recursive: true, force: true })
    }
  },
  'sh deploy'(block) {
    for (const line of block.code.split('\n').filter((l) => l.trim() !== '')) {
      assert.match(line, /^(docker|kubectl|haproxy|keel) /, line)
      for (const [path] of line.matchAll(/deploy\/[\w./-]+/g)) assert.ok(existsSync(join(repoRoot, path)), `${path} exists`)
      if (line.startsWith('keel start')) {
        for (const [, flag] of line.matchAll(/--([a-z-]+)/g)) assert.ok(OPTIONS_BY_FLAG.has(flag), `--${flag} is an option of keel start`)
      }
      const inImage = /(?:exec keel|exec keel-0 --|exec keel) (keel .*)$/.exec(line)
      if (inImage) assert.match(inImage[1], /^keel (credit|backup|db stats|account|restore|init)\b/)
    }
  },
  text() {},
}

for (const doc of DOCS) {
  const blocks = fencedBlocks(readFileSync(join(repoRoot, doc), 'utf8'))
  test(`${doc}: every fenced block carries a known tag`, () => {
    assert.ok(blocks.length > 0)
    for (const block of blocks) assert.ok(KNOWN_TAGS.has(block.tag), `${doc}:${block.line}: unknown or missing tag "${block.tag}"`)
  })
  blocks.forEach((block, index) => {
    if (block.tag === 'text') return
    test(`${doc}:${block.line} (${block.tag})`, async () => {
      await checks[block.tag](block, `${doc.replace(/\W/g, '_')}-${index}`)
    })
  })
}

test('the operator guide left what it promised: a backup, a restored chain, keystores, a second chain', () => {
  assert.ok(existsSync(join(work, 'backups', 'first', 'keel-backup.json')))
  const manifest = JSON.parse(readFileSync(join(work, 'backups', 'first', 'keel-backup.json'), 'utf8'))
  assert.ok(existsSync(join(work, 'restored', 'chain')))
  assert.match(manifest.head.hash, /^0x[0-9a-f]{64}$/)
  assert.ok(existsSync(join(work, 'chain2', 'chain')))
  assert.ok(existsSync(join(work, 'data', 'keystore')))
})
