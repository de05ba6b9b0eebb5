// Starts a real Keel process for end-to-end tests and tears it down again.
//
// KEEL_E2E_TARGET=anvil runs the same suite against anvil (a devDependency) instead: useful to tell
// a wrong test from a wrong node. Anvil words errors differently and keeps no pool across restarts,
// so the geth-wording and persistence checks are expected to fail there.

import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { devWallet } from '../../bench/lib/dev-wallets.js'
import { keelBin, keelNodeFlags } from '../../bench/lib/keel-launch.js'

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
/** The anvil binary of the devDependency (the KEEL_E2E_TARGET=anvil runs, and tests that run anvil beside Keel). */
export const anvilBin = join(repoRoot, 'node_modules', '@foundry-rs', 'anvil-linux-amd64', 'bin', 'anvil')

export const target = process.env.KEEL_E2E_TARGET === 'anvil' ? 'anvil' : 'keel'

export const CHAIN_ID = 24589
/**
 * The first 10 accounts of the test mnemonic (m/44'/60'/0'/0/i), each funded with 10,000 ether by --dev.
 * Derived rather than typed in: account 0 is 0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266, key 0xac09...ff80.
 */
const devWallets = Array.from({ length: 10 }, (_, i) => devWallet(i))
export const DEV_KEYS = devWallets.map((wallet) => wallet.privateKey)
export const DEV_ADDRESSES = devWallets.map((wallet) => wallet.address)

const READY_TIMEOUT_MS = 20_000
const STOP_TIMEOUT_MS = 20_000
const LOG_TAIL_CHARS = 16_000

/** Children still alive and temp dirs still owned, so a crashed or interrupted test file leaves nothing behind. */
const liveChildren = new Set()
const ownedDirs = new Set()
process.on('exit', () => {
  for (const child of liveChildren) {
    try {
      process.kill(child.pid, 'SIGKILL')
    } catch {
      // already gone
    }
  }
  for (const dir of ownedDirs) rmSync(dir, { recursive: true, force: true })
})
// 'exit' does not run when a signal ends the process (Ctrl-C, a runner's timeout): exit through it instead.
for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143], ['SIGHUP', 129]]) {
  process.once(signal, () => process.exit(code))
}

/**
 * @typedef {object} NodeHandle
 * @property {string} url            http://127.0.0.1:<port>
 * @property {string} wsUrl          ws://127.0.0.1:<port>
 * @property {string | undefined} metricsUrl  http://127.0.0.1:<port>/metrics, from `keel: metrics on ...` (not with --metrics=false)
 * @property {number} port
 * @property {string} dataDir
 * @property {import('node:child_process').ChildProcess} proc
 * @property {() => string} stdout   everything printed so far (tail)
 * @property {() => string} stderr   everything printed so far (tail)
 * @property {() => string | undefined} operatorAddress  from `keel: operator address 0x...`, if printed
 * @property {{code: number | null, signal: string | null} | undefined} previousExit
 *   how the process before a restart() ended (undefined for a first start)
 * @property {() => Promise<{code: number | null, signal: string | null}>} stop
 *   SIGTERM, wait for exit (SIGKILL after 20 s); removes the data dir if startNode created it.
 * @property {() => Promise<{code: number | null, signal: string | null}>} kill9  SIGKILL; keeps the data dir.
 * @property {(overrides?: {blockTime?: number, args?: string[]}) => Promise<NodeHandle>} restart
 *   graceful stop (unless already exited), then start on the same data dir (same options unless overridden).
 */

/**
 * @param {{args?: string[], dataDir?: string, dev?: boolean, blockTime?: number, readyTimeoutMs?: number}} [options]
 * @returns {Promise<NodeHandle>}
 */
export async function startNode(options = {}) {
  const { args = [], dev = true, blockTime = 1, readyTimeoutMs = READY_TIMEOUT_MS } = options
  let dataDir = options.dataDir
  let ownsDataDir = false
  if (dataDir === undefined) {
    dataDir = mkdtempSync(join(tmpdir(), 'keel-e2e-'))
    ownsDataDir = true
    ownedDirs.add(dataDir)
  }
  return launch({ args, dev, blockTime, dataDir, ownsDataDir, readyTimeoutMs })
}

function commandFor({ args, dev, blockTime, dataDir }) {
  if (target === 'anvil') {
    const anvilArgs = ['--host', '127.0.0.1', '--port', '0', '--chain-id', String(CHAIN_ID)]
    if (blockTime > 0) anvilArgs.push('--block-time', String(blockTime))
    anvilArgs.push('--state', join(dataDir, 'anvil-state.json'))
    return { file: anvilBin, argv: [...anvilArgs, ...args] }
  }
  const keelArgs = [...keelNodeFlags(), keelBin, 'start']
  if (dev) keelArgs.push('--dev')
  keelArgs.push('--data-dir', dataDir, '--host', '127.0.0.1', '--port', '0', '--metrics-port', '0', '--block-time', String(blockTime))
  return { file: process.execPath, argv: [...keelArgs, ...args] }
}

const readyPattern = target === 'anvil' ? /Listening on ([\d.]+):(\d+)/ : /^keel: listening on http:\/\/([\d.]+):(\d+)\s*$/m
const operatorPattern = /^keel: operator address (0x[0-9a-fA-F]{40})\b/m
const metricsPattern = /^keel: metrics on (http:\/\/\S+\/metrics)\s*$/m

/**
 * Resolves with the first match of `pattern` in a child's stdout (for tests that spawn a node their own
 * way, e.g. with TLS or the Docker image's command); rejects when the child exits first or on timeout.
 */
export function waitForLine(child, pattern, timeoutMs = READY_TIMEOUT_MS) {
  return new Promise((resolve, reject) => {
    let out = ''
    const timer = setTimeout(() => reject(new Error(`no line matching ${pattern} within ${timeoutMs} ms:\n${out}`)), timeoutMs)
    child.stdout.on('data', (chunk) => {
      out += chunk
      const match = pattern.exec(out)
      if (match) {
        clearTimeout(timer)
        resolve(match)
      }
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`process exited (${code}) before a line matching ${pattern}:\n${out}`))
    })
  })
}

function launch(spec, previousExit) {
  const { file, argv } = commandFor(spec)
  if (target === 'keel' && !existsSync(join(repoRoot, 'dist', 'cli', 'main.js'))) {
    return Promise.reject(new Error(`dist/cli/main.js is missing: build first (cd ${repoRoot} && npx tsc -p tsconfig.json)`))
  }
  const proc = spawn(file, argv, { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] })
  liveChildren.add(proc)

  let stdout = ''
  let stderr = ''
  let operator
  const exited = new Promise((resolve) => {
    proc.once('exit', (code, signal) => {
      liveChildren.delete(proc)
      resolve({ code, signal })
    })
  })
  proc.stdout.setEncoding('utf8')
  proc.stderr.setEncoding('utf8')
  proc.stderr.on('data', (chunk) => {
    stderr = (stderr + chunk).slice(-LOG_TAIL_CHARS)
  })

  const describe = (what) =>
    `${what}\ncommand: ${file} ${argv.join(' ')}\n--- stderr ---\n${stderr || '(empty)'}\n--- stdout ---\n${stdout || '(empty)'}`

  return new Promise((resolve, reject) => {
    let settled = false
    const fail = (err) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      reject(err)
    }
    const timer = setTimeout(() => {
      proc.kill('SIGKILL')
      fail(new Error(describe(`node did not print its listening line within ${spec.readyTimeoutMs} ms`)))
    }, spec.readyTimeoutMs)

    proc.once('error', (err) => fail(new Error(describe(`could not spawn the node: ${err.message}`))))
    exited.then(({ code, signal }) => {
      // Let the last stderr chunk arrive before reporting it.
      setImmediate(() => fail(new Error(describe(`node exited early (code ${code}, signal ${signal}) before listening`))))
    })

    proc.stdout.on('data', (chunk) => {
      stdout = (stdout + chunk).slice(-LOG_TAIL_CHARS)
      operator ??= operatorPattern.exec(stdout)?.[1]
      if (settled) return
      const ready = readyPattern.exec(stdout)
      if (ready === null) return
      settled = true
      clearTimeout(timer)
      const port = Number(ready[2])
      const metricsUrl = metricsPattern.exec(stdout)?.[1]
      resolve(handle({ spec, proc, exited, port, host: ready[1], metricsUrl, previousExit, logs: { stdout: () => stdout, stderr: () => stderr, operator: () => operator } }))
    })
  })
}

function handle({ spec, proc, exited, port, host, metricsUrl, previousExit, logs }) {
  const stopProcess = async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGTERM')
      const timer = setTimeout(() => proc.kill('SIGKILL'), STOP_TIMEOUT_MS)
      const result = await exited
      clearTimeout(timer)
      return result
    }
    return exited
  }
  return {
    url: `http://${host}:${port}`,
    wsUrl: `ws://${host}:${port}`,
    metricsUrl,
    port,
    dataDir: spec.dataDir,
    proc,
    stdout: logs.stdout,
    stderr: logs.stderr,
    operatorAddress: logs.operator,
    previousExit,
    async stop() {
      const result = await stopProcess()
      if (spec.ownsDataDir) {
        rmSync(spec.dataDir, { recursive: true, force: true })
        ownedDirs.delete(spec.dataDir)
      }
      return result
    },
    async kill9() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL')
      return exited
    },
    async restart(overrides = {}) {
      const previousExit = await stopProcess()
      return launch({ ...spec, ...overrides }, previousExit)
    },
  }
}
