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
  /** the JSON; once a big answer was framed, that whole answer, with the JSON from `jsonStart` */
  private text: string
  private jsonStart = 0
  private framedFor: string | undefined

  constructor(json: string) {
    this.text = json
  }

  get json(): string {
    return this.framedFor === undefined ? this.text : this.text.slice(this.jsonStart, -1)
  }

  /**
   * The whole response to request id `idJson`. A big answer (eth_getLogs over a long range, cached) is
   * kept framed for the last id it was asked with: the same request again is written without building
   * and flattening a multi-megabyte string (measured: CPU per whole-chain eth_getLogs 2.5 -> 0.9 ms).
   */
  answerFor(idJson: string): string {
    if (idJson === this.framedFor) return this.text
    const json = this.json
    const answer = resultAnswer(idJson, json)
    if (json.length >= KEEP_FRAMED_FROM) {
      this.text = answer
      this.jsonStart = answer.length - 1 - json.length
      this.framedFor = idJson
    }
    return answer
  }
}

const KEEP_FRAMED_FROM = 64 << 10

/** A JSON-RPC success response around an already serialised result. */
export function resultAnswer(idJson: string, resultJson: string): string {
  return '{"jsonrpc":"2.0","id":' + idJson + ',"result":' + resultJson + '}'
}

export type MethodResult = unknown
export type MethodHandler = (params: readonly unknown[], ctx: RequestContext) => MethodResult | Promise<MethodResult>
