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
  constructor(readonly json: string) {}
}

export type MethodResult = unknown
export type MethodHandler = (params: readonly unknown[], ctx: RequestContext) => MethodResult | Promise<MethodResult>
