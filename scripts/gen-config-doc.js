// Writes docs/configuration.md from the option table (src/config/options.ts, built to dist/), the same
// table `keel start --help` prints, so the reference cannot drift from what the node parses.
// Run `npm run docs:config`; test/docs/reference-docs.test.js fails when the committed file differs.

import { writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { CONFIG_ENV, CONFIG_FLAG, OPTIONS, defaultText, expectedText } from '../dist/config/options.js'

export const CONFIG_DOC = new URL('../docs/configuration.md', import.meta.url)

/** Text safe inside a Markdown table cell. */
const cell = (text) => String(text).replaceAll('|', '\\|').replaceAll('*', '\\*')

/** The type, and for numbers and enums the accepted values, as the start-up check words them. */
function typeText(option) {
  switch (option.type) {
    case 'bool':
      return 'boolean'
    case 'host':
      return 'IP address or host name'
    case 'path':
    case 'string':
      return option.type
    default:
      return expectedText(option)
  }
}

function flagText(option) {
  return option.metavar === '' ? `\`--${option.flag}\`` : `\`--${option.flag} ${option.metavar}\``
}

export function renderConfigDoc() {
  const lines = [
    '# Configuration reference',
    '',
    '<!-- Generated from src/config/options.ts by `npm run docs:config`; do not edit by hand. -->',
    '',
    'Every option of `keel start` is a command-line flag, an environment variable and a key of a JSON',
    `config file. The config file is named by \`--${CONFIG_FLAG} FILE\` or \`${CONFIG_ENV}\`; its keys are the`,
    'field names below (`dataDir`) or the flag names (`data-dir`), a key given both ways is refused, and',
    'relative paths in it resolve against the file\'s folder. Flags win over the environment, which wins',
    'over the file, which wins over the defaults. An empty environment variable counts as unset; a `KEEL_`',
    'variable that names no option is reported and ignored. Booleans accept `true`, `false`, `1`, `0`,',
    '`yes`, `no`, `on`, `off`; a bare boolean flag (`--dev`) means true.',
    '',
    'Values are checked at start: a bad one stops the node (exit 2) with a message naming the option, where',
    'it came from and what it expects, in the words of the Type column. Two rules join options:',
    '`--empty-block-period` is either 0 or at least `--block-time`, and `--state-history` is either 0',
    '(archive) or at least 128.',
    '',
    '`keel start --help` prints the same table.',
    '',
  ]
  const groups = []
  for (const option of OPTIONS) {
    if (groups.at(-1)?.name !== option.group) groups.push({ name: option.group, options: [] })
    groups.at(-1).options.push(option)
  }
  lines.push(`Groups: ${groups.map((g) => `[${g.name}](#${g.name.toLowerCase().replace(/[^a-z0-9 -]/g, '').replaceAll(' ', '-')})`).join(' · ')}`, '')
  for (const group of groups) {
    lines.push(`## ${group.name}`, '')
    lines.push('| Flag | Environment | Config key | Type | Default | Description |', '|---|---|---|---|---|---|')
    for (const option of group.options) {
      lines.push(
        `| ${flagText(option)} | \`${option.env}\` | \`${option.key}\` | ${cell(typeText(option))} | ${cell(defaultText(option))} | ${cell(option.help)} |`,
      )
    }
    lines.push('')
  }
  return lines.join('\n')
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(CONFIG_DOC, renderConfigDoc())
  console.log(`wrote ${fileURLToPath(CONFIG_DOC)}`)
}
