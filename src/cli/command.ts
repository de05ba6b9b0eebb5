// What a `keel` command is: a summary for `keel help`, and a run over the arguments after its name, given
// the process's streams, environment and working folder.

import type { NamedCommandSummary } from './commands/summaries.js'

export interface CliIo {
  stdout(text: string): void
  stderr(text: string): void
  env: NodeJS.ProcessEnv
  cwd: string
}

export interface CliCommand extends NamedCommandSummary {
  /** Receives the arguments after the command name; resolves to the exit code (a server resolves once up). */
  run(argv: string[], io: CliIo): Promise<number>
}
