// debug_trace*'s options decoded as geth decodes its TraceConfig: defaults, tracer names, callTracer's
// tracerConfig, Go durations for the timeout, and geth's words for what it refuses.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { goDurationMs, traceOptions } from '../../dist/rpc/trace-config.js'

const LIMITS = { maxTimeoutMs: 5_000, maxBytes: 25_000_000 }

function rejects(fn, message, code) {
  assert.throws(fn, (err) => {
    assert.equal(err.name, 'RpcError', `not an RpcError: ${err.stack}`)
    if (message instanceof RegExp) assert.match(err.message, message)
    else assert.equal(err.message, message)
    assert.equal(err.code, code)
    return true
  })
}

test("Go durations: time.ParseDuration's forms, in milliseconds", () => {
  const cases = {
    '5s': 5_000,
    '300ms': 300,
    '1m30s': 90_000,
    '1.5h': 5_400_000,
    '.5s': 500,
    '1.s': 1_000,
    '2500us': 2.5,
    '2500µs': 2.5,
    '1000000ns': 1,
    '0': 0,
    '-1s': -1_000,
    '+2s': 2_000,
  }
  for (const [text, ms] of Object.entries(cases)) assert.equal(goDurationMs(text), ms, text)
  rejects(() => goDurationMs(''), 'time: invalid duration ""', -32000)
  rejects(() => goDurationMs('.s'), 'time: invalid duration ".s"', -32000)
  rejects(() => goDurationMs('5'), 'time: missing unit in duration "5"', -32000)
  rejects(() => goDurationMs('5x'), 'time: unknown unit "x" in duration "5x"', -32000)
  rejects(() => goDurationMs('5 s'), 'time: unknown unit " s" in duration "5 s"', -32000)
})

test('defaults: the struct logger with stack and storage, 5 s, no limit', () => {
  const expected = {
    tracer: 'structLogger',
    timeoutMs: 5_000,
    maxBytes: 25_000_000,
    enableMemory: false,
    disableStack: false,
    disableStorage: false,
    enableReturnData: false,
    limit: 0,
    onlyTopCall: false,
    withLog: false,
    prestate: { diffMode: false, disableCode: false, disableStorage: false },
    mux: [],
  }
  assert.deepEqual(traceOptions(undefined, 1, 'TraceConfig', LIMITS), expected)
  assert.deepEqual(traceOptions(null, 1, 'TraceConfig', LIMITS), expected)
  assert.deepEqual(traceOptions({}, 1, 'TraceConfig', LIMITS), expected)
  assert.deepEqual(traceOptions({ tracer: '' }, 1, 'TraceConfig', LIMITS), expected)
  // the pool's limit caps the default
  assert.equal(traceOptions({}, 1, 'TraceConfig', { maxTimeoutMs: 1_000, maxBytes: 0 }).timeoutMs, 1_000)
})

test('keys in any case, the struct logger switches, the timeout capped by the pool', () => {
  const o = traceOptions({ EnableMemory: true, disablestack: true, DISABLESTORAGE: true, enableReturnData: true, limit: 7, timeout: '1m', unknownKey: 1 }, 1, 'TraceConfig', LIMITS)
  assert.equal(o.enableMemory, true)
  assert.equal(o.disableStack, true)
  assert.equal(o.disableStorage, true)
  assert.equal(o.enableReturnData, true)
  assert.equal(o.limit, 7)
  assert.equal(o.timeoutMs, 5_000)
  assert.equal(traceOptions({ timeout: '250ms' }, 1, 'TraceConfig', LIMITS).timeoutMs, 250)
  assert.equal(traceOptions({ timeout: '-1s' }, 1, 'TraceConfig', LIMITS).timeoutMs, 0)
})

test("native tracers, callTracer's tracerConfig (ignored for the others)", () => {
  assert.equal(traceOptions({ tracer: '4byteTracer' }, 1, 'TraceConfig', LIMITS).tracer, '4byteTracer')
  assert.equal(traceOptions({ tracer: 'noopTracer' }, 1, 'TraceConfig', LIMITS).tracer, 'noopTracer')
  const call = traceOptions({ tracer: 'callTracer', tracerConfig: { onlyTopCall: true, WithLog: true } }, 1, 'TraceConfig', LIMITS)
  assert.deepEqual([call.tracer, call.onlyTopCall, call.withLog], ['callTracer', true, true])
  assert.equal(traceOptions({ tracer: '4byteTracer', tracerConfig: { withLog: true } }, 1, 'TraceConfig', LIMITS).withLog, false)
  const prestate = traceOptions({ tracer: 'prestateTracer', disableStorage: true, tracerConfig: { DiffMode: true, disableCode: true } }, 1, 'TraceConfig', LIMITS)
  // the top-level disableStorage is the struct logger's; the prestate tracer has its own
  assert.deepEqual(prestate.prestate, { diffMode: true, disableCode: true, disableStorage: false })
  rejects(() => traceOptions({ tracer: 'prestateTracer', tracerConfig: { diffMode: 'yes' } }, 1, 'TraceConfig', LIMITS), 'json: cannot unmarshal string into Go struct field prestateTracerConfig.diffMode of type bool', -32000)
})

test("muxTracer: each tracer under its name, in the names' order, with its own tracerConfig", () => {
  const mux = traceOptions({ tracer: 'muxTracer', timeout: '2s', tracerConfig: { prestateTracer: { diffMode: true }, callTracer: { withLog: true }, '4byteTracer': null } }, 1, 'TraceConfig', LIMITS)
  assert.equal(mux.tracer, 'muxTracer')
  assert.deepEqual(mux.mux.map((m) => m.name), ['4byteTracer', 'callTracer', 'prestateTracer'])
  assert.deepEqual(mux.mux.map((m) => m.options.tracer), ['4byteTracer', 'callTracer', 'prestateTracer'])
  assert.equal(mux.mux[1].options.withLog, true)
  assert.equal(mux.mux[2].options.prestate.diffMode, true)
  assert.equal(mux.mux[0].options.withLog, false)
  for (const m of mux.mux) assert.equal(m.options.timeoutMs, 2_000)
  // nested, and a null config: no tracers
  const nested = traceOptions({ tracer: 'muxTracer', tracerConfig: { muxTracer: { noopTracer: {} } } }, 1, 'TraceConfig', LIMITS)
  assert.deepEqual(nested.mux[0].options.mux.map((m) => m.options.tracer), ['noopTracer'])
  assert.deepEqual(traceOptions({ tracer: 'muxTracer', tracerConfig: null }, 1, 'TraceConfig', LIMITS).mux, [])
  // mux.go unmarshals its config, which must be there
  rejects(() => traceOptions({ tracer: 'muxTracer' }, 1, 'TraceConfig', LIMITS), 'unexpected end of JSON input', -32000)
  rejects(() => traceOptions({ tracer: 'muxTracer', tracerConfig: [] }, 1, 'TraceConfig', LIMITS), 'json: cannot unmarshal array into Go value of type map[string]json.RawMessage', -32000)
  rejects(() => traceOptions({ tracer: 'muxTracer', tracerConfig: { flatCallTracer: {} } }, 1, 'TraceConfig', LIMITS), /^tracer "flatCallTracer" is not supported: /, -32000)
  rejects(() => traceOptions({ tracer: 'muxTracer', tracerConfig: { callTracer: { onlyTopCall: 'no' } } }, 1, 'TraceConfig', LIMITS), 'json: cannot unmarshal string into Go struct field callTracerConfig.onlyTopCall of type bool', -32000)
})

test("what is refused, in geth's words and codes", () => {
  rejects(() => traceOptions('x', 1, 'TraceConfig', LIMITS), 'invalid argument 1: json: cannot unmarshal string into Go value of type tracers.TraceConfig', -32602)
  rejects(() => traceOptions({ disableStack: 'yes' }, 1, 'TraceConfig', LIMITS), 'invalid argument 1: json: cannot unmarshal string into Go struct field TraceConfig.disableStack of type bool', -32602)
  rejects(() => traceOptions({ limit: 1.5 }, 2, 'TraceCallConfig', LIMITS), 'invalid argument 2: json: cannot unmarshal number into Go struct field TraceCallConfig.limit of type int', -32602)
  rejects(() => traceOptions({ tracer: 7 }, 1, 'TraceConfig', LIMITS), 'invalid argument 1: json: cannot unmarshal number into Go struct field TraceConfig.tracer of type string', -32602)
  rejects(() => traceOptions({ timeout: 5 }, 1, 'TraceConfig', LIMITS), 'invalid argument 1: json: cannot unmarshal number into Go struct field TraceConfig.timeout of type string', -32602)
  rejects(() => traceOptions({ timeout: '5' }, 1, 'TraceConfig', LIMITS), 'time: missing unit in duration "5"', -32000)
  rejects(() => traceOptions({ tracer: 'flatCallTracer' }, 1, 'TraceConfig', LIMITS), /^tracer "flatCallTracer" is not supported: /, -32000)
  rejects(() => traceOptions({ tracer: '{step: function() {}}' }, 1, 'TraceConfig', LIMITS), /JavaScript tracers are not supported/, -32000)
  rejects(() => traceOptions({ tracer: 'callTracer', tracerConfig: { onlyTopCall: 1 } }, 1, 'TraceConfig', LIMITS), 'json: cannot unmarshal number into Go struct field callTracerConfig.onlyTopCall of type bool', -32000)
  rejects(() => traceOptions({ tracer: 'callTracer', tracerConfig: [] }, 1, 'TraceConfig', LIMITS), 'json: cannot unmarshal array into Go value of type native.callTracerConfig', -32000)
  rejects(() => traceOptions({ overrides: { cancunTime: 0 } }, 1, 'TraceConfig', LIMITS), 'tracing with chain config overrides is not supported', -32000)
})
