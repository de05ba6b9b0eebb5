// HTTP and WebSocket JSON-RPC on one port, over the native uWebSockets.js. HTTP semantics follow geth's
// rpc/http.go (413, 415, 405, empty GET = liveness, permissive CORS); WS follows rpc/websocket.go.
// uWS aborts the process on an exception thrown inside its callbacks, so every callback catches.

import type { RequestContext } from './context.js'
import type { Envelope } from './envelope.js'
import type { TransportLimits } from './limits.js'
import type { ClosableApp, HttpRequest, HttpResponse, WebSocket, us_listen_socket, us_socket_context_t } from './uws.js'
import { uws } from './uws.js'

/** One WebSocket connection, from open to close. Also the RequestContext of every call made on it. */
export interface WsSession {
  readonly id: number
  readonly clientIp: string
  readonly closed: boolean
  /** Sends a text frame; false when the socket is closed or the frame could not be queued. */
  send(text: string): boolean
}

/** What a method handler receives when the call came over WebSocket (e.g. eth_subscribe). */
export interface WsRequestContext extends RequestContext {
  transport: 'ws'
  session: WsSession
}

export const isWsContext = (ctx: RequestContext): ctx is WsRequestContext =>
  ctx.transport === 'ws' && (ctx as Partial<WsRequestContext>).session !== undefined

export interface RpcServerOptions {
  host: string
  port: number
  limits: TransportLimits
  onWsOpen?(session: WsSession): void
  onWsClose?(session: WsSession): void
  /**
   * Maps the socket's peer address to the client address (e.g. from X-Forwarded-For behind a trusted
   * proxy). Runs synchronously in the request handler; `header` takes a lower-case name. Default: the peer.
   */
  resolveClientIp?(peerIp: string, header: (lowerCaseName: string) => string): string
}

const ACCEPTED_CONTENT_TYPES = new Set(['application/json', 'application/json-rpc', 'application/jsonrequest'])
const CONTENT_TYPE_ERROR = 'invalid content type, only application/json is supported\n'
const decoder = new TextDecoder()

const textOf = (buffer: ArrayBuffer): string => decoder.decode(buffer)

/**
 * uWS copies the own properties of the object given to upgrade() into its own userData object (the
 * prototype is lost), so the session travels inside a plain holder.
 */
interface SocketData {
  session: WsConnection
}

class WsConnection implements WsSession, WsRequestContext {
  readonly transport = 'ws' as const
  closed = false
  socket: WebSocket<SocketData> | null = null
  private outgoing = ''
  private sendStatus = 0
  private readonly corkedSend = (): void => {
    this.sendStatus = this.socket!.send(this.outgoing, false)
  }

  constructor(
    readonly id: number,
    readonly clientIp: string,
  ) {}

  get session(): WsSession {
    return this
  }

  send(text: string): boolean {
    if (this.closed || this.socket === null) return false
    this.outgoing = text
    try {
      this.socket.cork(this.corkedSend)
    } catch {
      return false
    } finally {
      this.outgoing = ''
    }
    // 2 = dropped over the backpressure limit (closeOnBackpressureLimit then closes the socket).
    return this.sendStatus !== 2
  }
}

/** One HTTP POST being read and answered. The response object is unusable once `aborted` is set. */
class HttpExchange {
  aborted = false
  private done = false
  private chunks: Buffer[] | null = null
  private size = 0

  constructor(
    private readonly envelope: Envelope,
    private readonly res: HttpResponse,
    private readonly ctx: RequestContext,
    private readonly bodyLimit: number,
  ) {}

  readonly onAborted = (): void => {
    this.aborted = true
  }

  readonly onData = (chunk: ArrayBuffer, isLast: boolean): void => {
    try {
      if (this.done || this.aborted) return
      this.size += chunk.byteLength
      if (this.size > this.bodyLimit) {
        this.done = true
        this.chunks = null
        writeCorked(this.res, '413 Request Entity Too Large', 'text/plain', 'request body too large\n', true)
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

  private async answer(pending: Promise<string | null>): Promise<void> {
    let answer: string | null
    try {
      answer = await pending
    } catch (err) {
      this.fail(err)
      return
    }
    if (this.aborted) return
    try {
      writeCorked(this.res, '200 OK', 'application/json', answer ?? '', false)
    } catch (err) {
      logTransportError(err)
    }
  }

  private fail(err: unknown): void {
    logTransportError(err)
    this.done = true
    if (this.aborted) return
    try {
      writeCorked(this.res, '500 Internal Server Error', 'text/plain', 'internal server error\n', true)
    } catch {
      // the connection is gone; nothing left to do
    }
  }
}

// A response written from outside a uWS callback must be corked. cork() runs its callback synchronously,
// so the arguments travel in module variables instead of a fresh closure per response.
let corkRes: HttpResponse | null = null
let corkStatus = ''
let corkType = ''
let corkBody = ''
let corkClose = false

const writeCorkedNow = (): void => {
  corkRes!
    .writeStatus(corkStatus)
    .writeHeader('Content-Type', corkType)
    .writeHeader('Access-Control-Allow-Origin', '*')
    .end(corkBody, corkClose)
}

const writeCorked = (res: HttpResponse, status: string, type: string, body: string, close: boolean): void => {
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
  private listenSocket: us_listen_socket | null = null
  private nextSessionId = 1

  constructor(envelope: Envelope, options: RpcServerOptions) {
    this.envelope = envelope
    this.options = options
    this.app = uws.App() as ClosableApp
    this.app.ws<SocketData>('/*', {
      maxPayloadLength: options.limits.wsMessageLimit,
      maxBackpressure: options.limits.wsSendBufferLimit,
      closeOnBackpressureLimit: 1,
      idleTimeout: 120,
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

  private clientIpOf(res: HttpResponse, req: HttpRequest): string {
    const peer = textOf(res.getRemoteAddressAsText())
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

  private onPost(res: HttpResponse, req: HttpRequest): void {
    const limit = this.options.limits.httpBodyLimit
    if (!isJsonContentType(req.getHeader('content-type'))) {
      res
        .writeStatus('415 Unsupported Media Type')
        .writeHeader('Content-Type', 'text/plain')
        .writeHeader('Access-Control-Allow-Origin', '*')
        .end(CONTENT_TYPE_ERROR, true)
      return
    }
    const declared = req.getHeader('content-length')
    if (declared !== '' && Number(declared) > limit) {
      writeCorked(res, '413 Request Entity Too Large', 'text/plain', 'request body too large\n', true)
      return
    }
    const ctx: RequestContext = { transport: 'http', clientIp: this.clientIpOf(res, req) }
    const exchange = new HttpExchange(this.envelope, res, ctx, limit)
    res.onAborted(exchange.onAborted)
    res.onData(exchange.onData)
  }

  private onPreflight(res: HttpResponse, req: HttpRequest): void {
    const requested = req.getHeader('access-control-request-headers')
    res
      .writeStatus('204 No Content')
      .writeHeader('Access-Control-Allow-Origin', '*')
      .writeHeader('Access-Control-Allow-Methods', 'POST, GET, OPTIONS')
      .writeHeader('Access-Control-Allow-Headers', requested === '' ? 'Content-Type' : requested)
      .writeHeader('Access-Control-Max-Age', '600')
      .endWithoutBody()
  }

  private readonly onUpgrade = (res: HttpResponse, req: HttpRequest, context: us_socket_context_t): void => {
    try {
      const session = new WsConnection(this.nextSessionId++, this.clientIpOf(res, req))
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
      this.options.onWsOpen?.(session)
    } catch (err) {
      logTransportError(err)
    }
  }

  private readonly onWsMessage = (ws: WebSocket<SocketData>, message: ArrayBuffer): void => {
    try {
      const session = ws.getUserData().session
      // Decoding copies the frame, which uWS frees when this callback returns. Binary frames are read as UTF-8 too.
      this.envelope.handle(textOf(message), session).then(
        (answer) => {
          if (answer !== null) session.send(answer)
        },
        logTransportError,
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
      this.sessions.delete(session)
      this.options.onWsClose?.(session)
    } catch (err) {
      logTransportError(err)
    }
  }
}

/** Like geth's mime.ParseMediaType check: parameters (charset=...) are allowed, case does not matter. */
const isJsonContentType = (header: string): boolean => {
  const semicolon = header.indexOf(';')
  const mediaType = (semicolon < 0 ? header : header.slice(0, semicolon)).trim().toLowerCase()
  return ACCEPTED_CONTENT_TYPES.has(mediaType)
}
