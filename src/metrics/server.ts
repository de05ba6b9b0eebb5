// The metrics listener: GET /metrics in the Prometheus text format, on its own host and port (default
// 127.0.0.1:9545) so that nothing of it is reachable through the public RPC port.

import { createServer } from 'node:http'
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Logger } from '../logging/logger.js'
import type { MetricsRegistry } from './registry.js'

export class MetricsServer {
  private constructor(
    private readonly server: Server,
    readonly port: number,
    readonly url: string,
  ) {}

  static start(register: MetricsRegistry, host: string, port: number, logger: Logger): Promise<MetricsServer> {
    const server = createServer((req, res) => void answer(register, req, res, logger))
    server.keepAliveTimeout = 65_000
    server.headersTimeout = 10_000
    server.requestTimeout = 30_000
    return new Promise((resolve, reject) => {
      server.once('error', reject)
      server.listen(port, host, () => {
        server.off('error', reject)
        server.on('error', (err) => logger.error('metrics listener failed', { err }))
        const bound = (server.address() as AddressInfo).port
        const shownHost = host.includes(':') ? `[${host}]` : host
        resolve(new MetricsServer(server, bound, `http://${shownHost}:${bound}/metrics`))
      })
    })
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve())
      this.server.closeAllConnections()
    })
  }
}

async function answer(register: MetricsRegistry, req: IncomingMessage, res: ServerResponse, logger: Logger): Promise<void> {
  const path = (req.url ?? '/').split('?', 1)[0]
  if (path !== '/metrics') {
    res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found; metrics are at /metrics\n')
    return
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { 'Content-Type': 'text/plain', Allow: 'GET, HEAD' }).end('method not allowed\n')
    return
  }
  try {
    const text = await register.text()
    res.writeHead(200, { 'Content-Type': register.contentType(), 'Cache-Control': 'no-store' })
    res.end(req.method === 'HEAD' ? undefined : text)
  } catch (err) {
    logger.error('metrics scrape failed', { err })
    if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain' })
    res.end('metrics collection failed\n')
  }
}
