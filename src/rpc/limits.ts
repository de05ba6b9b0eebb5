// Transport limits and their defaults. Defaults are geth's (node/defaults.go, rpc/websocket.go) so that
// clients tuned against geth behave the same here. 0 disables a batch limit, as in geth.

import type { ParamsShapeLimits } from './params-shape.js'

export interface TransportLimits extends ParamsShapeLimits {
  /** Largest accepted HTTP request body in bytes; larger bodies get HTTP 413. */
  httpBodyLimit: number
  /** Most calls in one batch; more gets one -32600 "batch too large" error. 0 = unlimited. */
  batchRequestLimit: number
  /** Bytes of answers a batch may produce; calls past it get -32003 "response too large". 0 = unlimited. */
  batchResponseMaxSize: number
  /** Largest accepted WebSocket message in bytes; uWS closes the socket on a larger one. */
  wsMessageLimit: number
  /** Bytes a WebSocket may have queued unsent before it is closed as a slow consumer. */
  wsSendBufferLimit: number
}

export const defaultTransportLimits: Readonly<TransportLimits> = Object.freeze({
  // geth --rpc.http-body-limit: 5 MiB holds any realistic call (a 128 KiB tx is the largest single input).
  httpBodyLimit: 5 * 1024 * 1024,
  // geth --rpc.batch-request-limit: bounds the work one HTTP request can queue.
  batchRequestLimit: 1000,
  // geth --rpc.batch-response-max-size: bounds the memory one batch answer can pin.
  batchResponseMaxSize: 25_000_000,
  // geth wsDefaultReadLimit: WS has no body limit flag, so it allows more than HTTP.
  wsMessageLimit: 32 * 1024 * 1024,
  // Above the largest answer (a full 25 MB batch) so that one answer never trips it; geth instead closes a
  // socket whose write blocks for 10 s. Dropping single messages would leave requests unanswered.
  wsSendBufferLimit: 64 * 1024 * 1024,
  // Far above any real call (geth caps topic alternatives at 1000, the deepest real params are state
  // overrides at 4 levels), low enough that no handler recurses or loops on a hostile shape.
  paramsMaxDepth: 64,
  paramsMaxItems: 10_000,
  // 16 Mi hex characters = 8 MiB of calldata; only WS messages (32 MiB) can carry more.
  paramsMaxStringLength: 16 * 1024 * 1024,
})
