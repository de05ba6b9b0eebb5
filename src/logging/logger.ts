// Structured logs: one JSON object per line on stderr, e.g.
//   {"level":"info","time":"2025-01-01T00:00:00.000Z","msg":"block sealed","component":"chain","number":12}
// stdout stays for the few human lines tools parse (`keel: listening on ...`). A disabled level costs one
// integer comparison; fields are serialised only for lines that are written.

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent'
export type LogFields = Record<string, unknown>

const LEVEL_RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 }

export interface LogSink {
  write(line: string): unknown
}

export interface Logger {
  readonly level: LogLevel
  isEnabled(level: Exclude<LogLevel, 'silent'>): boolean
  debug(msg: string, fields?: LogFields): void
  info(msg: string, fields?: LogFields): void
  warn(msg: string, fields?: LogFields): void
  error(msg: string, fields?: LogFields): void
  /** A logger that adds `bindings` (e.g. {component: 'rpc'}) to every line. */
  child(bindings: LogFields): Logger
}

/** bigint as a decimal string, Error as {message, stack, code}: both would otherwise break or vanish in JSON. */
const replacer = (_key: string, value: unknown): unknown => {
  if (typeof value === 'bigint') return value.toString()
  if (value instanceof Error) {
    const code = (value as NodeJS.ErrnoException).code
    return code === undefined ? { message: value.message, stack: value.stack } : { message: value.message, code, stack: value.stack }
  }
  return value
}

class JsonLogger implements Logger {
  private readonly rank: number
  /** The bindings already serialised as `,"k":v,...` so each line only serialises its own fields. */
  private readonly boundJson: string

  constructor(
    readonly level: LogLevel,
    private readonly sink: LogSink,
    boundJson = '',
  ) {
    this.rank = LEVEL_RANK[level]
    this.boundJson = boundJson
  }

  isEnabled(level: Exclude<LogLevel, 'silent'>): boolean {
    return LEVEL_RANK[level] >= this.rank
  }

  debug(msg: string, fields?: LogFields): void {
    if (this.rank <= 10) this.write('debug', msg, fields)
  }

  info(msg: string, fields?: LogFields): void {
    if (this.rank <= 20) this.write('info', msg, fields)
  }

  warn(msg: string, fields?: LogFields): void {
    if (this.rank <= 30) this.write('warn', msg, fields)
  }

  error(msg: string, fields?: LogFields): void {
    if (this.rank <= 40) this.write('error', msg, fields)
  }

  child(bindings: LogFields): Logger {
    return new JsonLogger(this.level, this.sink, this.boundJson + fieldsJson(bindings))
  }

  private write(level: string, msg: string, fields: LogFields | undefined): void {
    const line =
      '{"level":"' +
      level +
      '","time":"' +
      new Date().toISOString() +
      '","msg":' +
      JSON.stringify(msg) +
      this.boundJson +
      (fields === undefined ? '' : fieldsJson(fields)) +
      '}\n'
    try {
      this.sink.write(line)
    } catch {
      // a closed stderr must not take the node down
    }
  }
}

/** `,"a":1,"b":"x"` for the given fields (undefined values are left out, as JSON.stringify does). */
const fieldsJson = (fields: LogFields): string => {
  let json: string
  try {
    json = JSON.stringify(fields, replacer)
  } catch {
    json = JSON.stringify({ fields: '[unserialisable]' })
  }
  return json.length <= 2 ? '' : ',' + json.slice(1, -1)
}

export function createLogger(level: LogLevel, sink: LogSink = process.stderr): Logger {
  if (!(level in LEVEL_RANK)) throw new Error(`unknown log level ${level}`)
  return new JsonLogger(level, sink)
}

/** A logger that writes nothing (tests, benches, embedded use). */
export const silentLogger: Logger = createLogger('silent', { write: () => true })
