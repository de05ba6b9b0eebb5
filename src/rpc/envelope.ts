// JSON-RPC 2.0 framing shared by HTTP and WS: parse, validate, run single calls and batches, serialise.
// Behaviour and wordings follow geth (rpc/json.go, rpc/handler.go); responses are built by string
// concatenation so a result is serialised exactly once (or spliced in verbatim when it is RawJson).

import type { RequestContext } from './context.js'
import { RawJson, resultAnswer } from './context.js'
import type { SplicedAnswer } from './context.js'
import type { Dispatcher } from './dispatch.js'
import { ErrorCode, RpcError, invalidParams, methodNotFound } from '../errors.js'
import type { TransportLimits } from './limits.js'
import { paramsShapeProblem } from './params-shape.js'
import type { ParamsShapeLimits } from './params-shape.js'
import { INVALID_CALL_COST } from './ratelimit.js'
import type { BatchAdmission, ClientRateLimiter, RateLimitSubject } from './ratelimit.js'

export interface EnvelopeHooks {
  /** A handler threw something that is not an RpcError (a bug). Default: print it to stderr. */
  onInternalError?(err: unknown, method: string): void
  /** After every executed call (notifications included); code 0 = success. For metrics. */
  onCall?(method: string, ctx: RequestContext, code: number, durationMs: number): void
  /** A message or batch item refused before any method ran (parse error, invalid request, bad params shape). For metrics. */
  onRejected?(ctx: RequestContext, code: number): void
  /** A batch of `size` items passed the batch checks. For metrics. */
  onBatch?(ctx: RequestContext, size: number): void
  /** Charges each call to its client (ctx.clientIp / ctx.apiKey); over the limit answers -32005. */
  rateLimiter?: ClientRateLimiter
}

/**
 * A context with this property (the HTTP exchange's) learns how long a rate-limited client must wait,
 * for the 429 status and Retry-After header.
 */
export interface RateLimitedContext extends RequestContext {
  retryAfterSeconds: number
}

/** A response item, or null for a notification (nothing to answer); spliced: around a big result of bytes. */
export type Answer = string | SplicedAnswer | null
type PendingAnswer = Answer | Promise<Answer>

const NULL_ID = 'null'
const EMPTY_PARAMS: readonly unknown[] = Object.freeze([])
const PARSE_ERROR = '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}'
const EMPTY_BATCH = '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"empty batch"}}'
const INTERNAL_ERROR_MESSAGE = 'internal error'

const defaultOnInternalError = (err: unknown, method: string): void => {
  console.error(`keel rpc: ${method} failed with an unexpected error:`, err)
}

export class Envelope {
  private readonly batchRequestLimit: number
  private readonly batchResponseMaxSize: number
  private readonly onInternalError: (err: unknown, method: string) => void
  private readonly onCall: EnvelopeHooks['onCall']
  private readonly onRejected: EnvelopeHooks['onRejected']
  private readonly onBatch: EnvelopeHooks['onBatch']
  private readonly rateLimiter: ClientRateLimiter | undefined
  private readonly shapeLimits: ParamsShapeLimits

  constructor(
    private readonly dispatcher: Dispatcher,
    limits: TransportLimits,
    hooks: EnvelopeHooks = {},
  ) {
    this.batchRequestLimit = limits.batchRequestLimit
    this.batchResponseMaxSize = limits.batchResponseMaxSize
    this.onInternalError = hooks.onInternalError ?? defaultOnInternalError
    this.onCall = hooks.onCall
    this.onRejected = hooks.onRejected
    this.onBatch = hooks.onBatch
    this.rateLimiter = hooks.rateLimiter?.active ? hooks.rateLimiter : undefined
    this.shapeLimits = limits
  }

  /** The serialised answer to `body`, or null when there is nothing to send (notifications only). */
  async handle(body: string, ctx: RequestContext): Promise<Answer> {
    let message: unknown
    try {
      message = JSON.parse(body)
    } catch {
      if (this.rateLimiter !== undefined) {
        let refused = this.overLimit(undefined, body, ctx)
        if (refused instanceof Promise) refused = await refused
        if (refused != null) return refused
      }
      this.onRejected?.(ctx, ErrorCode.ParseError)
      return PARSE_ERROR
    }
    if (Array.isArray(message)) {
      if (this.rateLimiter !== undefined) {
        if (this.batchIsValid(message)) {
          let admission = this.rateLimiter.takeEach(ctx as RequestContext & RateLimitSubject, message.map(this.costOfItem))
          if (admission instanceof Promise) admission = await admission
          if (admission.served === 0) return this.refusal(message, body, ctx, admission.retryAfter)
          if (admission.served < message.length) return this.handleBatch(message, body, ctx, admission)
        } else {
          let refused = this.overLimit(message, body, ctx)
          if (refused instanceof Promise) refused = await refused
          if (refused !== undefined) return refused
        }
      }
      return this.handleBatch(message, body, ctx)
    }
    if (this.rateLimiter !== undefined) {
      // no await when the limiter answers at once: most decisions never wait
      let refused = this.overLimit(message, body, ctx)
      if (refused instanceof Promise) refused = await refused
      if (refused !== undefined) return refused
    }
    return this.handleOne(message, body, -1, ctx)
  }

  private batchIsValid(items: unknown[]): boolean {
    return items.length > 0 && (this.batchRequestLimit === 0 || items.length <= this.batchRequestLimit)
  }

  private readonly costOfItem = (item: unknown): number => costOfItem(this.rateLimiter!, item)

  /**
   * Charges a single request (or a malformed message, or a batch refused before its calls are looked at)
   * to its client. Undefined when admitted; otherwise the answer: -32005 "limit exceeded", null for a
   * refused notification.
   */
  private overLimit(message: unknown, body: string, ctx: RequestContext): string | null | undefined | Promise<string | null | undefined> {
    const cost = Array.isArray(message) ? INVALID_CALL_COST : costOfItem(this.rateLimiter!, message)
    const retryAfter = this.rateLimiter!.take(ctx as RequestContext & RateLimitSubject, cost)
    if (retryAfter instanceof Promise) return retryAfter.then((wait) => (wait === 0 ? undefined : this.refusal(message, body, ctx, wait)))
    return retryAfter === 0 ? undefined : this.refusal(message, body, ctx, retryAfter)
  }

  /** -32005 for the request, or for each call of a batch (as geth answers every call of a refused batch). */
  private refusal(message: unknown, body: string, ctx: RequestContext, retryAfter: number): string | null {
    if ('retryAfterSeconds' in ctx) (ctx as RateLimitedContext).retryAfterSeconds = retryAfter
    const data = { retryAfter }
    if (!Array.isArray(message) || message.length === 0) {
      if (isNotificationItem(message)) return null
      return errorJson(idJsonOf(message, body, -1), ErrorCode.LimitExceeded, 'limit exceeded', data)
    }
    let out = '['
    for (let i = 0; i < message.length; i++) {
      if (isNotificationItem(message[i])) continue
      out += (out.length === 1 ? '' : ',') + errorJson(idJsonOf(message[i], body, i), ErrorCode.LimitExceeded, 'limit exceeded', data)
    }
    return out.length === 1 ? null : out + ']'
  }

  /** A batch; with `partly`, the calls from `partly.served` on are answered -32005 and never run. */
  private async handleBatch(items: unknown[], body: string, ctx: RequestContext, partly?: BatchAdmission): Promise<string | null> {
    const count = items.length
    if (count === 0) {
      this.onRejected?.(ctx, ErrorCode.InvalidRequest)
      return EMPTY_BATCH
    }
    if (this.batchRequestLimit > 0 && count > this.batchRequestLimit) {
      this.onRejected?.(ctx, ErrorCode.InvalidRequest)
      // geth answers an array holding one error, attached to the first call's id.
      return '[' + errorJson(firstCallIdJson(items, body), ErrorCode.InvalidRequest, 'batch too large') + ']'
    }
    this.onBatch?.(ctx, count)
    const pending = new Array<PendingAnswer>(count)
    const served = partly?.served ?? count
    let anyAsync = false
    for (let i = 0; i < served; i++) {
      const answer = this.handleOne(items[i], body, i, ctx)
      if (typeof answer === 'object' && answer !== null) anyAsync = true
      pending[i] = answer
    }
    if (partly !== undefined) {
      const data = { retryAfter: partly.retryAfter }
      for (let i = served; i < count; i++) {
        pending[i] = isNotificationItem(items[i]) ? null : errorJson(idJsonOf(items[i], body, i), ErrorCode.LimitExceeded, 'limit exceeded', data)
      }
    }
    const answers: Answer[] = anyAsync ? await Promise.all(pending) : (pending as Answer[])
    return this.joinBatch(items, body, answers)
  }

  /**
   * Joins answers in request order. As geth: once the answers written so far pass the size limit,
   * every remaining call is answered with -32003 instead (so each id still gets a response).
   */
  private joinBatch(items: unknown[], body: string, answers: Answer[]): string | null {
    const limit = this.batchResponseMaxSize
    let out = '['
    let size = 0
    let first = true
    for (let i = 0; i < answers.length; i++) {
      const item = answers[i]!
      if (item === null) continue
      // a batch's answer is one string
      let answer = typeof item === 'string' ? item : item.toString()
      if (limit > 0 && size > limit) {
        answer = errorJson(idJsonOf(items[i], body, i), ErrorCode.ResponseTooLarge, 'response too large')
      } else {
        size += answer.length
      }
      out += first ? answer : ',' + answer
      first = false
    }
    return first ? null : out + ']'
  }

  /** Validates and runs one request object. `index` is its batch position, -1 when not in a batch. */
  private handleOne(item: unknown, body: string, index: number, ctx: RequestContext): PendingAnswer {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      return this.invalidRequest(ctx, NULL_ID)
    }
    const request = item as Record<string, unknown>
    const id = request.id
    const isNotification = id === undefined
    let idJson = NULL_ID
    if (!isNotification) {
      if (!isValidId(id)) return this.invalidRequest(ctx, NULL_ID)
      idJson = idToJson(id, body, index)
    }
    const method = request.method
    if (request.jsonrpc !== '2.0' || typeof method !== 'string' || method === '') {
      return this.invalidRequest(ctx, idJson)
    }
    const rawParams = request.params
    let params: readonly unknown[]
    if (rawParams === undefined || rawParams === null) {
      params = EMPTY_PARAMS
    } else if (Array.isArray(rawParams)) {
      params = rawParams
    } else if (typeof rawParams === 'object') {
      // geth only supports positional arguments; an unknown method still reports "does not exist" first.
      const err = this.dispatcher.has(method) ? invalidParams('non-array args') : methodNotFound(method)
      this.onRejected?.(ctx, err.code)
      return isNotification ? null : errorJson(idJson, err.code, err.message)
    } else {
      return this.invalidRequest(ctx, idJson)
    }
    if (params.length > 0) {
      const problem = paramsShapeProblem(params, this.shapeLimits)
      if (problem !== undefined) {
        this.onRejected?.(ctx, ErrorCode.InvalidParams)
        return isNotification ? null : errorJson(idJson, ErrorCode.InvalidParams, problem)
      }
    }
    return this.execute(method, params, ctx, isNotification ? null : idJson)
  }

  private invalidRequest(ctx: RequestContext, idJson: string): string {
    this.onRejected?.(ctx, ErrorCode.InvalidRequest)
    return errorJson(idJson, ErrorCode.InvalidRequest, 'invalid request')
  }

  /** Runs a call; idJson null = notification (executed, not answered). */
  private execute(method: string, params: readonly unknown[], ctx: RequestContext, idJson: string | null): PendingAnswer {
    const startedAt = this.onCall === undefined ? 0 : performance.now()
    let result: unknown
    try {
      result = this.dispatcher.call(method, params, ctx)
    } catch (err) {
      return this.failure(method, ctx, idJson, err, startedAt)
    }
    if (result instanceof Promise) return this.settle(method, ctx, idJson, result, startedAt)
    return this.success(method, ctx, idJson, result, startedAt)
  }

  private async settle(
    method: string,
    ctx: RequestContext,
    idJson: string | null,
    promise: Promise<unknown>,
    startedAt: number,
  ): Promise<Answer> {
    let result: unknown
    try {
      result = await promise
    } catch (err) {
      return this.failure(method, ctx, idJson, err, startedAt)
    }
    return this.success(method, ctx, idJson, result, startedAt)
  }

  private success(method: string, ctx: RequestContext, idJson: string | null, result: unknown, startedAt: number): Answer {
    let resultJson: string | undefined
    if (idJson !== null && result !== undefined && !(result instanceof RawJson)) {
      try {
        resultJson = JSON.stringify(result)
      } catch (err) {
        // e.g. a bigint left in a result: a bug in the method, answered like geth's marshal errors.
        return this.failure(method, ctx, idJson, err, startedAt)
      }
    }
    if (this.onCall !== undefined) this.onCall(method, ctx, 0, performance.now() - startedAt)
    if (idJson === null) return null
    return result instanceof RawJson ? result.answerFor(idJson) : resultAnswer(idJson, resultJson ?? 'null')
  }

  private failure(method: string, ctx: RequestContext, idJson: string | null, err: unknown, startedAt: number): Answer {
    let answer: Answer = null
    let code: number
    if (err instanceof RpcError) {
      code = err.code
      if (idJson !== null) answer = errorJson(idJson, code, err.message, err.data)
    } else {
      code = ErrorCode.Internal
      this.onInternalError(err, method)
      if (idJson !== null) answer = errorJson(idJson, code, INTERNAL_ERROR_MESSAGE)
    }
    if (this.onCall !== undefined) this.onCall(method, ctx, code, performance.now() - startedAt)
    return answer
  }
}

const costOfItem = (limiter: ClientRateLimiter, item: unknown): number => {
  if (typeof item !== 'object' || item === null) return INVALID_CALL_COST
  const method = (item as Record<string, unknown>).method
  return typeof method === 'string' ? limiter.costOf(method) : INVALID_CALL_COST
}

/** A well-formed request without an id: nothing is ever answered to it. */
const isNotificationItem = (item: unknown): boolean =>
  typeof item === 'object' && item !== null && !Array.isArray(item) && (item as Record<string, unknown>).id === undefined &&
  typeof (item as Record<string, unknown>).method === 'string'

const isValidId = (id: unknown): id is string | number | null =>
  id === null || typeof id === 'string' || typeof id === 'number'

const errorJson = (idJson: string, code: number, message: string, data?: unknown): string => {
  let dataJson: string | undefined
  if (data !== undefined) {
    try {
      dataJson = JSON.stringify(data)
    } catch {
      dataJson = undefined
    }
  }
  return (
    '{"jsonrpc":"2.0","id":' +
    idJson +
    ',"error":{"code":' +
    code +
    ',"message":' +
    JSON.stringify(message) +
    (dataJson === undefined ? '}}' : ',"data":' + dataJson + '}}')
  )
}

/**
 * The id as JSON. Safe integers and strings re-serialise to what the client means; other numbers
 * (floats, integers beyond 2^53) lost their spelling in JSON.parse, so their text is recovered from the body.
 */
const idToJson = (id: string | number | null, body: string, index: number): string => {
  if (typeof id === 'number' && !Number.isSafeInteger(id)) return rawIdText(body, index) ?? JSON.stringify(id)
  return JSON.stringify(id)
}

/** The id JSON of a batch item for an error answer, or null when it has no valid id. */
const idJsonOf = (item: unknown, body: string, index: number): string => {
  if (typeof item !== 'object' || item === null) return NULL_ID
  const id = (item as Record<string, unknown>).id
  return isValidId(id) ? idToJson(id, body, index) : NULL_ID
}

/** geth's "first call": a request with a method and a valid id. */
const firstCallIdJson = (items: unknown[], body: string): string => {
  for (let i = 0; i < items.length; i++) {
    const item = items[i]
    if (typeof item !== 'object' || item === null || Array.isArray(item)) continue
    const request = item as Record<string, unknown>
    if (typeof request.method === 'string' && request.id !== undefined && isValidId(request.id)) {
      return idToJson(request.id, body, i)
    }
  }
  return NULL_ID
}

/**
 * Source text of the top-level "id" member of the request object: the body itself (index -1) or the
 * index-th element of the batch array. A small scanner over already-valid JSON; only used for rare ids.
 */
const rawIdText = (body: string, index: number): string | undefined => {
  const objectDepth = index < 0 ? 1 : 2
  let depth = 0
  let element = 0
  let expectKey = false
  for (let i = 0; i < body.length; i++) {
    const c = body.charCodeAt(i)
    if (c === 0x22 /* " */) {
      const start = i
      for (i++; i < body.length; i++) {
        const s = body.charCodeAt(i)
        if (s === 0x5c /* \ */) i++
        else if (s === 0x22) break
      }
      if (expectKey && depth === objectDepth && (index < 0 || element === index)) {
        if (body.slice(start, i + 1) === '"id"') {
          let j = i + 1
          while (j < body.length && body.charCodeAt(j) !== 0x3a /* : */) j++
          j++
          while (j < body.length && isJsonSpace(body.charCodeAt(j))) j++
          let end = j
          while (end < body.length && isNumberChar(body.charCodeAt(end))) end++
          return end > j ? body.slice(j, end) : undefined
        }
      }
      expectKey = false
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      depth++
      expectKey = c === 0x7b
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      depth--
      expectKey = false
    } else if (c === 0x2c /* , */) {
      if (depth === 1) element++
      expectKey = depth === objectDepth
    }
  }
  return undefined
}

const isJsonSpace = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09

const isNumberChar = (c: number): boolean =>
  (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b || c === 0x2e || c === 0x65 || c === 0x45
