// The execution-apis conformance suite (test/fixtures/execution-apis/tests) as hive's rpc-compat simulator runs
// it: the hive test chain imported into a fresh data folder, Keel started on it with --no-seal, and every
// fixture <method>/<name>.io sent in order: each `>>` request as is, its answer compared with the `<<`
// line as JSON (object key order ignored); a `speconly` fixture's result is only validated against the
// method's result schema in test/fixtures/execution-apis/src. Errors compare code and message.
//
// KNOWN lists the fixtures Keel does not pass yet, each with its reason: the test fails when a listed
// fixture starts passing (take it off the list) or an unlisted one fails.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Ajv from 'ajv'
import { parse as parseYaml } from 'yaml'
import { keelCli } from '../helpers/keel-cli.js'
import { startNode } from '../helpers/node.js'
import { rawPost } from '../helpers/rpc.js'
import { HIVE, HIVE_CHAIN, HIVE_GENESIS } from '../import/hive-chain.js'
import { KNOWN } from './known-failures.js'

const SPEC_SRC = join(HIVE, '..', 'src')

/** Every fixture, in hive's order (methods, then names, sorted). */
function fixtures() {
  const out = []
  for (const method of readdirSync(HIVE, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort()) {
    for (const name of readdirSync(join(HIVE, method)).filter((f) => f.endsWith('.io')).sort()) {
      const lines = readFileSync(join(HIVE, method, name), 'utf8').split('\n')
      const steps = []
      let speconly = false
      for (const line of lines) {
        if (line.startsWith('//') && /speconly/.test(line)) speconly = true
        else if (line.startsWith('>> ')) steps.push({ request: line.slice(3) })
        else if (line.startsWith('<< ')) steps[steps.length - 1].expected = JSON.parse(line.slice(3))
      }
      out.push({ id: `${method}/${name.slice(0, -3)}`, method, speconly, steps })
    }
  }
  return out
}

/** The result schema of each method of the spec, with the shared components, compiled by ajv. */
function resultSchemas() {
  const schemas = {}
  for (const file of readdirSync(join(SPEC_SRC, 'schemas'))) Object.assign(schemas, parseYaml(readFileSync(join(SPEC_SRC, 'schemas', file), 'utf8')))
  const ajv = new Ajv({ strict: false, allErrors: false, validateFormats: false })
  const byMethod = new Map()
  for (const dir of readdirSync(SPEC_SRC, { withFileTypes: true }).filter((d) => d.isDirectory() && d.name !== 'schemas' && d.name !== 'error-groups')) {
    for (const file of readdirSync(join(SPEC_SRC, dir.name)).filter((f) => f.endsWith('.yaml'))) {
      for (const method of parseYaml(readFileSync(join(SPEC_SRC, dir.name, file), 'utf8')) ?? []) {
        if (method?.result?.schema === undefined) continue
        byMethod.set(method.name, ajv.compile({ ...method.result.schema, components: { schemas } }))
      }
    }
  }
  return byMethod
}

/** Why a step's answer is not the expected one, or undefined when it is. */
function difference(fixture, expected, got, schemas) {
  if (got === undefined) return 'no answer'
  if (expected.error !== undefined || got.error !== undefined) {
    if (expected.error === undefined) return `error ${JSON.stringify(got.error)}, expected a result`
    if (got.error === undefined) return `result ${JSON.stringify(got.result).slice(0, 200)}, expected error ${JSON.stringify(expected.error)}`
    if (got.error.code !== expected.error.code || got.error.message !== expected.error.message) {
      return `error ${got.error.code} "${got.error.message}", expected ${expected.error.code} "${expected.error.message}"`
    }
    return undefined
  }
  if (fixture.speconly) {
    const validate = schemas.get(fixture.method)
    if (validate === undefined) return 'result' in got ? undefined : 'no result'
    return validate(got.result) ? undefined : `result does not match the schema: ${JSON.stringify(validate.errors?.[0])}`
  }
  try {
    assert.deepStrictEqual(got, expected)
    return undefined
  } catch {
    return `answer ${JSON.stringify(got).slice(0, 300)}`
  }
}

test('execution-apis rpc-compat fixtures over the hive chain', { timeout: 600_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-conformance-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const dataDir = join(dir, 'data')
  const imported = await keelCli(['import', HIVE_CHAIN, '--genesis', HIVE_GENESIS, '--data-dir', dataDir])
  assert.equal(imported.code, 0, imported.stderr)
  // hive sends the fixtures back to back from one address: no per-IP rate limit
  const node = await startNode({ dev: false, dataDir, args: ['--no-seal', '--rate-limit', '0'] })
  t.after(() => node.stop())

  const schemas = resultSchemas()
  const all = fixtures()
  const failed = new Map()
  const perMethod = new Map()
  for (const fixture of all) {
    let reason
    for (const step of fixture.steps) {
      const { json } = await rawPost(node.url, step.request)
      reason = difference(fixture, step.expected, json, schemas)
      if (reason !== undefined) break
    }
    const counts = perMethod.get(fixture.method) ?? { pass: 0, total: 0 }
    counts.total++
    if (reason === undefined) counts.pass++
    else failed.set(fixture.id, reason)
    perMethod.set(fixture.method, counts)
  }
  const lines = [...perMethod].map(([m, c]) => `${m.padEnd(42)} ${String(c.pass).padStart(3)} / ${c.total}`)
  const pass = all.length - failed.size
  t.diagnostic(`conformance:\n${lines.join('\n')}\n${'total'.padEnd(42)} ${String(pass).padStart(3)} / ${all.length}`)
  if (process.env.KEEL_CONFORMANCE_REPORT !== undefined) {
    process.stdout.write(`${lines.join('\n')}\ntotal ${pass} / ${all.length}\n`)
    for (const [id, reason] of failed) process.stdout.write(`FAIL ${id}: ${reason}\n`)
  }

  const unexpected = [...failed].filter(([id]) => KNOWN[id] === undefined).map(([id, reason]) => `${id}: ${reason}`)
  const nowPassing = Object.keys(KNOWN).filter((id) => !failed.has(id))
  assert.deepEqual(unexpected, [], 'fixtures failing that KNOWN does not list')
  assert.deepEqual(nowPassing, [], 'fixtures KNOWN lists that pass now: take them off the list')
})
