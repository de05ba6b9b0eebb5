// A small argv parser: --flag value, --flag=value, boolean flags (--dev, --dev=false), short aliases
// (-h), positional arguments and `--` to end the flags. What a flag means is the caller's business.

export class UsageError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'UsageError'
  }
}

export interface ParsedArgs {
  /** Keyed by flag name without dashes; a bare boolean flag is true, every other value a string. */
  flags: Record<string, string | boolean>
  positionals: string[]
}

export interface ParseArgsOptions {
  /** Flags that take no separate value argument (--dev; --dev=false still works). */
  booleanFlags: ReadonlySet<string>
  /** Single-letter aliases, e.g. { h: 'help' }. */
  shortFlags?: Readonly<Record<string, string>>
}

export function parseArgs(argv: readonly string[], options: ParseArgsOptions): ParsedArgs {
  const flags: Record<string, string | boolean> = Object.create(null)
  const positionals: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1))
      break
    }
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=')
      const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq)
      if (name === '') throw new UsageError(`malformed option ${arg}; see keel --help`)
      if (eq !== -1) {
        flags[name] = arg.slice(eq + 1)
      } else if (options.booleanFlags.has(name)) {
        flags[name] = true
      } else {
        const next = argv[i + 1]
        // A missing value is reported by the config loader, which knows whether the flag exists.
        if (next === undefined || next.startsWith('--')) {
          flags[name] = true
        } else {
          flags[name] = next
          i++
        }
      }
      continue
    }
    if (arg.length > 1 && arg.startsWith('-')) {
      const long = options.shortFlags?.[arg.slice(1)]
      if (long === undefined) throw new UsageError(`unknown option ${arg}; see keel --help`)
      flags[long] = true
      continue
    }
    positionals.push(arg)
  }
  return { flags, positionals }
}
