// Starting and stopping the two nodes under test (Keel and anvil) on 127.0.0.1, and reading their
// CPU time and peak RSS from /proc.

import { spawn } from 'node:child_process'
import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort } from '../lib/free-port.js'
import { keelBin, keelNodeFlags } from '../lib/keel-launch.js'

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const CLK_TCK = 100


/** Polls eth_chainId until it answers; resolves to the milliseconds from `spawnedAt` to that answer. */
async function waitForRpc(url, proc, deadlineMs, spawnedAt = performance.now()) {
  const until = Date.now() + deadlineMs
  while (Date.now() < until) {
    if (proc.exitCode !== null) throw new Error(`node exited with ${proc.exitCode}`)
    try {
      const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}' })
      if (r.ok) return performance.now() - spawnedAt
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  throw new Error(`${url} did not answer within ${deadlineMs} ms`)
}

/**
 * `dataDir`: a data folder to open (a chain made beforehand; removed on stop like the default temp one);
 * `args`: extra `keel start` flags.
 * @returns {Promise<{name, url, wsUrl, pid, startMs, stop()}>} (startMs: spawn to the first answer)
 */
export async function startKeel({ dataDir = mkdtempSync(join(tmpdir(), 'keel-bench-')), args = [] } = {}) {
  const port = await freePort()
  // KEEL_BENCH_NODE_ARGS: extra node flags for profiling the node under load (e.g. --cpu-prof);
  // KEEL_BENCH_STDOUT: a file the node's standard output is appended to (what --trace-gc prints)
  const nodeArgs = (process.env.KEEL_BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean)
  const stdout = process.env.KEEL_BENCH_STDOUT ? openSync(process.env.KEEL_BENCH_STDOUT, 'a') : 'ignore'
  const spawnedAt = performance.now()
  const proc = spawn(process.execPath, [...keelNodeFlags(), ...nodeArgs, keelBin, 'start', '--dev', '--data-dir', dataDir, '--host', '127.0.0.1', '--port', String(port), '--metrics-port', '0',
    // one load generator = one client IP: lift the per-IP WebSocket cap for the 1,000-subscriber fan-out
    '--ws-max-connections-per-ip', '0', ...args], { stdio: ['ignore', stdout, 'pipe'] })
  let stderr = ''
  proc.stderr.on('data', (d) => (stderr = (stderr + d).slice(-4000)))
  const url = `http://127.0.0.1:${port}`
  let startMs
  try {
    startMs = await waitForRpc(url, proc, 30_000, spawnedAt)
  } catch (err) {
    proc.kill('SIGKILL')
    throw new Error(`${err.message}\n${stderr}`)
  }
  return { name: 'keel', url, wsUrl: `ws://127.0.0.1:${port}`, pid: proc.pid, startMs, stop: () => stop(proc, () => rmSync(dataDir, { recursive: true, force: true })) }
}

export async function startAnvil({ args = [] } = {}) {
  const port = await freePort()
  const bin = join(repoRoot, 'node_modules', '.bin', 'anvil')
  const spawnedAt = performance.now()
  const proc = spawn(bin, ['--chain-id', '24589', '--block-time', '1', '--port', String(port), '--host', '127.0.0.1', '--silent', ...args], { stdio: 'ignore' })
  const url = `http://127.0.0.1:${port}`
  const startMs = await waitForRpc(url, proc, 30_000, spawnedAt)
  return { name: 'anvil', url, wsUrl: `ws://127.0.0.1:${port}`, pid: proc.pid, startMs, stop: () => stop(proc) }
}

function stop(proc, cleanup = () => {}) {
  return new Promise((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) {
      cleanup()
      return resolve()
    }
    const timer = setTimeout(() => proc.kill('SIGKILL'), 15_000)
    proc.once('exit', () => {
      clearTimeout(timer)
      cleanup()
      resolve()
    })
    proc.kill('SIGTERM')
  })
}

/** utime + stime of a process (all its threads), in microseconds. */
export function cpuMicros(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLK_TCK
}

/** Peak resident set (VmHWM) in MiB. */
export function peakRssMiB(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const m = /VmHWM:\s+(\d+) kB/.exec(status)
  return m ? Math.round(Number(m[1]) / 1024) : NaN
}

/** Sets VmHWM back to the current RSS (Linux's clear_refs "5"), so that a later peak is one phase's own. */
export function resetPeakRss(pid) {
  writeFileSync(`/proc/${pid}/clear_refs`, '5')
}
