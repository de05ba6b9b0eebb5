// How a call's result crosses back from a worker. The common answer, eth_call's return data, travels as
// its bare hex string: structured clone writes and reads a string without an object's property names
// and shape (posting and reading 8 results: ~10 -> ~4 µs). Everything else travels as the object.

import type { ExecResult } from './types.js'

export type WireResult = string | ExecResult

export function toWire(result: ExecResult): WireResult {
  return result.ok && result.kind === 'call' ? result.returnData : result
}

export function fromWire(wire: WireResult): ExecResult {
  return typeof wire === 'string' ? { ok: true, kind: 'call', returnData: wire } : wire
}
