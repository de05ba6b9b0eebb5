// HTTPS and WSS on the same port with --tls-cert/--tls-key. The certificate is self-signed for 127.0.0.1;
// the ethers client runs in a child process started with NODE_EXTRA_CA_CERTS, so it verifies the
// certificate for real instead of switching verification off.

import assert from 'node:assert/strict'
import { execFile, execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { waitForLine } from '../helpers/node.js'

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const run = promisify(execFile)

const CLIENT = `
import { JsonRpcProvider, WebSocketProvider, Wallet } from '${import.meta.resolve('ethers')}'
const [url, wsUrl, key] = process.argv.slice(2)
const http = new JsonRpcProvider(url, 24589, { staticNetwork: true })
const wallet = new Wallet(key, http)
const tx = await wallet.sendTransaction({ to: '0x000000000000000000000000000000000000dEaD', value: 1n })
const receipt = await tx.wait()
const ws = new WebSocketProvider(wsUrl, 24589, { staticNetwork: true })
const wsBlock = await ws.getBlockNumber()
const wsChain = (await ws.getNetwork()).chainId
await ws.destroy()
http.destroy()
console.log(JSON.stringify({ status: receipt.status, wsBlock, wsChain: String(wsChain) }))
`

describe('TLS', () => {
  let dir
  let proc
  let port
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keel-tls-'))
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
      '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1',
      '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
    ], { stdio: 'ignore' })
    writeFileSync(join(dir, 'client.mjs'), CLIENT)
    proc = spawn(process.execPath, [
      join(repoRoot, 'bin', 'keel.js'), 'start', '--dev', '--data-dir', join(dir, 'data'), '--host', '127.0.0.1',
      '--port', '0', '--metrics-port', '0', '--block-time', '0',
      '--tls-cert', join(dir, 'cert.pem'), '--tls-key', join(dir, 'key.pem'),
    ], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] })
    port = Number((await waitForLine(proc, /listening on https:\/\/127\.0\.0\.1:(\d+)/))[1])
  })
  after(async () => {
    if (proc && proc.exitCode === null) {
      const exited = new Promise((r) => proc.once('exit', r))
      proc.kill('SIGTERM')
      await exited
    }
    rmSync(dir, { recursive: true, force: true })
  })

  it('serves ethers over https and wss with a verified certificate', async () => {
    const { stdout } = await run(
      process.execPath,
      [join(dir, 'client.mjs'), `https://127.0.0.1:${port}`, `wss://127.0.0.1:${port}`, '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80'],
      { env: { ...process.env, NODE_EXTRA_CA_CERTS: join(dir, 'cert.pem'), NODE_PATH: join(repoRoot, 'node_modules') }, cwd: repoRoot, timeout: 30_000 },
    )
    const result = JSON.parse(stdout.trim().split('\n').pop())
    assert.equal(result.status, 1)
    assert.ok(result.wsBlock >= 1)
    assert.equal(result.wsChain, '24589')
  })

  it('refuses a client that does not trust the certificate, and plain HTTP on the TLS port', async () => {
    await assert.rejects(fetch(`https://127.0.0.1:${port}/health`), (err) => /certificate|self.signed|fetch failed/i.test(String(err.cause ?? err)))
    await assert.rejects(fetch(`http://127.0.0.1:${port}/health`))
  })

  it('rejects --tls-cert without --tls-key at start', async () => {
    const result = await run(process.execPath, [
      join(repoRoot, 'bin', 'keel.js'), 'start', '--dev', '--data-dir', join(dir, 'data2'), '--port', '0', '--metrics-port', '0',
      '--tls-cert', join(dir, 'cert.pem'),
    ], { cwd: repoRoot }).catch((err) => err)
    assert.equal(result.code, 2)
    assert.match(result.stderr, /--tls-cert and --tls-key go together/)
  })
})
