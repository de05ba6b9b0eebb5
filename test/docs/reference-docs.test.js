// The reference pages cannot drift from the code: docs/configuration.md and docs/metrics.md are generated
// (scripts/gen-config-doc.js, scripts/gen-metrics-doc.js) and must equal what the generators give now,
// the options they list must be those `keel start --help` prints, and every relative link of the guide
// and the docs must reach a file and, when it names one, a heading.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { formatOptionsHelp } from '../../dist/cli/help.js'
import { OPTIONS_BY_FLAG } from '../../dist/config/options.js'
import { CONFIG_DOC, renderConfigDoc } from '../../scripts/gen-config-doc.js'
import { METRICS_DOC, renderMetricsDoc } from '../../scripts/gen-metrics-doc.js'
import { repoRoot } from '../helpers/keel-cli.js'

test('docs/configuration.md is what the option table generates', () => {
  assert.equal(
    readFileSync(CONFIG_DOC, 'utf8'),
    renderConfigDoc(),
    'docs/configuration.md is out of date with src/config/options.ts: run `npm run docs:config` and commit the result',
  )
})

test('docs/configuration.md lists exactly the options `keel start --help` prints', () => {
  const flags = (text) => new Set([...text.matchAll(/^\s*(?:\| `)?--([a-z][a-z0-9-]*)/gm)].map((m) => m[1]))
  const help = flags(formatOptionsHelp())
  help.delete('config')
  const documented = flags(readFileSync(CONFIG_DOC, 'utf8'))
  assert.ok(help.size > 40, `the help lists the options (${help.size})`)
  assert.deepEqual([...documented].sort(), [...help].sort(), 'run `npm run docs:config`')
})

test("the guides' option tables name only options of keel start", () => {
  for (const guide of ['README.md', 'docs/architecture.md', 'docs/rpc.md']) {
    const lines = readFileSync(join(repoRoot, guide), 'utf8').split('\n')
    lines.forEach((line, i) => {
      if (!line.startsWith('|')) return
      for (const [, flag] of line.matchAll(/`--([a-z][a-z0-9-]*)/g)) {
        assert.ok(OPTIONS_BY_FLAG.has(flag), `${guide}:${i + 1}: --${flag} is not an option of keel start (docs/configuration.md)`)
      }
    })
  }
})

test('docs/metrics.md is what the metrics registry generates', async () => {
  assert.equal(
    readFileSync(METRICS_DOC, 'utf8'),
    await renderMetricsDoc(),
    'docs/metrics.md is out of date with src/metrics/: run `npm run docs:metrics` and commit the result',
  )
})

/** GitHub's anchors of a markdown file's headings (lowercase, punctuation but - and _ dropped, spaces to -). */
export function headingSlugs(markdown) {
  const slugs = new Set()
  const counts = new Map()
  let fenced = false
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced
    const heading = !fenced && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)
    if (!heading) continue
    const base = heading[1]
      .replace(/`/g, '')
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-')
    const n = counts.get(base) ?? 0
    counts.set(base, n + 1)
    slugs.add(n === 0 ? base : `${base}-${n}`)
  }
  return slugs
}

const GUIDES = ['README.md', ...readdirSync(join(repoRoot, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)]

for (const guide of GUIDES) {
  test(`${guide}: every relative link reaches its file and heading`, () => {
    const text = readFileSync(join(repoRoot, guide), 'utf8').replace(/^```[\s\S]*?^```$/gm, '')
    const broken = []
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/i.test(target)) continue
      const [path, anchor] = target.split('#')
      const file = path === '' ? join(repoRoot, guide) : join(repoRoot, dirname(guide), path)
      if (!existsSync(file)) {
        broken.push(`${target}: no file ${relative(repoRoot, file)}`)
        continue
      }
      if (anchor !== undefined && file.endsWith('.md') && !headingSlugs(readFileSync(file, 'utf8')).has(anchor)) {
        broken.push(`${target}: no heading #${anchor} in ${relative(repoRoot, file)}`)
      }
    }
    assert.deepEqual(broken, [])
  })
}

test('the guides speak of the project, not of how it was written', () => {
  for (const guide of GUIDES) {
    for (const [line, n] of readFileSync(join(repoRoot, guide), 'utf8').split('\n').map((l, i) => [l, i + 1])) {
      // a WebSocket session is the one session the guides may name
      if (/session/i.test(line.replace(/WebSocket sessions?/gi, ''))) assert.fail(`${guide}:${n} names a session: ${line}`)
    }
  }
})
