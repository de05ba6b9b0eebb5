// WebSocket test helpers: a raw JSON-RPC client over `ws` that records every frame in arrival order, and
// an in-process Keel node (for tests that read the node's own connection and subscription counts).

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import WebSocket from 'ws'

const CALL_TIMEOUT_MS = 15_000

/** A JSON-RPC client over one WebSocket; `frames` holds every parsed message received, in order. */
export class RawWsClient {
  /** @param {string} url */
  static async connect(url, options = {}) {
    const socket = new WebSocket(url, options)
    const client = new RawWsClient(socket)
    await new Promise((resolve, reject) => {
      socket.once('open', resolve)
      socket.once('error', reject)
      socket.once('unexpected-response', (_req, res) => reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { statusCode: res.statusCode })))
    })
    return client
  }

  constructor(socket) {
    this.socket = socket
    this.frames = []
    this.nextId = 1
    this.waiters = new Map()
    this.watchers = new Set()
    this.closed = new Promise((resolve) => {
      socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() }))
    })
    socket.on('error', () => {})
    socket.on('message', (data) => {
      const message = JSON.parse(data.toString())
      this.frames.push(message)
      for (const item of Array.isArray(message) ? message : [message]) {
        if (item.id !== undefined && this.waiters.has(item.id)) {
          const waiter = this.waiters.get(item.id)
          this.waiters.delete(item.id)
          waiter(item)
        }
      }
      for (const watcher of this.watchers) watcher(message)
    })
  }

  /** Sends a raw text frame. */
  sendRaw(text) {
    this.socket.send(text)
  }

  /** The whole response object ({result} or {error}) of one call. */
  request(method, params = []) {
    const id = this.nextId++
    return this.requestWithId(id, method, params)
  }

  requestWithId(id, method, params) {
    const answer = new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(id)
        reject(new Error(`${method}: no answer within ${CALL_TIMEOUT_MS} ms`))
      }, CALL_TIMEOUT_MS)
      this.waiters.set(id, (item) => {
        clearTimeout(timer)
        resolve(item)
      })
    })
    this.socket.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }))
    return answer
  }

  /** The result of one call; throws with the error's code and message otherwise. */
  async call(method, params = []) {
    const answer = await this.request(method, params)
    if (answer.error !== undefined) throw Object.assign(new Error(answer.error.message), { code: answer.error.code })
    return answer.result
  }

  /** Notifications received so far for a subscription id, results only. */
  notifications(subscription) {
    return this.frames
      .filter((f) => f.method === 'eth_subscription' && f.params.subscription === subscription)
      .map((f) => f.params.result)
  }

  /** Resolves once `predicate(this)` holds (checked on every frame), or rejects after `ms`. */
  until(predicate, ms, what) {
    if (predicate(this)) return Promise.resolve()
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.watchers.delete(check)
        reject(new Error(`${what}: not reached within ${ms} ms`))
      }, ms)
      const check = () => {
        if (!predicate(this)) return
        clearTimeout(timer)
        this.watchers.delete(check)
        resolve()
      }
      this.watchers.add(check)
    })
  }

  close() {
    this.socket.close()
    return this.closed
  }
}

/**
 * Starts Keel inside this process (loopback, port 0, --dev, silent), for tests that need
 * `node.wsStats()`. `flags` are command-line flags without dashes: { 'block-time': '0' }.
 */
export async function startInProcessNode(flags = {}) {
  const { loadConfig } = await import('../../dist/config/load.js')
  const { startNode } = await import('../../dist/node.js')
  const dataDir = mkdtempSync(join(tmpdir(), 'keel-ws-'))
  const config = loadConfig({
    flags: { dev: true, 'data-dir': dataDir, host: '127.0.0.1', port: '0', 'metrics-port': '0', 'log-level': 'silent', ...flags },
    env: {},
  })
  const node = await startNode(config)
  return {
    url: node.url,
    wsUrl: node.url.replace(/^http/, 'ws'),
    wsStats: () => node.wsStats(),
    async close() {
      await node.close()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}
