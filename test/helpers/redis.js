// A real redis-server (Debian's `redis-server`, installed by .ci/run) on a free loopback port, without
// persistence, in a temp folder. stop() (SIGKILL, as a crash) and start() again keep the port and come
// back empty, for outage tests; pause() and resume() make it a Redis that does not answer (SIGSTOP).

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../../bench/lib/free-port.js'
import { spawnDaemon } from './daemon.js'

/** @returns {Promise<{url: string, port: number, stop(): Promise<void>, start(): Promise<void>, pause(): void, resume(): void, close(): Promise<void>, log(): string}>} */
export async function startRedis() {
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'keel-redis-'))
  let daemon
  const start = async () => {
    daemon = spawnDaemon('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], /Ready to accept connections/)
    await daemon.started
  }
  const stop = () => daemon.stop('SIGKILL')
  await start()
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop,
    start,
    pause: () => daemon.signal('SIGSTOP'),
    resume: () => daemon.signal('SIGCONT'),
    close: async () => {
      daemon.signal('SIGCONT')
      await stop()
      rmSync(dir, { recursive: true, force: true })
    },
    log: () => daemon.log(),
  }
}
