// A server process the tests start on loopback (nats-server, redis-server): spawned, ready once its output
// says so, stopped with a signal. The output's tail is kept for the error messages.

import { spawn } from 'node:child_process'

const READY_TIMEOUT_MS = 15_000

/**
 * @param {string} command  a Debian package's binary, installed by .ci/run
 * @param {string[]} args
 * @param {RegExp} ready  what its output says once it serves
 * @returns {{started: Promise<void>, stop(signal?: NodeJS.Signals): Promise<void>, signal(signal: NodeJS.Signals): void, log(): string}}
 */
export function spawnDaemon(command, args, ready) {
  let log = ''
  const proc = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] })
  const started = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${command} not ready in ${READY_TIMEOUT_MS} ms:\n${log}`)), READY_TIMEOUT_MS)
    const onData = (chunk) => {
      log = (log + chunk).slice(-16_000)
      if (ready.test(log)) {
        clearTimeout(timer)
        resolve()
      }
    }
    proc.stdout.on('data', onData)
    proc.stderr.on('data', onData)
    proc.once('error', (err) => {
      clearTimeout(timer)
      reject(new Error(`could not start ${command} (is it installed? .ci/run installs it): ${err.message}`))
    })
    proc.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`${command} exited (${code}):\n${log}`))
    })
  })
  const stop = async (signal = 'SIGTERM') => {
    if (proc.exitCode !== null || proc.signalCode !== null) return
    const exited = new Promise((resolve) => proc.once('exit', resolve))
    proc.kill(signal)
    const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000)
    await exited
    clearTimeout(timer)
  }
  return { started, stop, signal: (signal) => proc.kill(signal), log: () => log }
}
