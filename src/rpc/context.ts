// What a method handler knows about the request it serves.

export type Transport = 'http' | 'ws'

export interface RequestContext {
  transport: Transport
  /** The resolved client address (after trusted-proxy handling). */
  clientIp: string
}

/**
 * A JSON fragment that is already serialised: the envelope splices it into the response as is.
 * Used for immutable objects (old blocks, receipts) cached in their encoded form.
 */
export class RawJson {
  /** the JSON; once a big answer was framed, that whole answer (the JSON sits inside it) */
  private text: string
  private framedFor: string | undefined

  constructor(json: string) {
    this.text = json
  }

  get json(): string {
    return this.framedFor === undefined ? this.text : this.text.slice(this.text.length - 1 - this.jsonLength, -1)
  }

  private get jsonLength(): number {
    return this.text.length - (FRAME_PREFIX.length + this.framedFor!.length + FRAME_MIDDLE.length + 1)
  }

  /**
   * The whole response to request id `idJson`. A big answer (eth_getLogs over a long range, cached) is
   * kept framed for the last id it was asked with: the same request again is written without building
   * and flattening a multi-megabyte string (measured: CPU per whole-chain eth_getLogs 2.5 -> 0.9 ms).
   */
  answerFor(idJson: string): string {
    if (idJson === this.framedFor) return this.text
    const json = this.json
    const answer = FRAME_PREFIX + idJson + FRAME_MIDDLE + json + '}'
    if (json.length >= KEEP_FRAMED_FROM) {
      this.text = answer
      this.framedFor = idJson
    }
    return answer
  }
}

const FRAME_PREFIX = '{"jsonrpc":"2.0","id":'
const FRAME_MIDDLE = ',"result":'
const KEEP_FRAMED_FROM = 64 << 10

export type MethodResult = unknown
export type MethodHandler = (params: readonly unknown[], ctx: RequestContext) => MethodResult | Promise<MethodResult>
