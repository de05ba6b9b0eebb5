// A real HAProxy (Debian's `haproxy`, installed by .ci/run) in front of Keel nodes on loopback: one
// frontend on a free port, the nodes as one backend checked on /ready, WebSocket tunnels kept open, and
// a request retried on another node when its node drops the connection.

import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../../bench/lib/free-port.js'
import { sleep } from './rpc.js'

/**
 * @param {Array<{port: number}>} nodes
 * @returns {Promise<{url: string, wsUrl: string, stop(): Promise<void>, log(): string}>}
 */
export async function startHaproxy(nodes) {
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'keel-haproxy-'))
  const cfg = join(dir, 'haproxy.cfg')
  writeFileSync(
    cfg,
    `global
    maxconn 4096
defaults
    mode http
    timeout connect 2s
    timeout client 60s
    timeout server 60s
    timeout tunnel 1h
    option redispatch
    retries 3
    retry-on conn-failure empty-response
frontend rpc
    bind 127.0.0.1:${port}
    option http-buffer-request
    default_backend keel
backend keel
    balance roundrobin
    option httpchk
    # uWebSockets.js answers HTTP/1.1 only: the check goes as HTTP/1.1 with a Host header
    http-check send meth GET uri /ready ver HTTP/1.1 hdr Host keel
    http-check expect status 200
${nodes.map((n, i) => `    server keel${i} 127.0.0.1:${n.port} check inter 300ms fall 2 rise 2`).join('\n')}
`,
  )
  let log = ''
  const proc = spawn('haproxy', ['-f', cfg, '-db'], { stdio: ['ignore', 'pipe', 'pipe'] })
  proc.stdout.on('data', (c) => (log = (log + c).slice(-8000)))
  proc.stderr.on('data', (c) => (log = (log + c).slice(-8000)))
  const spawned = new Promise((resolve, reject) => {
    proc.once('spawn', resolve)
    proc.once('error', (err) => reject(new Error(`could not start haproxy (.ci/run installs it): ${err.message}`)))
  })
  await spawned
  const url = `http://127.0.0.1:${port}`
  // ready once a request gets through to a node
  const deadline = Date.now() + 10_000
  for (;;) {
    const ok = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}' })
      .then((r) => r.status === 200)
      .catch(() => false)
    if (ok) break
    if (Date.now() > deadline || proc.exitCode !== null) throw new Error(`haproxy did not pass requests within 10 s:\n${log}`)
    await sleep(100)
  }
  return {
    url,
    wsUrl: `ws://127.0.0.1:${port}`,
    log: () => log,
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) {
        const exited = new Promise((resolve) => proc.once('exit', resolve))
        proc.kill('SIGTERM')
        await exited
      }
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
