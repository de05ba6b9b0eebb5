// The shape of src/: imports flow one way (rpc/ sits above chain/, exec/, evm/ and the shared errors.ts,
// json/ and util/), no module imports itself back through others (type-only imports included), and the
// code speaks of the project, never of the history of how it was written. Reads the TypeScript sources,
// so it needs no build.

import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'src')

/** Every .ts file under `dir`, as paths relative to src/ with forward slashes. */
function tsFiles(dir = SRC) {
  const out = []
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) out.push(...tsFiles(path))
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(relative(SRC, path).split('\\').join('/'))
  }
  return out.sort()
}

// import x from '…', import type { … } from '…', import * as x from '…', export { … } from '…',
// export * from '…' (clauses may span lines); import '…'; import('…') and import('…' as string).
const STATIC_FROM =
  /^[ \t]*(?:import|export)\s+(?:type\s+)?(?:[\w$]+\s*,\s*)?(?:\*(?:\s+as\s+[\w$]+)?|\{[^}]*\}|[\w$]+)\s*from\s*(['"])([^'"]+)\1/gm
const SIDE_EFFECT = /^[ \t]*import\s*(['"])([^'"]+)\1/gm
const DYNAMIC = /\bimport\s*\(\s*(['"])([^'"]+)\1\s*(?:as\s+string\s*)?\)/g

/** The relative specifiers `source` imports or re-exports. */
export function specifiers(source) {
  const out = []
  for (const pattern of [STATIC_FROM, SIDE_EFFECT, DYNAMIC]) {
    for (const m of source.matchAll(pattern)) if (m[2].startsWith('.')) out.push(m[2])
  }
  return out
}

/** The src/-relative .ts file a relative specifier of `from` names ('./x.js' -> 'dir/x.ts'). */
function target(from, spec) {
  const path = relative(SRC, resolve(SRC, dirname(from), spec)).split('\\').join('/')
  return path.replace(/\.js$/, '.ts')
}

/** file -> the src/ files it imports. */
function importGraph() {
  const files = tsFiles()
  const known = new Set(files)
  const graph = new Map()
  for (const file of files) {
    const edges = new Set()
    for (const spec of specifiers(readFileSync(join(SRC, file), 'utf8'))) {
      const to = target(file, spec)
      assert.ok(known.has(to), `${file} imports ${spec}, which names no file under src/ (${to})`)
      edges.add(to)
    }
    graph.set(file, [...edges].sort())
  }
  return graph
}

/** One cycle per strongly connected component that has one (Tarjan), each as a path a -> … -> a. */
export function cycles(graph) {
  let next = 0
  const index = new Map()
  const low = new Map()
  const stack = []
  const onStack = new Set()
  const found = []
  const visit = (v) => {
    index.set(v, next)
    low.set(v, next++)
    stack.push(v)
    onStack.add(v)
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v), low.get(w)))
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v), index.get(w)))
      }
    }
    if (low.get(v) !== index.get(v)) return
    const component = new Set()
    let w
    do {
      w = stack.pop()
      onStack.delete(w)
      component.add(w)
    } while (w !== v)
    if (component.size > 1 || (graph.get(v) ?? []).includes(v)) found.push(cycleThrough(graph, v, component))
  }
  for (const v of graph.keys()) if (!index.has(v)) visit(v)
  return found
}

/** The shortest path from `start` back to itself inside `component` (breadth first). */
function cycleThrough(graph, start, component) {
  const cameFrom = new Map()
  const queue = [start]
  while (queue.length > 0) {
    const v = queue.shift()
    for (const w of graph.get(v) ?? []) {
      if (!component.has(w)) continue
      if (w === start) {
        const path = [start]
        for (let at = v; at !== start; at = cameFrom.get(at)) path.unshift(at)
        path.unshift(start)
        return path
      }
      if (!cameFrom.has(w)) {
        cameFrom.set(w, v)
        queue.push(w)
      }
    }
  }
  return [start, start]
}

// Ordinals before "session"/"sitting"/"attempt" (first, thirty-second, twenty-seventh, 6th, …), and the
// words of a development log: a measurement is cited by the commit that recorded it instead.
const ORDINAL = String.raw`(?:first|second|third|\w+th|\w+-\w+th|\d+(?:st|nd|rd|th))`
export const HISTORY = [
  new RegExp(String.raw`\b${ORDINAL}\s+(?:session|sitting|attempt|iteration)s?\b`, 'i'),
  /\b(?:previous|earlier|last|this|that|next|later|same|prior)\s+(?:session|sitting)s?\b/i,
  /\bsittings?\b/i,
  /\bthis time\b/i,
  /\bused to (?:be|do|take|cost|run|read|make)\b/i,
]

/** A comment line without its leading // or *. */
const bare = (line) => line.replace(/^\s*(?:\/\/+|\/?\*+\/?)?\s*/, '').trim()

/** 'line: text' for each line of `source` that tells history, wrapped comments read across the line break. */
export function historyLines(source) {
  const lines = source.split('\n')
  const hits = []
  for (let i = 0; i < lines.length; i++) {
    const here = bare(lines[i])
    const across = i + 1 < lines.length ? `${here} ${bare(lines[i + 1])}` : here
    const tells = (text) => HISTORY.some((p) => p.test(text))
    // a hit wholly on the next line is reported there
    if (tells(here) || (tells(across) && !tells(bare(lines[i + 1])))) hits.push(`${i + 1}: ${lines[i].trim()}`)
  }
  return hits
}

test('chain/, exec/, evm/ and the shared modules (errors.ts, json/, util/) do not import from rpc/', () => {
  const below = /^(?:(?:chain|exec|evm|json|util)\/|errors\.ts$)/
  const wrong = []
  for (const [file, imports] of importGraph()) {
    if (!below.test(file)) continue
    for (const to of imports) if (to.startsWith('rpc/')) wrong.push(`src/${file} imports src/${to}`)
  }
  if (wrong.length > 0) assert.fail(`rpc/ sits above chain/, exec/, evm/, json/, util/ and errors.ts:\n${wrong.join('\n')}`)
})

test('the modules under src/ import one another without a cycle (type-only imports included)', () => {
  const found = cycles(importGraph())
  if (found.length > 0) assert.fail(`import cycles under src/:\n${found.map((c) => c.map((f) => `src/${f}`).join(' -> ')).join('\n')}`)
})

test('no comment or string under src/ tells the history of how the code was written', () => {
  const hits = []
  for (const file of tsFiles()) hits.push(...historyLines(readFileSync(join(SRC, file), 'utf8')).map((h) => `src/${file}:${h}`))
  if (hits.length > 0) assert.fail(`cite the commit that recorded a measurement instead:\n${hits.join('\n')}`)
})

test('the checks themselves: what they parse and what they catch', () => {
  assert.deepEqual(
    specifiers(
      [
        "import { a } from './a.js'",
        "import type {\n  B,\n  C,\n} from '../b.js'",
        "import D, { e } from './d.js'",
        "import * as f from './f.js'",
        "export { g } from './g.js'",
        "export * from './h.js'",
        "export type { I } from './i.js'",
        "import './side.js'",
        "const j = await import('./j.js')",
        "const l = (await import('../l.js' as string)) as L",
        "import { k } from '@ethereumjs/util'",
      ].join('\n'),
    ),
    ['./a.js', '../b.js', './d.js', './f.js', './g.js', './h.js', './i.js', './side.js', './j.js', '../l.js'],
  )
  const graph = new Map([
    ['a', ['b']],
    ['b', ['c']],
    ['c', ['a', 'd']],
    ['d', []],
    ['e', ['e']],
  ])
  assert.deepEqual(cycles(graph), [['a', 'b', 'c', 'a'], ['e', 'e']])
  for (const old of [
    '(bench/README.md, thirty-second session)',
    'bench/README.md, sixth session',
    'Measured in bench/README.md (seventh session).',
    'since the thirty-third session',
    'the 3rd session',
    'in the previous sitting',
    'this time the pool is',
    'it used to be dropped from the block',
  ]) {
    assert.ok(HISTORY.some((p) => p.test(old)), old)
  }
  assert.deepEqual(historyLines('// compiling the block (bench/README.md, twenty-seventh\n// session). After start-up'), [
    '1: // compiling the block (bench/README.md, twenty-seventh',
  ])
  for (const fine of [
    'a WebSocket session',
    'the session travels inside a plain holder',
    'an attempt at the call',
    'the first run paid cold',
    'the fourth field',
  ]) {
    assert.ok(!HISTORY.some((p) => p.test(fine)), fine)
  }
})
