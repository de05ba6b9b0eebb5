// A real nats-server with JetStream (Debian's `nats-server`, installed by .ci/run) on a free loopback
// port, its store in a temp folder. stop() and start() again keep the port and the store, for outage tests.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../../bench/lib/free-port.js'
import { spawnDaemon } from './daemon.js'

/**
 * @param {{maxPayload?: number}} [options] max_payload in bytes (the server's default is 1 MiB)
 * @returns {Promise<{url: string, port: number, storeDir: string, stop(): Promise<void>, start(): Promise<void>, close(): Promise<void>, log(): string}>}
 */
export async function startNats(options = {}) {
  const port = await freePort()
  const storeDir = mkdtempSync(join(tmpdir(), 'keel-nats-'))
  let daemon
  const start = async () => {
    const args = ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', storeDir]
    if (options.maxPayload !== undefined) {
      // max_payload has no command-line flag
      const conf = join(storeDir, 'nats.conf')
      writeFileSync(conf, `max_payload: ${options.maxPayload}\n`)
      args.push('-c', conf)
    }
    daemon = spawnDaemon('nats-server', args, /Server is ready/)
    await daemon.started
  }
  const stop = () => daemon.stop()
  await start()
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    storeDir,
    stop,
    start,
    close: async () => {
      await stop()
      rmSync(storeDir, { recursive: true, force: true })
    },
    log: () => daemon.log(),
  }
}
