// A real nats-server with JetStream (Debian's `nats-server`, installed by .ci/run) on a free loopback
// port, its store in a temp folder. stop() and start() again keep the port and the store, for outage tests.

import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../../bench/lib/free-port.js'

const READY_TIMEOUT_MS = 15_000


/**
 * @param {{maxPayload?: number}} [options] max_payload in bytes (the server's default is 1 MiB)
 * @returns {Promise<{url: string, port: number, storeDir: string, stop(): Promise<void>, start(): Promise<void>, close(): Promise<void>, log(): string}>}
 */
export async function startNats(options = {}) {
  const port = await freePort()
  const storeDir = mkdtempSync(join(tmpdir(), 'keel-nats-'))
  let proc
  let log = ''
  const start = () =>
    new Promise((resolve, reject) => {
      const args = ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', storeDir]
      if (options.maxPayload !== undefined) {
        // max_payload has no command-line flag
        const conf = join(storeDir, 'nats.conf')
        writeFileSync(conf, `max_payload: ${options.maxPayload}\n`)
        args.push('-c', conf)
      }
      proc = spawn('nats-server', args, { stdio: ['ignore', 'pipe', 'pipe'] })
      const timer = setTimeout(() => reject(new Error(`nats-server not ready in ${READY_TIMEOUT_MS} ms:\n${log}`)), READY_TIMEOUT_MS)
      const onData = (chunk) => {
        log = (log + chunk).slice(-16_000)
        if (/Server is ready/.test(log)) {
          clearTimeout(timer)
          resolve()
        }
      }
      proc.stdout.on('data', onData)
      proc.stderr.on('data', onData)
      proc.once('error', (err) => {
        clearTimeout(timer)
        reject(new Error(`could not start nats-server (is it installed? .ci/run installs it): ${err.message}`))
      })
      proc.once('exit', (code) => {
        clearTimeout(timer)
        reject(new Error(`nats-server exited (${code}):\n${log}`))
      })
    })
  const stop = async () => {
    if (proc === undefined || proc.exitCode !== null || proc.signalCode !== null) return
    const exited = new Promise((resolve) => proc.once('exit', resolve))
    proc.kill('SIGTERM')
    const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000)
    await exited
    clearTimeout(timer)
  }
  await start()
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    storeDir,
    stop,
    start: async () => {
      log = ''
      await start()
    },
    close: async () => {
      await stop()
      rmSync(storeDir, { recursive: true, force: true })
    },
    log: () => log,
  }
}
