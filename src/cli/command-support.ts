// What the operator commands share: resolving --data-dir exactly as `keel start` does (flag, KEEL_DATA_DIR,
// config file, default ./data), rejecting unknown flags, and turning a Refusal into exit code 2.

import { loadConfig } from '../config/load.js'
import type { KeelConfig } from '../config/types.js'
import { Refusal } from '../operator/refusal.js'
import { parseArgs, UsageError } from './args.js'
import type { ParsedArgs } from './args.js'
import { formatCommandUsage } from './help.js'
import type { CliCommand, CliIo } from './command.js'

export const EXIT_REFUSED = 2

/** Loads the node configuration from the config-table flags given (e.g. data-dir, genesis), env and config file. */
export function nodeConfig(flags: Record<string, string | boolean>, names: readonly string[], io: CliIo): KeelConfig {
  const picked: Record<string, string | boolean> = {}
  for (const name of [...names, 'config']) if (name in flags) picked[name] = flags[name]!
  return loadConfig({ flags: picked, env: io.env, cwd: io.cwd })
}

/**
 * The arguments of an operator command: parsed, `--help` answered (then undefined is returned and the
 * command exits 0), and any flag outside `known` refused.
 */
export function commandArgs(
  command: CliCommand,
  argv: string[],
  io: CliIo,
  known: readonly string[],
  opts: { booleanFlags?: readonly string[]; help?: string } = {},
): ParsedArgs | undefined {
  const parsed = parseArgs(argv, { booleanFlags: new Set(['help', ...(opts.booleanFlags ?? [])]), shortFlags: { h: 'help' } })
  if ('help' in parsed.flags) {
    io.stdout(formatCommandUsage(command, false) + (opts.help ?? ''))
    return undefined
  }
  rejectUnknownFlags(parsed.flags, known, command.name)
  return parsed
}

export function rejectUnknownFlags(flags: Record<string, string | boolean>, known: readonly string[], command: string): void {
  for (const name of Object.keys(flags)) {
    if (!known.includes(name)) throw new UsageError(`unknown option --${name} for keel ${command}; see keel help ${command.split(' ')[0]}`)
  }
}

export function stringFlag(flags: Record<string, string | boolean>, name: string): string | undefined {
  const value = flags[name]
  if (value === true || value === '') throw new UsageError(`missing value for --${name}`)
  return value === false ? undefined : value
}

/** Runs a command body; a Refusal becomes `keel: <message>` on stderr and exit code 2. */
export async function refusalsExit2(io: CliIo, body: () => Promise<number>): Promise<number> {
  try {
    return await body()
  } catch (err) {
    if (err instanceof Refusal) {
      io.stderr(`keel: ${err.message}\n`)
      return EXIT_REFUSED
    }
    throw err
  }
}
