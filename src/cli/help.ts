// Usage text, generated from the option table so that the help never drifts from what is parsed.

import { CONFIG_ENV, CONFIG_FLAG, OPTIONS, defaultText } from '../config/options.js'
import type { Option, OptionGroup } from '../config/options.js'

export interface CommandSummary {
  /** How the command is invoked, e.g. 'start [options]'. */
  usage: string
  summary: string
}

const FLAG_COLUMN = 34

function row(left: string, right: string): string {
  const pad = left.length + 2 <= FLAG_COLUMN ? ' '.repeat(FLAG_COLUMN - left.length) : `\n${' '.repeat(FLAG_COLUMN)}`
  return `${left}${pad}${right}`
}

function flagLabel(option: Option): string {
  return option.metavar === '' ? `  --${option.flag}` : `  --${option.flag} ${option.metavar}`
}

/** The settings of `keel start`, grouped, each with its environment variable and default. */
export function formatOptionsHelp(): string {
  const lines: string[] = [
    'Options (precedence: command line > environment > config file > defaults):',
    row(`  --${CONFIG_FLAG} FILE`, 'JSON file of options; keys are field names (dataDir) or flag names (data-dir)'),
    row('', `env ${CONFIG_ENV}; relative paths in the file resolve against its folder`),
  ]
  let group: OptionGroup | undefined
  for (const option of OPTIONS) {
    if (option.group !== group) {
      group = option.group
      lines.push('', `${group}:`)
    }
    lines.push(row(flagLabel(option), option.help))
    lines.push(row('', `env ${option.env}, default ${defaultText(option)}`))
  }
  return lines.join('\n')
}

export function formatUsage(version: string, commands: readonly CommandSummary[]): string {
  const lines = [
    `keel ${version}: Ethereum JSON-RPC node for a private EVM chain`,
    '',
    'Usage:',
    ...commands.map((c) => row(`  keel ${c.usage}`, c.summary)),
    row('  keel --version', 'print the version'),
    '',
    formatOptionsHelp(),
    '',
  ]
  return lines.join('\n')
}

export function formatCommandUsage(command: CommandSummary, withOptions: boolean): string {
  const lines = [`Usage: keel ${command.usage}`, '', command.summary]
  if (withOptions) lines.push('', formatOptionsHelp())
  lines.push('')
  return lines.join('\n')
}
