// What a method handler knows about the request it serves.

export type Transport = 'http' | 'ws'

export interface RequestContext {
  transport: Transport
  /**
   * The resolved client address (after trusted-proxy handling); '' over HTTP when nothing the node runs
   * uses it (no rate limit, no per-client quota, no debug request lines: RpcServerOptions.httpClientIp).
   */
  clientIp: string
  /** The API key the request presented (URL path /key/NAME or the X-Api-Key header), if any. */
  apiKey?: string | undefined
}

/**
 * A JSON fragment that is already serialised: the envelope splices it into the response as is.
 * Used for immutable objects (old blocks, receipts) cached in their encoded form.
 */
export class RawJson {
  /** the JSON; once a big text answer was framed, that whole answer, with the JSON from `jsonStart` */
  private text: string | Buffer
  private jsonStart = 0
  private framedFor: string | undefined

  /**
   * `json` as text, or as ASCII bytes (eth_getLogs answers, assembled from the blocks' encoded logs). A
   * big answer of bytes is written around the bytes (SplicedAnswer), never joined with its frame.
   */
  constructor(json: string | Buffer) {
    this.text = json
  }

  get json(): string {
    const text = this.text
    if (typeof text !== 'string') return text.toString('latin1')
    return this.framedFor === undefined ? text : text.slice(this.jsonStart, -1)
  }

  /** The JSON as bytes, without a copy: only for a RawJson made from bytes. */
  get jsonBytes(): Buffer | undefined {
    return typeof this.text === 'string' ? undefined : this.text
  }

  /** The JSON's length, in characters or bytes (the same for ASCII). */
  get jsonLength(): number {
    return this.framedFor === undefined ? this.text.length : this.text.length - 1 - this.jsonStart
  }

  /**
   * The whole response to request id `idJson`. A big text answer (a cached block of thousands of
   * transactions) is kept framed for the last id it was asked with: the same request again is written
   * without building and flattening a multi-megabyte string (measured: CPU per whole-chain eth_getLogs
   * 2.5 -> 0.9 ms, when those answers were text).
   */
  answerFor(idJson: string): string | SplicedAnswer {
    const text = this.text
    if (typeof text !== 'string') {
      // a small one as text: a batch or a log line takes it as it is
      return text.length < KEEP_FRAMED_FROM ? resultAnswer(idJson, text.toString('latin1')) : new SplicedAnswer(resultHead(idJson), text)
    }
    if (idJson === this.framedFor) return text
    const json = this.framedFor === undefined ? text : text.slice(this.jsonStart, -1)
    const answer = resultAnswer(idJson, json)
    if (json.length >= KEEP_FRAMED_FROM) {
      this.text = answer
      this.jsonStart = answer.length - 1 - json.length
      this.framedFor = idJson
    }
    return answer
  }
}

/**
 * A JSON-RPC success response around a result of ASCII bytes: `head`, the result, then `}`. The
 * transports write the three parts in turn (HTTP chunks, WebSocket fragments): the result's bytes go to
 * the socket as they are, where a string would be converted to UTF-8 at every write and a joined copy
 * would be a multi-megabyte allocation per answer (measured for 2 MB: a string 0.95 ms in uWS, 1.7 ms
 * when it is a rope, bytes 0.30 ms; each fresh 2 MB buffer adds garbage-collection work).
 */
export class SplicedAnswer {
  constructor(
    readonly head: string,
    readonly result: Uint8Array,
  ) {}

  /** Its size in bytes (the head is ASCII unless the request's id is not). */
  get length(): number {
    return Buffer.byteLength(this.head) + this.result.length + 1
  }

  /** The whole response as one string (an answer in a batch). */
  toString(): string {
    return this.head + Buffer.from(this.result.buffer, this.result.byteOffset, this.result.length).toString('latin1') + '}'
  }
}

const KEEP_FRAMED_FROM = 64 << 10

/** A JSON-RPC success response around an already serialised result. */
export function resultAnswer(idJson: string, resultJson: string): string {
  return '{"jsonrpc":"2.0","id":' + idJson + ',"result":' + resultJson + '}'
}

/** What a success response holds before its result. */
const resultHead = (idJson: string): string => '{"jsonrpc":"2.0","id":' + idJson + ',"result":'

export type MethodResult = unknown
export type MethodHandler = (params: readonly unknown[], ctx: RequestContext) => MethodResult | Promise<MethodResult>
