// A lean HTTP/1.1 client for the transfer runs' load generator: kept-alive sockets, one request in flight
// on each, the request written as one string. node:http costs the load generator 49-66 µs of CPU a
// JSON-RPC round trip at 64 concurrent callers, this 22-25 (bench/macro/client-cost.js, docs/measurements.md,
// "Changes to the bench's method"), and the load generator shares the host's cores with the node under test. It reads what both nodes answer with: a status line, headers, and a body of a
// Content-Length or in chunks (large answers); anything else (no length, a malformed head or chunk, other
// transfer codings) fails the request.

import net from 'node:net'

const HEAD_END = Buffer.from('\r\n\r\n')
const MAX_HEAD = 16 * 1024

class Connection {
  constructor(client, socket) {
    this.client = client
    this.socket = socket
    this.chunks = []
    this.received = 0
    this.bodyAt = -1
    this.length = -1
    this.chunked = false
    this.status = 0
    this.keepAlive = true
    this.pending = undefined
    socket.setNoDelay(true)
    socket.on('data', (chunk) => this.onData(chunk))
    socket.on('error', (err) => this.close(err))
    socket.on('close', () => this.close(new Error('the server closed the connection')))
  }

  request(head, body) {
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject }
      this.socket.write(head + body)
    })
  }

  onData(chunk) {
    if (this.pending === undefined) return this.close(new Error('bytes arrived with no request in flight'))
    this.chunks.push(chunk)
    this.received += chunk.length
    const bytes = this.chunks.length === 1 ? chunk : Buffer.concat(this.chunks, this.received)
    if (this.bodyAt < 0) {
      const end = bytes.indexOf(HEAD_END)
      if (end < 0) {
        if (this.received > MAX_HEAD) this.close(new Error('response head too large'))
        return
      }
      const error = this.readHead(bytes.latin1Slice(0, end))
      if (error !== undefined) return this.close(new Error(error))
      this.bodyAt = end + HEAD_END.length
    }
    if (this.chunked) return this.onChunks(bytes)
    if (this.received < this.bodyAt + this.length) return this.keep(bytes)
    if (this.received > this.bodyAt + this.length) return this.close(new Error('bytes past the response body'))
    this.answered(bytes.subarray(this.bodyAt))
  }

  /** A chunked body: answered once the last (empty) chunk and the end of the trailers have arrived. */
  onChunks(bytes) {
    const parts = []
    let at = this.bodyAt
    for (;;) {
      const lineEnd = bytes.indexOf('\r\n', at)
      if (lineEnd < 0) return this.keep(bytes)
      const size = Number.parseInt(bytes.latin1Slice(at, lineEnd).split(';')[0], 16)
      if (!Number.isSafeInteger(size) || size < 0) return this.close(new Error('a malformed chunk size'))
      if (size === 0) {
        // the trailer section (none expected) ends with an empty line: CRLF CRLF from the size line's end
        const end = bytes.indexOf(HEAD_END, lineEnd)
        if (end < 0) return this.keep(bytes)
        if (bytes.length > end + HEAD_END.length) return this.close(new Error('bytes past the response body'))
        return this.answered(Buffer.concat(parts))
      }
      const dataAt = lineEnd + 2
      if (bytes.length < dataAt + size + 2) return this.keep(bytes)
      if (bytes[dataAt + size] !== 0x0d || bytes[dataAt + size + 1] !== 0x0a) return this.close(new Error('a chunk without its CRLF'))
      parts.push(bytes.subarray(dataAt, dataAt + size))
      at = dataAt + size + 2
    }
  }

  /** Keeps what has arrived of an answer as one buffer until more comes. */
  keep(bytes) {
    if (this.chunks.length > 1) this.chunks = [bytes]
  }

  answered(body) {
    const { resolve } = this.pending
    const answer = { status: this.status, bytes: body }
    this.pending = undefined
    this.chunks = []
    this.received = 0
    this.bodyAt = -1
    if (this.keepAlive) this.client.release(this)
    else this.close()
    resolve(answer)
  }

  /** Reads the status, the body's length and whether the connection stays open; returns an error's text. */
  readHead(head) {
    const lines = head.split('\r\n')
    const status = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0])
    if (status === null) return `not an HTTP/1.x status line: ${JSON.stringify(lines[0].slice(0, 80))}`
    this.status = Number(status[1])
    this.length = -1
    this.chunked = false
    this.keepAlive = lines[0].startsWith('HTTP/1.1')
    for (let i = 1; i < lines.length; i++) {
      const colon = lines[i].indexOf(':')
      const name = lines[i].slice(0, colon).toLowerCase()
      const value = lines[i].slice(colon + 1).trim()
      if (name === 'content-length') this.length = Number(value)
      else if (name === 'transfer-encoding') {
        if (value.toLowerCase() !== 'chunked') return `unsupported transfer-encoding: ${value}`
        this.chunked = true
      }
      else if (name === 'connection') this.keepAlive = value.toLowerCase() !== 'close'
    }
    if (!this.chunked && (!Number.isSafeInteger(this.length) || this.length < 0)) return 'a response without a valid content-length'
    return undefined
  }

  close(err) {
    this.client.forget(this)
    this.socket.destroy()
    const pending = this.pending
    this.pending = undefined
    if (pending !== undefined) pending.reject(err ?? new Error('connection closed'))
  }
}

/** Kept-alive connections to one host and port; a request takes an idle one or opens another. */
export class LeanHttpClient {
  constructor(url) {
    const u = new URL(url)
    if (u.protocol !== 'http:') throw new Error(`LeanHttpClient speaks plain HTTP only, not ${u.protocol}`)
    this.host = u.hostname
    this.port = Number(u.port || 80)
    this.path = `${u.pathname}${u.search}`
    this.idle = []
    this.open = new Set()
  }

  /** POSTs a JSON body; resolves to the answer's status and bytes. */
  async post(body) {
    const head = `POST ${this.path} HTTP/1.1\r\nHost: ${this.host}:${this.port}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`
    const conn = this.idle.pop() ?? (await this.connect())
    conn.socket.ref()
    return conn.request(head, body)
  }

  connect() {
    return new Promise((resolve, reject) => {
      const socket = net.connect(this.port, this.host)
      socket.once('connect', () => {
        socket.off('error', reject)
        const conn = new Connection(this, socket)
        this.open.add(conn)
        resolve(conn)
      })
      socket.once('error', reject)
    })
  }

  release(conn) {
    // an idle connection does not keep the process alive (as node:http's Agent)
    conn.socket.unref()
    this.idle.push(conn)
  }

  forget(conn) {
    this.open.delete(conn)
    const i = this.idle.indexOf(conn)
    if (i >= 0) this.idle.splice(i, 1)
  }

  /** Closes every connection; requests in flight fail. */
  close() {
    for (const conn of [...this.open]) conn.close()
  }
}
