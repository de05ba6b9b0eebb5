// HTTP and WebSocket JSON-RPC on one port, over the native uWebSockets.js. HTTP semantics follow geth's
// rpc/http.go (413, 415, 405, empty GET = liveness, permissive CORS); WS follows rpc/websocket.go.
// uWS aborts the process on an exception thrown inside its callbacks, so every callback catches.

import type { CidrSet } from './cidr.js'
import type { RequestContext, SplicedAnswer } from './context.js'
import { CorsPolicy } from './cors.js'
import { InFlight } from './drain.js'
import type { Answer, Envelope, RateLimitedContext } from './envelope.js'
import type { Health, HealthAnswer } from './health.js'
import type { TransportLimits } from './limits.js'
import type { ClosableApp, HttpRequest, HttpResponse, WebSocket, us_listen_socket, us_socket_context_t } from './uws.js'
import { uws } from './uws.js'
import { ConnectionQuota } from './ws-quota.js'
import { apiKeyOf } from './ratelimit.js'

/** One WebSocket connection, from open to close. Also the RequestContext of every call made on it. */
export interface WsSession {
  readonly id: number
  readonly clientIp: string
  readonly closed: boolean
  /**
   * Sends a text frame; false when the socket is closed or the frame could not be queued. A client whose
   * unsent data already passes the send buffer limit is closed as a slow consumer instead (1008).
   */
  send(text: string | SplicedAnswer): boolean
  /** Closes the connection as a slow consumer (close code 1008, counted). */
  closeTooSlow(): void
}

/** What a method handler receives when the call came over WebSocket (e.g. eth_subscribe). */
export interface WsRequestContext extends RequestContext {
  transport: 'ws'
  session: WsSession
  /**
   * Runs `task` once the answer to the message carrying this call has been queued on the socket (or was
   * not sent at all), so that nothing a call starts can reach the client before the call's answer does.
   */
  afterAnswer(task: () => void): void
}

/** Counters of the WebSocket transport, for metrics and tests. */
export interface WsTransportStats {
  open: number
  /** Connections closed because their unsent data passed the send buffer limit. */
  closedTooSlow: number
  /** Upgrades refused because the client address already had its connection quota. */
  refusedPerIp: number
  /** Upgrades refused because wsMaxConnections connections were open. */
  refusedFull: number
}

/** Counters of the HTTP transport, for metrics and tests. */
export interface HttpTransportStats {
  /** POST requests being read or answered */
  inFlight: number
  /** requests answered 503 at the httpMaxInFlight cap */
  refusedBusy: number
}

export const isWsContext = (ctx: RequestContext): ctx is WsRequestContext =>
  ctx.transport === 'ws' && (ctx as Partial<WsRequestContext>).session !== undefined

export interface RpcServerOptions {
  host: string
  port: number
  limits: TransportLimits
  onWsOpen?(session: WsSession): void
  onWsClose?(session: WsSession): void
  /** Open WebSocket connections allowed per client address; more are refused with HTTP 429. 0 = no limit. */
  wsMaxConnectionsPerIp?: number
  /**
   * Open WebSocket connections in all; more are refused with HTTP 503 at the upgrade, so that a flood of
   * connections from many addresses cannot exhaust memory. 0 = no limit.
   */
  wsMaxConnections?: number
  /** HTTP requests being read or answered at once, from all clients; more get HTTP 503. 0 = no limit. */
  httpMaxInFlight?: number
  /** A WebSocket that neither sends nor answers pings for this long is closed (default 120). */
  wsIdleTimeoutSeconds?: number
  /**
   * Maps the socket's peer address to the client address (e.g. from X-Forwarded-For behind a trusted
   * proxy). Runs synchronously in the request handler; `header` takes a lower-case name. Default: the peer.
   */
  resolveClientIp?(peerIp: string, header: (lowerCaseName: string) => string): string
  /**
   * Peers (L4 load balancers) whose PROXY protocol v2 header gives the client address. The uWS binary
   * parses a v2 header from any peer; it is believed only from these. Undefined = never believed.
   */
  proxyProtocolFrom?: CidrSet
  /** Serve HTTPS and WSS with this PEM certificate and key. */
  tls?: { certFile: string; keyFile: string }
  /** Comma-separated allowed browser origins, or * (default). */
  corsOrigins?: string
  /** Answers GET /health and GET /ready; without it both are 404. */
  health?: Health
  /** HTTP requests in progress per client address; more get 429 (0 = no limit). */
  maxConcurrentRequestsPerIp?: number
  /**
   * Whether HTTP calls need the client's address (a rate limit, debug request lines). false spares
   * reading it, ~1.3 µs a request in uWS, and leaves RequestContext.clientIp empty; a per-client request
   * quota (maxConcurrentRequestsPerIp) reads it anyway. Default true.
   */
  httpClientIp?: boolean
}

const ACCEPTED_CONTENT_TYPES = new Set(['application/json', 'application/json-rpc', 'application/jsonrequest'])
const CONTENT_TYPE_ERROR = 'invalid content type, only application/json is supported\n'
const TOO_MANY_CONCURRENT = '{"jsonrpc":"2.0","id":null,"error":{"code":-32005,"message":"too many concurrent requests from this address"}}'
const SERVER_BUSY = '{"jsonrpc":"2.0","id":null,"error":{"code":-32005,"message":"server busy: too many requests in progress, retry later"}}'
const decoder = new TextDecoder()

const textOf = (buffer: ArrayBuffer): string => decoder.decode(buffer)

/** Dotted IPv4 text by address as a uint32: clients come back, and uWS's text form costs ~1.5 µs a request. */
const ipv4Text = new Map<number, string>()

function peerIpOf(res: HttpResponse): string {
  const raw = new Uint8Array(res.getRemoteAddress())
  if (raw.length !== 4) return textOf(res.getRemoteAddressAsText())
  const key = ((raw[0] << 24) | (raw[1] << 16) | (raw[2] << 8) | raw[3]) >>> 0
  let text = ipv4Text.get(key)
  if (text === undefined) {
    text = `${raw[0]}.${raw[1]}.${raw[2]}.${raw[3]}`
    if (ipv4Text.size >= 65_536) ipv4Text.clear()
    ipv4Text.set(key, text)
  }
  return text
}

/**
 * uWS copies the own properties of the object given to upgrade() into its own userData object (the
 * prototype is lost), so the session travels inside a plain holder.
 */
interface SocketData {
  session: WsConnection
}

const TOO_SLOW_CODE = 1008
const TOO_SLOW_REASON = 'too slow: unsent data passed the send buffer limit'

class WsConnection implements WsSession {
  closed = false
  apiKey: string | undefined = undefined
  socket: WebSocket<SocketData> | null = null

  constructor(
    readonly id: number,
    readonly clientIp: string,
    private readonly sendBufferLimit: number,
    private readonly onTooSlow: () => void,
  ) {}

  closeTooSlow(): void {
    const socket = this.socket
    if (this.closed || socket === null) return
    this.closed = true
    this.onTooSlow()
    try {
      socket.end(TOO_SLOW_CODE, TOO_SLOW_REASON)
    } catch {
      // already closing
    }
  }

  send(text: string | SplicedAnswer): boolean {
    if (this.closed || this.socket === null) return false
    // Checked before queueing, so a client that does not read holds at most the limit plus one message.
    if (this.socket.getBufferedAmount() > this.sendBufferLimit) {
      this.closeTooSlow()
      return false
    }
    // Not wrapped in cork(): one message to a socket is one write either way (uWS corks inside its own
    // callbacks and around a lone send), and the extra JS -> C++ -> JS hop was ~10% of the newHeads
    // fan-out loop over 1,000 subscribers (measured in commit 047d2ae, bench/README.md there).
    try {
      if (typeof text === 'string') return this.socket.send(text, false) !== 2
      // a big result of bytes: one text message in three fragments, so that the bytes go as they are
      // (their booleans do not tell a dropped frame apart; nothing is dropped: maxBackpressure is 0)
      const socket = this.socket
      socket.cork(() => {
        socket.sendFirstFragment(text.head, false)
        socket.sendFragment(text.result)
        socket.sendLastFragment(CLOSE_BRACE)
      })
      return true
    } catch {
      return false
    }
  }
}

/** The context of one WS message: calls in it can defer work until its answer is on the socket. */
class WsMessageContext implements WsRequestContext {
  readonly transport = 'ws' as const
  readonly clientIp: string
  readonly apiKey: string | undefined
  private deferred: Array<() => void> | null = null

  constructor(readonly session: WsConnection) {
    this.clientIp = session.clientIp
    this.apiKey = session.apiKey
  }

  afterAnswer(task: () => void): void {
    ;(this.deferred ??= []).push(task)
  }

  /** Runs the deferred tasks; called once, after the answer was queued (or when there is none). */
  answered(): void {
    const tasks = this.deferred
    if (tasks === null) return
    this.deferred = null
    for (const task of tasks) {
      try {
        task()
      } catch (err) {
        logTransportError(err)
      }
    }
  }
}

/** One HTTP POST being read and answered. The response object is unusable once `aborted` is set. */
class HttpExchange {
  aborted = false
  private done = false
  private chunks: Buffer[] | null = null
  private size = 0

  private finished = false

  constructor(
    private readonly envelope: Envelope,
    private readonly res: HttpResponse,
    private readonly ctx: RateLimitedContext,
    private readonly bodyLimit: number,
    private readonly server: RpcServer,
    private readonly origin: string,
  ) {}

  readonly onAborted = (): void => {
    this.aborted = true
    this.finish()
  }

  /** Once per exchange: it no longer counts as in progress. */
  private finish(): void {
    if (this.finished) return
    this.finished = true
    this.server.exchangeFinished(this.ctx.clientIp)
  }

  private write(status: string, type: string, body: string | SplicedAnswer, close: boolean): void {
    corkOrigin = this.server.cors.allowOrigin(this.origin)
    corkVary = this.server.cors.variesByOrigin
    try {
      writeCorked(this.res, status, type, body, close || this.server.draining)
    } finally {
      corkOrigin = '*'
      corkVary = false
      this.finish()
    }
  }

  readonly onData = (chunk: ArrayBuffer, isLast: boolean): void => {
    try {
      if (this.done || this.aborted) return
      this.size += chunk.byteLength
      if (this.size > this.bodyLimit) {
        this.done = true
        this.chunks = null
        this.write('413 Request Entity Too Large', 'text/plain', 'request body too large\n', true)
        return
      }
      if (!isLast) {
        // uWS reuses the chunk's memory after this callback returns: keep a copy.
        ;(this.chunks ??= []).push(Buffer.from(chunk.slice(0)))
        return
      }
      this.done = true
      let body: string
      if (this.chunks === null) {
        body = textOf(chunk)
      } else {
        this.chunks.push(Buffer.from(chunk))
        body = Buffer.concat(this.chunks, this.size).toString('utf8')
        this.chunks = null
      }
      void this.answer(this.envelope.handle(body, this.ctx))
    } catch (err) {
      this.fail(err)
    }
  }

  private async answer(pending: Promise<Answer>): Promise<void> {
    let answer: Answer
    try {
      answer = await pending
    } catch (err) {
      this.fail(err)
      return
    }
    if (this.aborted) return
    try {
      const retryAfter = this.ctx.retryAfterSeconds
      if (retryAfter > 0) {
        corkRetryAfter = String(retryAfter)
        try {
          this.write('429 Too Many Requests', 'application/json', answer ?? '', false)
        } finally {
          corkRetryAfter = ''
        }
      } else {
        this.write('200 OK', 'application/json', answer ?? '', false)
      }
    } catch (err) {
      logTransportError(err)
      this.finish()
    }
  }

  private fail(err: unknown): void {
    logTransportError(err)
    this.done = true
    if (this.aborted) return
    try {
      this.write('500 Internal Server Error', 'text/plain', 'internal server error\n', true)
    } catch {
      // the connection is gone; nothing left to do
      this.finish()
    }
  }
}

// A response written from outside a uWS callback must be corked. cork() runs its callback synchronously,
// so the arguments travel in module variables instead of a fresh closure per response.
let corkRes: HttpResponse | null = null
let corkStatus = ''
let corkType = ''
let corkBody: string | SplicedAnswer = ''
let corkClose = false
let corkOrigin = '*'
let corkVary = false
let corkRetryAfter = ''

// uWS reads a JS string argument by converting it to UTF-8 (a length pass, an allocation, a copy) and
// bytes as they are: the header names and values every answer repeats are handed over as bytes.
const latin1Bytes = new Map<string, Buffer>()
const bytesOf = (text: string): Buffer | string => {
  const known = latin1Bytes.get(text)
  if (known !== undefined) return known
  // statuses and content types are a handful of constants; anything else goes as a string
  if (latin1Bytes.size >= 64) return text
  const bytes = Buffer.from(text, 'latin1')
  latin1Bytes.set(text, bytes)
  return bytes
}
const CONTENT_TYPE = Buffer.from('Content-Type')
const CLOSE_BRACE = Buffer.from('}')
const ALLOW_ORIGIN = Buffer.from('Access-Control-Allow-Origin')
const ANY_ORIGIN = Buffer.from('*')

const writeCorkedNow = (): void => {
  const res = corkRes!.writeStatus(bytesOf(corkStatus)).writeHeader(CONTENT_TYPE, bytesOf(corkType))
  // an origin echoed back (a configured allow list) comes from the client: it goes as a string, uncached
  if (corkOrigin !== '') res.writeHeader(ALLOW_ORIGIN, corkOrigin === '*' ? ANY_ORIGIN : corkOrigin)
  if (corkVary) res.writeHeader('Vary', 'Origin')
  if (corkRetryAfter !== '') res.writeHeader('Retry-After', corkRetryAfter)
  if (typeof corkBody === 'string') {
    res.end(corkBody, corkClose)
    return
  }
  // three chunks (chunked transfer encoding): the result's bytes are written as they are, not joined
  res.write(corkBody.head)
  res.write(corkBody.result)
  res.end(CLOSE_BRACE, corkClose)
}

const writeCorked = (res: HttpResponse, status: string, type: string, body: string | SplicedAnswer, close: boolean): void => {
  corkRes = res
  corkStatus = status
  corkType = type
  corkBody = body
  corkClose = close
  try {
    res.cork(writeCorkedNow)
  } finally {
    corkRes = null
    corkBody = ''
  }
}

const logTransportError = (err: unknown): void => {
  console.error('keel rpc: transport error:', err)
}

export class RpcServer {
  readonly envelope: Envelope
  private readonly app: ClosableApp
  private readonly options: RpcServerOptions
  private readonly sessions = new Set<WsConnection>()
  private readonly quota: ConnectionQuota
  private closedTooSlow = 0
  private refusedPerIp = 0
  private refusedFull = 0
  private httpInFlight = 0
  private refusedBusy = 0
  private readonly countTooSlow = (): void => {
    this.closedTooSlow++
  }
  private listenSocket: us_listen_socket | null = null
  private nextSessionId = 1
  /** Requests being answered (HTTP exchanges and WS messages): a graceful shutdown waits for them. */
  readonly inFlight = new InFlight()
  readonly cors: CorsPolicy
  private readonly httpQuota: ConnectionQuota
  /** the per-client request quota is on: every HTTP request counts against its client's address */
  private readonly httpQuotaOn: boolean
  private readonly httpClientIp: boolean
  private drainingNow = false

  constructor(envelope: Envelope, options: RpcServerOptions) {
    this.envelope = envelope
    this.options = options
    this.quota = new ConnectionQuota(options.wsMaxConnectionsPerIp ?? 0)
    this.httpQuota = new ConnectionQuota(options.maxConcurrentRequestsPerIp ?? 0)
    this.httpQuotaOn = (options.maxConcurrentRequestsPerIp ?? 0) > 0
    this.httpClientIp = this.httpQuotaOn || options.httpClientIp !== false
    this.cors = CorsPolicy.parse(options.corsOrigins)
    const tls = options.tls
    this.app = (tls === undefined ? uws.App() : uws.SSLApp({ cert_file_name: tls.certFile, key_file_name: tls.keyFile })) as ClosableApp
    this.app.ws<SocketData>('/*', {
      // uWS drops a larger frame without a close frame; up to twice the limit, onWsMessage closes with 1009.
      maxPayloadLength: options.limits.wsMessageLimit * 2,
      // 0 = uWS never drops a frame: WsConnection.send enforces wsSendBufferLimit itself and closes the
      // socket with a reason, where uWS would silently skip frames (a gap in a subscription).
      maxBackpressure: 0,
      closeOnBackpressureLimit: 0,
      idleTimeout: uwsIdleTimeout(options.wsIdleTimeoutSeconds ?? 120),
      sendPingsAutomatically: true,
      upgrade: this.onUpgrade,
      open: this.onWsOpen,
      message: this.onWsMessage,
      close: this.onWsClose,
    })
    this.app.any('/*', this.onHttp)
  }

  /** Starts listening; resolves to the bound port (useful with port 0). */
  listen(): Promise<number> {
    return new Promise((resolve, reject) => {
      const { host, port } = this.options
      this.app.listen(host, port, (listenSocket) => {
        if (listenSocket === false) {
          reject(new Error(`cannot listen on ${host}:${port}`))
          return
        }
        this.listenSocket = listenSocket
        resolve(uws.us_socket_local_port(listenSocket as never))
      })
    })
  }

  /** True from the start of a graceful shutdown: HTTP answers then carry Connection: close. */
  get draining(): boolean {
    return this.drainingNow
  }

  /**
   * Graceful shutdown, first half: stop accepting connections, then give requests in progress and open
   * WebSockets up to `graceMs` to finish (WebSockets get the whole grace only when any are open).
   * close() then ends what is left.
   */
  async drain(graceMs: number): Promise<void> {
    this.drainingNow = true
    if (this.listenSocket !== null) {
      uws.us_listen_socket_close(this.listenSocket)
      this.listenSocket = null
    }
    const deadline = Date.now() + graceMs
    await this.inFlight.idle(graceMs)
    while (this.sessions.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    // A WS message that arrived during the wait may still be answering.
    await this.inFlight.idle(Math.max(0, deadline - Date.now()))
  }

  /** @internal An HTTP exchange was answered or aborted. */
  exchangeFinished(clientIp: string): void {
    this.httpInFlight--
    if (this.httpQuotaOn) this.httpQuota.release(clientIp)
    this.inFlight.end()
  }

  /** Stops accepting, closes WebSockets with 1001 (going away), then drops every remaining connection. */
  async close(): Promise<void> {
    if (this.listenSocket !== null) {
      uws.us_listen_socket_close(this.listenSocket)
      this.listenSocket = null
    }
    for (const session of [...this.sessions]) {
      try {
        session.socket?.end(1001, 'server shutting down')
      } catch {
        // already closing
      }
    }
    this.app.close()
  }

  get openWebSockets(): number {
    return this.sessions.size
  }

  wsStats(): WsTransportStats {
    return { open: this.sessions.size, closedTooSlow: this.closedTooSlow, refusedPerIp: this.refusedPerIp, refusedFull: this.refusedFull }
  }

  httpStats(): HttpTransportStats {
    return { inFlight: this.httpInFlight, refusedBusy: this.refusedBusy }
  }

  private clientIpOf(res: HttpResponse, req: HttpRequest): string {
    let peer = peerIpOf(res)
    const l4Proxies = this.options.proxyProtocolFrom
    if (l4Proxies !== undefined && l4Proxies.has(peer)) {
      const proxied = textOf(res.getProxiedRemoteAddressAsText())
      if (proxied !== '') peer = proxied
    }
    const resolve = this.options.resolveClientIp
    return resolve === undefined ? peer : resolve(peer, (name) => req.getHeader(name))
  }

  private readonly onHttp = (res: HttpResponse, req: HttpRequest): void => {
    try {
      switch (req.getMethod()) {
        case 'post':
          this.onPost(res, req)
          return
        case 'get':
          if (this.options.health !== undefined && this.onHealth(res, req, this.options.health)) return
          // geth's liveness probe: a GET without body or query is answered 200 with nothing.
          // getQuery() returns undefined (not '') when there is no query string.
          if (!req.getQuery() && (req.getHeader('content-length') || '0') === '0') {
            res.writeStatus('200 OK').end()
          } else {
            res.writeStatus('405 Method Not Allowed').end('method not allowed\n')
          }
          return
        case 'options':
          this.onPreflight(res, req)
          return
        default:
          res.writeStatus('405 Method Not Allowed').writeHeader('Allow', 'POST, GET, OPTIONS').end('method not allowed\n')
      }
    } catch (err) {
      logTransportError(err)
      try {
        res.close()
      } catch {
        // already closed
      }
    }
  }

  /** GET /health and GET /ready (also /livez, /readyz); false for any other path. */
  private onHealth(res: HttpResponse, req: HttpRequest, health: Health): boolean {
    let answer: HealthAnswer
    switch (req.getUrl()) {
      case '/health':
      case '/livez':
        answer = health.liveness()
        break
      case '/ready':
      case '/readyz':
        answer = health.readiness(req.getQuery())
        break
      default:
        return false
    }
    res
      .writeStatus(answer.status)
      .writeHeader('Content-Type', 'application/json')
      .writeHeader('Cache-Control', 'no-store')
      .end(answer.body, this.drainingNow)
    return true
  }

  private onPost(res: HttpResponse, req: HttpRequest): void {
    const limit = this.options.limits.httpBodyLimit
    if (!isJsonContentType(req.getHeader('content-type'))) {
      res
        .writeStatus('415 Unsupported Media Type')
        .writeHeader('Content-Type', 'text/plain')
        .writeHeader('Access-Control-Allow-Origin', this.cors.allowOrigin(req.getHeader('origin')) || 'null')
        .end(CONTENT_TYPE_ERROR, true)
      return
    }
    const declared = req.getHeader('content-length')
    if (declared !== '' && Number(declared) > limit) {
      writeCorked(res, '413 Request Entity Too Large', 'text/plain', 'request body too large\n', true)
      return
    }
    const maxInFlight = this.options.httpMaxInFlight ?? 0
    if (maxInFlight > 0 && this.httpInFlight >= maxInFlight) {
      this.refusedBusy++
      res
        .writeStatus('503 Service Unavailable')
        .writeHeader('Content-Type', 'application/json')
        .writeHeader('Retry-After', '1')
        .end(SERVER_BUSY, true)
      return
    }
    const clientIp = this.httpClientIp ? this.clientIpOf(res, req) : ''
    if (this.httpQuotaOn && !this.httpQuota.admits(clientIp)) {
      res
        .writeStatus('429 Too Many Requests')
        .writeHeader('Content-Type', 'application/json')
        .writeHeader('Retry-After', '1')
        .end(TOO_MANY_CONCURRENT, true)
      return
    }
    const ctx: RateLimitedContext & { apiKey: string | undefined } = {
      transport: 'http',
      clientIp,
      apiKey: apiKeyOf(req.getUrl(), req.getHeader('x-api-key')),
      retryAfterSeconds: 0,
    }
    if (this.httpQuotaOn) this.httpQuota.acquire(clientIp)
    this.httpInFlight++
    this.inFlight.begin()
    const exchange = new HttpExchange(this.envelope, res, ctx, limit, this, req.getHeader('origin'))
    res.onAborted(exchange.onAborted)
    res.onData(exchange.onData)
  }

  private onPreflight(res: HttpResponse, req: HttpRequest): void {
    const requested = req.getHeader('access-control-request-headers')
    const origin = this.cors.allowOrigin(req.getHeader('origin'))
    res.writeStatus('204 No Content')
    if (origin !== '') res.writeHeader('Access-Control-Allow-Origin', origin)
    if (this.cors.variesByOrigin) res.writeHeader('Vary', 'Origin')
    res
      .writeHeader('Access-Control-Allow-Methods', 'POST, GET, OPTIONS')
      .writeHeader('Access-Control-Allow-Headers', requested === '' ? 'Content-Type' : requested)
      .writeHeader('Access-Control-Max-Age', '600')
      .endWithoutBody()
  }

  private readonly onUpgrade = (res: HttpResponse, req: HttpRequest, context: us_socket_context_t): void => {
    try {
      const maxConnections = this.options.wsMaxConnections ?? 0
      if (maxConnections > 0 && this.sessions.size >= maxConnections) {
        this.refusedFull++
        res
          .writeStatus('503 Service Unavailable')
          .writeHeader('Content-Type', 'text/plain')
          .writeHeader('Retry-After', '5')
          .end('too many WebSocket connections on this node\n', true)
        return
      }
      const clientIp = this.clientIpOf(res, req)
      if (!this.quota.admits(clientIp)) {
        this.refusedPerIp++
        res
          .writeStatus('429 Too Many Requests')
          .writeHeader('Content-Type', 'text/plain')
          .end('too many WebSocket connections from this address\n', true)
        return
      }
      const session = new WsConnection(this.nextSessionId++, clientIp, this.options.limits.wsSendBufferLimit, this.countTooSlow)
      session.apiKey = apiKeyOf(req.getUrl(), req.getHeader('x-api-key'))
      const data: SocketData = { session }
      res.upgrade(
        data,
        req.getHeader('sec-websocket-key'),
        req.getHeader('sec-websocket-protocol'),
        req.getHeader('sec-websocket-extensions'),
        context,
      )
    } catch (err) {
      logTransportError(err)
      try {
        res.close()
      } catch {
        // already closed
      }
    }
  }

  private readonly onWsOpen = (ws: WebSocket<SocketData>): void => {
    try {
      const session = ws.getUserData().session
      session.socket = ws
      this.sessions.add(session)
      this.quota.acquire(session.clientIp)
      this.options.onWsOpen?.(session)
    } catch (err) {
      logTransportError(err)
    }
  }

  private readonly onWsMessage = (ws: WebSocket<SocketData>, message: ArrayBuffer): void => {
    try {
      const session = ws.getUserData().session
      if (message.byteLength > this.options.limits.wsMessageLimit) {
        session.closed = true
        ws.end(1009, `message too big: the limit is ${this.options.limits.wsMessageLimit} bytes`)
        return
      }
      const ctx = new WsMessageContext(session)
      this.inFlight.begin()
      // Decoding copies the frame, which uWS frees when this callback returns. Binary frames are read as UTF-8 too.
      this.envelope.handle(textOf(message), ctx).then(
        (answer) => {
          this.inFlight.end()
          if (answer !== null) session.send(answer)
          ctx.answered()
        },
        (err: unknown) => {
          this.inFlight.end()
          logTransportError(err)
          ctx.answered()
        },
      )
    } catch (err) {
      logTransportError(err)
    }
  }

  private readonly onWsClose = (ws: WebSocket<SocketData>): void => {
    try {
      const session = ws.getUserData().session
      session.closed = true
      session.socket = null
      if (this.sessions.delete(session)) this.quota.release(session.clientIp)
      this.options.onWsClose?.(session)
    } catch (err) {
      logTransportError(err)
    }
  }
}

/** uWS counts idle time in 4-second steps, from 8 s up to 960 s. */
const uwsIdleTimeout = (seconds: number): number => Math.min(960, Math.max(8, Math.round(seconds / 4) * 4))

/** Like geth's mime.ParseMediaType check: parameters (charset=...) are allowed, case does not matter. */
const isJsonContentType = (header: string): boolean => {
  const semicolon = header.indexOf(';')
  const mediaType = (semicolon < 0 ? header : header.slice(0, semicolon)).trim().toLowerCase()
  return ACCEPTED_CONTENT_TYPES.has(mediaType)
}
