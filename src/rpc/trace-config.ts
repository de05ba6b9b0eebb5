// debug_trace*'s options (geth's TraceConfig and TraceCallConfig): which tracer reports the execution,
// the struct logger's switches, callTracer's tracerConfig, and the timeout. Decoded as geth's
// encoding/json decodes them (keys in any case, unknown keys ignored, null as absent), with its words.

import type { TraceOptions, TracerName } from '../exec/types.js'
import { invalidParams, serverError } from '../errors.js'
import { fieldsOf, fieldTypeError, goFields, isAbsent, isObject, jsonKind } from './params.js'

/** geth's defaultTraceTimeout. */
const DEFAULT_TIMEOUT_MS = 5_000

const NATIVE_TRACERS: ReadonlySet<string> = new Set(['callTracer', 'prestateTracer', '4byteTracer', 'noopTracer', 'muxTracer'])

const TRACE_FIELDS = fieldsOf('tracer', 'timeout', 'reexec', 'tracerConfig', 'enableMemory', 'disableStack', 'disableStorage', 'enableReturnData', 'debug', 'limit', 'overrides')
/** each native tracer's tracerConfig: its fields (all bool) and geth's Go type name */
const TRACER_CONFIGS: Record<string, { type: string; fields: readonly string[] }> = {
  callTracer: { type: 'callTracerConfig', fields: ['onlyTopCall', 'withLog'] },
  prestateTracer: { type: 'prestateTracerConfig', fields: ['diffMode', 'disableCode', 'disableStorage'] },
}

/** The options of argument `arg` (absent or null: the struct logger with geth's defaults). */
export function traceOptions(v: unknown, arg: number, struct: 'TraceConfig' | 'TraceCallConfig', limits: { maxTimeoutMs: number; maxBytes: number }): TraceOptions {
  const maxTimeoutMs = limits.maxTimeoutMs
  const options: TraceOptions = {
    tracer: 'structLogger',
    timeoutMs: Math.min(DEFAULT_TIMEOUT_MS, maxTimeoutMs),
    maxBytes: limits.maxBytes,
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
  if (isAbsent(v)) return options
  if (!isObject(v)) throw invalidParams(`invalid argument ${arg}: json: cannot unmarshal ${jsonKind(v)} into Go value of type tracers.${struct}`)
  const f = goFields(v, TRACE_FIELDS)
  const flag = (name: string): boolean => {
    const value = f[name]
    if (isAbsent(value)) return false
    if (typeof value !== 'boolean') throw fieldTypeError(arg, `${struct}.${name}`, value, 'bool')
    return value
  }
  options.enableMemory = flag('enableMemory')
  options.disableStack = flag('disableStack')
  options.disableStorage = flag('disableStorage')
  options.enableReturnData = flag('enableReturnData')
  flag('debug')
  if (!isAbsent(f.limit)) {
    if (typeof f.limit !== 'number' || !Number.isInteger(f.limit)) throw fieldTypeError(arg, `${struct}.limit`, f.limit, 'int')
    options.limit = f.limit > 0 ? f.limit : 0
  }
  if (!isAbsent(f.reexec) && (typeof f.reexec !== 'number' || !Number.isInteger(f.reexec) || f.reexec < 0)) {
    throw fieldTypeError(arg, `${struct}.reexec`, f.reexec, 'uint64')
  }
  if (!isAbsent(f.overrides)) throw serverError('tracing with chain config overrides is not supported')
  if (!isAbsent(f.tracer)) {
    if (typeof f.tracer !== 'string') throw fieldTypeError(arg, `${struct}.tracer`, f.tracer, 'string')
    options.tracer = tracerNamed(f.tracer)
  }
  if (!isAbsent(f.timeout)) {
    if (typeof f.timeout !== 'string') throw fieldTypeError(arg, `${struct}.timeout`, f.timeout, 'string')
    const ms = goDurationMs(f.timeout)
    options.timeoutMs = Math.max(0, Math.min(ms, maxTimeoutMs))
  }
  applyTracerConfig(options, f.tracerConfig)
  return options
}

/** A native tracer's tracerConfig onto `options` (whose tracer is chosen), as geth's tracer constructors read it. */
function applyTracerConfig(options: TraceOptions, config: unknown): void {
  if (options.tracer === 'muxTracer') {
    // native/mux.go: a map of tracer name to that tracer's config, which must be there
    if (config === undefined) throw serverError('unexpected end of JSON input')
    if (config === null) return
    if (!isObject(config)) throw serverError(`json: cannot unmarshal ${jsonKind(config)} into Go value of type map[string]json.RawMessage`)
    options.mux = Object.keys(config)
      .sort()
      .map((name) => {
        const sub: TraceOptions = { ...options, tracer: tracerNamed(name), mux: [] }
        if (sub.tracer === 'structLogger') throw serverError(`tracer ${JSON.stringify(name)} not found`)
        applyTracerConfig(sub, config[name])
        return { name, options: sub }
      })
    return
  }
  const tracerConfig = TRACER_CONFIGS[options.tracer]
  if (tracerConfig === undefined || isAbsent(config)) return
  if (!isObject(config)) throw serverError(`json: cannot unmarshal ${jsonKind(config)} into Go value of type native.${tracerConfig.type}`)
  const c = goFields(config, fieldsOf(...tracerConfig.fields))
  const flags: Record<string, boolean> = {}
  for (const name of tracerConfig.fields) {
    const value = c[name]
    if (isAbsent(value)) continue
    if (typeof value !== 'boolean') throw serverError(`json: cannot unmarshal ${jsonKind(value)} into Go struct field ${tracerConfig.type}.${name} of type bool`)
    flags[name] = value
  }
  if (options.tracer === 'callTracer') {
    options.onlyTopCall = flags.onlyTopCall ?? false
    options.withLog = flags.withLog ?? false
  } else {
    options.prestate = { diffMode: flags.diffMode ?? false, disableCode: flags.disableCode ?? false, disableStorage: flags.disableStorage ?? false }
  }
}

function tracerNamed(name: string): TracerName {
  if (name === '') return 'structLogger'
  if (NATIVE_TRACERS.has(name)) return name as TracerName
  throw serverError(`tracer ${JSON.stringify(name)} is not supported: Keel runs callTracer, prestateTracer, 4byteTracer, noopTracer, muxTracer and, with no tracer named, the struct logger (JavaScript tracers are not supported)`)
}

const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, 'μs': 1e-3, ms: 1, s: 1_000, m: 60_000, h: 3_600_000 }

/** Go's time.ParseDuration, in milliseconds; its error text for what it refuses. */
export function goDurationMs(text: string): number {
  const invalid = () => serverError(`time: invalid duration ${JSON.stringify(text)}`)
  let s = text
  let sign = 1
  if (s.startsWith('-') || s.startsWith('+')) {
    if (s[0] === '-') sign = -1
    s = s.slice(1)
  }
  if (s === '0') return 0
  if (s === '') throw invalid()
  let total = 0
  while (s !== '') {
    const m = /^(\d*)(?:\.(\d*))?/.exec(s)!
    if (m[0] === '' || m[0] === '.' || (m[1] === '' && (m[2] ?? '') === '')) throw invalid()
    s = s.slice(m[0].length)
    const unit = /^[^\d.]+/.exec(s)?.[0]
    if (unit === undefined) throw serverError(`time: missing unit in duration ${JSON.stringify(text)}`)
    const scale = UNIT_MS[unit]
    if (scale === undefined) throw serverError(`time: unknown unit ${JSON.stringify(unit)} in duration ${JSON.stringify(text)}`)
    s = s.slice(unit.length)
    total += Number(`${m[1] || '0'}.${m[2] ?? ''}0`) * scale
  }
  return sign * total
}
