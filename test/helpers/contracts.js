// Compiles the Solidity fixtures once per source set: in memory per process, and on disk in
// os.tmpdir() so that every e2e file of a run reuses the first file's compilation.

import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const require = createRequire(import.meta.url)
const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const contractsDir = join(repoRoot, 'test', 'fixtures', 'contracts')
const nodeModules = join(repoRoot, 'node_modules')

const settings = {
  evmVersion: 'osaka',
  optimizer: { enabled: true, runs: 200 },
  outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] } },
}

let compiled

/**
 * @returns {Record<string, {abi: object[], bytecode: string, deployedBytecode: string}>}
 *   keyed by contract name (Token, Reverter, Storage); bytecodes are 0x-prefixed.
 */
export function compile() {
  if (compiled !== undefined) return compiled
  const sources = readSources()
  const cachePath = join(tmpdir(), `keel-solc-cache-${cacheKey(sources)}.json`)
  if (existsSync(cachePath)) {
    try {
      compiled = JSON.parse(readFileSync(cachePath, 'utf8'))
      return compiled
    } catch {
      // A torn or foreign file: fall through and recompile.
    }
  }
  compiled = compileSources(sources)
  const partial = `${cachePath}.${process.pid}.tmp`
  writeFileSync(partial, JSON.stringify(compiled))
  renameSync(partial, cachePath)
  return compiled
}

function readSources() {
  const sources = {}
  for (const file of readdirSync(contractsDir).filter((name) => name.endsWith('.sol')).sort()) {
    sources[file] = { content: readFileSync(join(contractsDir, file), 'utf8') }
  }
  return sources
}

function cacheKey(sources) {
  const solc = require('solc/package.json').version
  const openzeppelin = require('@openzeppelin/contracts/package.json').version
  return createHash('sha256')
    .update(JSON.stringify({ solc, openzeppelin, settings, sources }))
    .digest('hex')
    .slice(0, 16)
}

function resolveImport(path) {
  const candidate = join(nodeModules, path)
  if (!candidate.startsWith(nodeModules) || !existsSync(candidate)) return { error: `import not found: ${path}` }
  return { contents: readFileSync(candidate, 'utf8') }
}

function compileSources(sources) {
  const solc = require('solc')
  const input = { language: 'Solidity', sources, settings }
  const output = JSON.parse(solc.compile(JSON.stringify(input), { import: resolveImport }))
  const errors = (output.errors ?? []).filter((entry) => entry.severity === 'error')
  if (errors.length > 0) {
    throw new Error(`solc failed:\n${errors.map((entry) => entry.formattedMessage).join('\n')}`)
  }
  const contracts = {}
  for (const file of Object.keys(sources)) {
    for (const [name, artifact] of Object.entries(output.contracts[file] ?? {})) {
      contracts[name] = {
        abi: artifact.abi,
        bytecode: `0x${artifact.evm.bytecode.object}`,
        deployedBytecode: `0x${artifact.evm.deployedBytecode.object}`,
      }
    }
  }
  return contracts
}
