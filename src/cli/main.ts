// The `keel` command line: picks the command, turns usage and config errors into exit code 2 with a
// one-line message, and leaves everything else to the command. Each operator command (init, credit,
// account, db, backup, restore) lives in src/cli/commands/<name>.ts, with its summary in
// commands/summaries.ts, and is listed in COMMANDS.

import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { ConfigError, loadConfig } from '../config/load.js'
import { OPTIONS } from '../config/options.js'
import type { KeelConfig } from '../config/types.js'
import { UsageError, parseArgs } from './args.js'
import type { CliCommand, CliIo } from './command.js'
import { formatCommandUsage, formatUsage } from './help.js'
import { ACCOUNT_COMMAND, BACKUP_COMMAND, CREDIT_COMMAND, DB_COMMAND, EXPORT_COMMAND, IMPORT_COMMAND, INIT_COMMAND, RESTORE_COMMAND } from './commands/summaries.js'
import type { NamedCommandSummary } from './commands/summaries.js'

/** The shape of src/node.ts, loaded only by `keel start`. */
interface RunningNode {
  url: string
  port: number
  close(): Promise<void>
}
interface NodeModule {
  startNode(config: KeelConfig): Promise<RunningNode>
}

const EXIT_USAGE = 2
const EXIT_FAILURE = 1

const HELP_FLAGS = { booleanFlags: new Set(['help']), shortFlags: { h: 'help' } } as const
const START_BOOLEAN_FLAGS: ReadonlySet<string> = new Set([
  'help',
  ...OPTIONS.filter((o) => o.type === 'bool').map((o) => o.flag),
])

const startCommand: CliCommand = {
  name: 'start',
  usage: 'start [options]',
  summary: 'run the node (JSON-RPC over HTTP and WebSocket)',
  async run(argv, io) {
    const { flags, positionals } = parseArgs(argv, { booleanFlags: START_BOOLEAN_FLAGS, shortFlags: { h: 'help' } })
    if ('help' in flags) {
      io.stdout(formatCommandUsage(startCommand, true))
      return 0
    }
    if (positionals.length > 0) {
      throw new UsageError(`unexpected argument "${positionals[0]}" for keel start; see keel --help`)
    }
    const config = loadConfig({
      flags,
      env: io.env,
      cwd: io.cwd,
      onWarning: (message) => io.stderr(`keel: warning: ${message}\n`),
    })
    const { startNode } = (await import('../node.js' as string)) as NodeModule
    const node = await startNode(config)
    closeOnSignals(node, io, config.logLevel !== 'silent')
    return 0
  },
}

function helpCommand(commands: () => readonly CliCommand[]): CliCommand {
  return {
    name: 'help',
    usage: 'help [command]',
    summary: 'show this help, or the help of one command',
    async run(argv, io) {
      const { positionals } = parseArgs(argv, HELP_FLAGS)
      const topic = positionals[0]
      if (topic === undefined) {
        io.stdout(formatUsage(version(), commands()))
        return 0
      }
      const command = commands().find((c) => c.name === topic)
      if (command === undefined) throw new UsageError(`unknown command "${topic}"; see keel --help`)
      io.stdout(formatCommandUsage(command, command === startCommand))
      return 0
    },
  }
}

/** A command listed by its summary and imported when it runs. */
function loadedOnUse(summary: NamedCommandSummary, load: () => Promise<CliCommand>): CliCommand {
  return { ...summary, run: async (argv, io) => (await load()).run(argv, io) }
}

const COMMANDS: readonly CliCommand[] = [
  startCommand,
  loadedOnUse(INIT_COMMAND, async () => (await import('./commands/init.js')).initCommand),
  loadedOnUse(IMPORT_COMMAND, async () => (await import('./commands/import.js')).importCommand),
  loadedOnUse(EXPORT_COMMAND, async () => (await import('./commands/export.js')).exportCommand),
  loadedOnUse(CREDIT_COMMAND, async () => (await import('./commands/credit.js')).creditCommand),
  loadedOnUse(ACCOUNT_COMMAND, async () => (await import('./commands/account.js')).accountCommand),
  loadedOnUse(DB_COMMAND, async () => (await import('./commands/db.js')).dbCommand),
  loadedOnUse(BACKUP_COMMAND, async () => (await import('./commands/backup.js')).backupCommand),
  loadedOnUse(RESTORE_COMMAND, async () => (await import('./commands/restore.js')).restoreCommand),
  helpCommand(() => COMMANDS),
]

/** First signal: close the node once, then exit 0. A second signal while closing: exit 1 at once. */
function closeOnSignals(node: RunningNode, io: CliIo, verbose: boolean): void {
  let closing = false
  const onSignal = (signal: NodeJS.Signals): void => {
    if (closing) {
      io.stderr(`keel: ${signal} again, exiting without a clean shutdown\n`)
      process.exit(EXIT_FAILURE)
    }
    closing = true
    if (verbose) io.stderr(`keel: ${signal} received, shutting down\n`)
    node.close().then(
      () => process.exit(0),
      (err: unknown) => {
        io.stderr(`keel: shutdown failed: ${errorMessage(err)}\n`)
        process.exit(EXIT_FAILURE)
      },
    )
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
}

let cachedVersion: string | undefined
export function version(): string {
  if (cachedVersion === undefined) {
    // dist/cli/main.js and src/cli/main.ts both sit two folders below package.json.
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
    cachedVersion = pkg.version
  }
  return cachedVersion
}

/** True when dist/node.js itself is absent (not when something it imports is). */
function isMissingNodeModule(err: unknown): boolean {
  if ((err as NodeJS.ErrnoException | undefined)?.code !== 'ERR_MODULE_NOT_FOUND') return false
  return errorMessage(err).includes(`'${fileURLToPath(new URL('../node.js', import.meta.url))}'`)
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}

/** Runs one CLI invocation and resolves to its exit code; main() is this plus the process wiring. */
export async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const [first, ...rest] = argv
  try {
    if (first === undefined) {
      io.stderr(`keel: missing command\n\n${formatUsage(version(), COMMANDS)}`)
      return EXIT_USAGE
    }
    if (first === '--help' || first === '-h') return await COMMANDS.find((c) => c.name === 'help')!.run([], io)
    if (first === '--version' || first === '-v' || first === 'version') {
      io.stdout(`${version()}\n`)
      return 0
    }
    const command = COMMANDS.find((c) => c.name === first)
    if (command === undefined) {
      const what = first.startsWith('-') ? `expected a command before option ${first}` : `unknown command "${first}"`
      io.stderr(`keel: ${what}; see keel --help\n`)
      return EXIT_USAGE
    }
    return await command.run(rest, io)
  } catch (err) {
    if (err instanceof ConfigError || err instanceof UsageError) {
      io.stderr(`keel: ${err.message}\n`)
      return EXIT_USAGE
    }
    if (isMissingNodeModule(err)) {
      io.stderr('keel: dist/node.js is missing; build the project first (npm run build)\n')
      return EXIT_FAILURE
    }
    const detail = io.env.KEEL_LOG_LEVEL === 'debug' && err instanceof Error && err.stack ? err.stack : errorMessage(err)
    io.stderr(`keel: ${detail}\n`)
    return EXIT_FAILURE
  }
}

export async function main(argv: string[]): Promise<void> {
  const code = await run(argv, {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    env: process.env,
    cwd: process.cwd(),
  })
  process.exitCode = code
}
