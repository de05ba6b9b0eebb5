// Validation against the official Ethereum JSON-RPC schemas (ethereum/execution-apis).
//
// Usage (in any node:test file):
//   import { validateSchema, validateMethodResult, validateMethodParams } from '../helpers/schema.js'
//   validateSchema('Block', block)                               // a named schema from src/schemas/*.yaml
//   validateMethodResult('eth_getTransactionReceipt', receipt)    // the method's result schema (src/eth/*.yaml)
//   validateMethodParams('eth_getLogs', [filter])                 // each positional param + required count
//   validateSchema('ReceiptInfo', receipt, { allowExtraFields: true })  // tolerate fields the spec lacks
// Each throws an Error listing every ajv error (allErrors) with its JSON path; they return the value.
// schemaNames() and methodNames() list what is available.
//
// Where the YAML comes from: test/fixtures/execution-apis (a copy kept in this repo, with its CC0 LICENSE and
// SOURCE.md naming the upstream commit), else ../shared/execution-apis next to the repository.
// How it is assembled: every src/schemas/*.yaml is merged into one `definitions` map of a single root schema,
// and `$ref: '#/components/schemas/X'` is rewritten to point into that map, so any schema (and any method's
// param/result schema) can be validated with its references resolved.
//
// Spec quirks handled here (see SOURCE.md): `FilterResults` is `oneOf [hash32[], Log[]]`, which an empty
// array matches twice, so it is validated as `anyOf`. Most objects set `additionalProperties: false`:
// by default that is enforced (a field name typo in our output fails); `allowExtraFields: true` relaxes it
// for checking other nodes' output (geth adds fields the spec does not list).

import { existsSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import AjvModule from 'ajv'
import { parse as parseYaml } from 'yaml'

const Ajv = AjvModule.default ?? AjvModule

const here = path.dirname(fileURLToPath(import.meta.url))
const repoRoot = path.resolve(here, '../..')
const ROOT_ID = 'execution-apis'
const SCHEMA_REF = '#/components/schemas/'

/** Directory holding `schemas/` and `eth/` (the execution-apis `src` folder). */
export function specDir() {
  const candidates = [
    path.join(repoRoot, 'test/fixtures/execution-apis/src'),
    path.resolve(repoRoot, '../shared/execution-apis/src'),
  ]
  for (const dir of candidates) if (existsSync(path.join(dir, 'schemas'))) return dir
  throw new Error(`execution-apis schemas not found; looked in: ${candidates.join(', ')}`)
}

function readYamlDir(dir) {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml') || f.endsWith('.yml'))
    .sort()
    .map((f) => ({ file: f, doc: parseYaml(readFileSync(path.join(dir, f), 'utf8')) }))
}

/** Deep copy with `#/components/schemas/X` refs pointed at the merged root schema. */
function rewriteRefs(node) {
  if (Array.isArray(node)) return node.map(rewriteRefs)
  if (node === null || typeof node !== 'object') return node
  const out = {}
  for (const [key, value] of Object.entries(node)) {
    if (key === '$ref' && typeof value === 'string' && value.startsWith(SCHEMA_REF)) {
      out.$ref = `${ROOT_ID}#/definitions/${value.slice(SCHEMA_REF.length)}`
    } else {
      out[key] = rewriteRefs(value)
    }
  }
  return out
}

/** Deep copy without `additionalProperties: false`. */
function relax(node) {
  if (Array.isArray(node)) return node.map(relax)
  if (node === null || typeof node !== 'object') return node
  const out = {}
  for (const [key, value] of Object.entries(node)) {
    if (key === 'additionalProperties' && value === false) continue
    out[key] = relax(value)
  }
  return out
}

let cache

function load() {
  if (cache !== undefined) return cache
  const dir = specDir()
  const definitions = {}
  for (const { file, doc } of readYamlDir(path.join(dir, 'schemas'))) {
    for (const [name, schema] of Object.entries(doc ?? {})) {
      if (name in definitions) throw new Error(`schema ${name} defined twice (second time in ${file})`)
      definitions[name] = rewriteRefs(schema)
    }
  }
  if (definitions.FilterResults?.oneOf) {
    const { oneOf, ...rest } = definitions.FilterResults
    definitions.FilterResults = { ...rest, anyOf: oneOf }
  }
  const methods = new Map()
  for (const { doc } of readYamlDir(path.join(dir, 'eth'))) {
    for (const method of doc ?? []) methods.set(method.name, method)
  }
  cache = { definitions, methods, validators: new Map() }
  return cache
}

function makeAjv(definitions) {
  const ajv = new Ajv({ strict: false, allErrors: true })
  ajv.addSchema({ $id: ROOT_ID, definitions })
  return ajv
}

const ajvs = new Map()
function ajvFor(allowExtraFields) {
  const key = allowExtraFields ? 'relaxed' : 'strict'
  let ajv = ajvs.get(key)
  if (ajv === undefined) {
    const { definitions } = load()
    ajv = makeAjv(allowExtraFields ? relax(definitions) : definitions)
    ajvs.set(key, ajv)
  }
  return ajv
}

function compiled(key, schema, allowExtraFields) {
  const { validators } = load()
  const cacheKey = `${allowExtraFields ? 'relaxed' : 'strict'}:${key}`
  let validate = validators.get(cacheKey)
  if (validate === undefined) {
    const ajv = ajvFor(allowExtraFields)
    validate = ajv.compile(allowExtraFields ? relax(rewriteRefs(schema)) : rewriteRefs(schema))
    validators.set(cacheKey, validate)
  }
  return validate
}

function check(validate, label, value) {
  if (validate(value)) return value
  const lines = validate.errors.map(
    (e) => `  ${e.instancePath || '(root)'} ${e.message}${e.params ? ' ' + JSON.stringify(e.params) : ''} [${e.schemaPath}]`,
  )
  const shown = JSON.stringify(value, null, 2)
  throw new Error(`${label}: value does not match the execution-apis schema\n${lines.join('\n')}\nvalue: ${shown.length > 4000 ? shown.slice(0, 4000) + '…' : shown}`)
}

/** Names of all schemas in src/schemas/*.yaml. */
export function schemaNames() {
  return Object.keys(load().definitions)
}

/** Names of all methods in src/eth/*.yaml. */
export function methodNames() {
  return [...load().methods.keys()]
}

/** The raw (unrewritten) OpenRPC method object, e.g. for its examples. */
export function methodSpec(method) {
  const spec = load().methods.get(method)
  if (spec === undefined) throw new Error(`unknown method ${method} (not in execution-apis src/eth)`)
  return spec
}

/** Validates `value` against the named schema (e.g. 'Block', 'TransactionInfo', 'ReceiptInfo', 'Log'). */
export function validateSchema(name, value, { allowExtraFields = false } = {}) {
  if (!(name in load().definitions)) throw new Error(`unknown schema ${name}`)
  const validate = compiled(`schema:${name}`, { $ref: `${SCHEMA_REF}${name}` }, allowExtraFields)
  return check(validate, `schema ${name}`, value)
}

/** Validates a method's result (the `result.schema` of the method in src/eth/*.yaml). */
export function validateMethodResult(method, value, { allowExtraFields = false } = {}) {
  const spec = methodSpec(method)
  if (spec.result?.schema === undefined) throw new Error(`method ${method} has no result schema`)
  const validate = compiled(`result:${method}`, spec.result.schema, allowExtraFields)
  return check(validate, `${method} result`, value)
}

/** Validates positional params: each against its schema, and that every `required` param is present. */
export function validateMethodParams(method, params, { allowExtraFields = false } = {}) {
  const spec = methodSpec(method)
  const declared = spec.params ?? []
  if (params.length > declared.length) {
    throw new Error(`${method} params: ${params.length} given, the spec declares ${declared.length}`)
  }
  declared.forEach((param, i) => {
    if (params[i] === undefined) {
      if (param.required) throw new Error(`${method} params: required param ${i} (${param.name}) missing`)
      return
    }
    const validate = compiled(`param:${method}:${i}`, param.schema, allowExtraFields)
    check(validate, `${method} param ${i} (${param.name})`, params[i])
  })
  return params
}
