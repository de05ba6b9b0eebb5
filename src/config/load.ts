// Resolves the configuration: defaults < config file < environment < command-line flags, each value
// validated against the option table, each error naming the option and where the bad value came from.

import { readFileSync } from 'node:fs'
import { isIP } from 'node:net'
import { homedir } from 'node:os'
import { dirname, resolve } from 'node:path'
import {
  CONFIG_ENV,
  CONFIG_FLAG,
  OPTIONS,
  OPTIONS_BY_ENV,
  OPTIONS_BY_FLAG,
  OPTIONS_BY_KEY,
  defaultConfig,
  expectedText,
} from './options.js'
import type { Option, OptionKey } from './options.js'
import type { KeelConfig } from './types.js'
import { MIN_GAS_LIMIT } from '../chain/gas-limit.js'

/** KEEL_ variables that are not settings: the keystore passphrase of the operator commands. */
const NON_OPTION_ENV: ReadonlySet<string> = new Set(['KEEL_PASSPHRASE'])

export class ConfigError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ConfigError'
  }
}

export interface LoadConfigInput {
  /** Parsed command-line flags, keyed by flag name without the leading dashes ('data-dir'). */
  flags: Record<string, string | boolean>
  env: NodeJS.ProcessEnv
  /** Config file path; when absent, --config or KEEL_CONFIG names it, and without those there is none. */
  configFile?: string
  /** Directory that relative paths from flags and environment resolve against (default: process.cwd()). */
  cwd?: string
  /** Receives non-fatal notes, e.g. an unknown KEEL_* environment variable. */
  onWarning?: (message: string) => void
}

/** Where a value came from, as error messages word it: "--port" from "command line". */
interface Origin {
  name: string
  source: string
  /** Directory relative paths resolve against. */
  baseDir: string
}

/** Keys of a config file that are not settings and are skipped (editor schema hints). */
const IGNORED_FILE_KEYS = new Set(['$schema'])

const INT_PATTERN = /^[+-]?\d+$/
const NUMBER_PATTERN = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/
const BIGINT_PATTERN = /^(?:\d+|0[xX][0-9a-fA-F]+)$/
const HOSTNAME_PATTERN = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/
const TRUE_WORDS = new Set(['true', '1', 'yes', 'on'])
const FALSE_WORDS = new Set(['false', '0', 'no', 'off'])

export function loadConfig(input: LoadConfigInput): KeelConfig {
  const cwd = input.cwd ?? process.cwd()
  const config = defaultConfig() as unknown as Record<OptionKey, unknown>
  const setBy = new Map<OptionKey, Origin>()
  const set = (option: Option, raw: unknown, origin: Origin): void => {
    config[option.key] = parseValue(option, raw, origin)
    setBy.set(option.key, origin)
  }

  const configFile = configFilePath(input, cwd)
  if (configFile !== undefined) {
    for (const [option, raw, origin] of readConfigFile(configFile)) set(option, raw, origin)
  }

  for (const option of OPTIONS) {
    const raw = input.env[option.env]
    // An empty variable counts as unset, as compose files and shells often leave them.
    if (raw === undefined || raw === '') continue
    set(option, raw, { name: option.env, source: 'environment', baseDir: cwd })
  }
  if (input.onWarning) {
    for (const name of Object.keys(input.env)) {
      if (name.startsWith('KEEL_') && name !== CONFIG_ENV && !NON_OPTION_ENV.has(name) && !OPTIONS_BY_ENV.has(name)) {
        input.onWarning(`ignoring unknown environment variable ${name}`)
      }
    }
  }

  for (const [given, raw] of Object.entries(input.flags)) {
    const name = given.replace(/^-+/, '')
    if (name === CONFIG_FLAG) continue
    const option = OPTIONS_BY_FLAG.get(name)
    if (option === undefined) throw new ConfigError(`unknown option --${name}; see keel --help`)
    if (raw === true && option.type !== 'bool') throw new ConfigError(`missing value for --${name}`)
    set(option, raw, { name: `--${name}`, source: 'command line', baseDir: cwd })
  }

  for (const option of OPTIONS) {
    const value = config[option.key]
    if (option.type === 'path' && !setBy.has(option.key) && typeof value === 'string') {
      config[option.key] = resolvePath(value, cwd)
    }
  }
  applyEmptyBlockPeriod(config, setBy)
  checkStateHistory(config, setBy)
  checkBlockGasLimit(config, setBy)
  checkReplication(config, setBy)
  return config as unknown as KeelConfig
}

function configFilePath(input: LoadConfigInput, cwd: string): string | undefined {
  let path = input.configFile
  if (path === undefined) {
    const flag = input.flags[CONFIG_FLAG] ?? input.flags[`--${CONFIG_FLAG}`]
    if (flag === true || flag === '') throw new ConfigError(`missing value for --${CONFIG_FLAG}`)
    if (typeof flag === 'string') path = flag
  }
  if (path === undefined) {
    const fromEnv = input.env[CONFIG_ENV]
    if (fromEnv !== undefined && fromEnv !== '') path = fromEnv
  }
  return path === undefined ? undefined : resolvePath(path, cwd)
}

function readConfigFile(path: string): Array<[Option, unknown, Origin]> {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message
    throw new ConfigError(`cannot read config file ${path}: ${reason}`)
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (err) {
    throw new ConfigError(`config file ${path} is not valid JSON: ${(err as Error).message}`)
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ConfigError(`config file ${path} must hold a JSON object of options`)
  }

  const entries: Array<[Option, unknown, Origin]> = []
  const seen = new Map<OptionKey, string>()
  const baseDir = dirname(path)
  for (const [name, raw] of Object.entries(parsed as Record<string, unknown>)) {
    if (IGNORED_FILE_KEYS.has(name)) continue
    const option = OPTIONS_BY_KEY.get(name as OptionKey) ?? OPTIONS_BY_FLAG.get(name)
    if (option === undefined) throw new ConfigError(`unknown option "${name}" in config file ${path}`)
    const earlier = seen.get(option.key)
    if (earlier !== undefined) {
      throw new ConfigError(`option "${name}" repeats "${earlier}" in config file ${path}`)
    }
    seen.set(option.key, name)
    entries.push([option, raw, { name, source: `config file ${path}`, baseDir }])
  }
  return entries
}

/** Unset, the empty-block period follows the block time; set, it may not be shorter than the block time. */
function applyEmptyBlockPeriod(config: Record<OptionKey, unknown>, setBy: Map<OptionKey, Origin>): void {
  const blockTime = config.blockTime as number
  const origin = setBy.get('emptyBlockPeriod')
  if (origin === undefined) {
    config.emptyBlockPeriod = blockTime
    return
  }
  const period = config.emptyBlockPeriod as number
  if (period > 0 && blockTime > 0 && period < blockTime) {
    throw new ConfigError(
      `invalid value ${period} for ${origin.name} (from ${origin.source}): ` +
        `expected 0 or at least the block time (${blockTime})`,
    )
  }
}

/** Pruning keeps at least geth's 128 recent states: below that, reorg-free readers would race the pruner. */
export const MIN_STATE_HISTORY = 128

function checkStateHistory(config: Record<OptionKey, unknown>, setBy: Map<OptionKey, Origin>): void {
  const history = config.stateHistory as number
  const origin = setBy.get('stateHistory')
  if (origin !== undefined && history > 0 && history < MIN_STATE_HISTORY) {
    throw new ConfigError(
      `invalid value ${history} for ${origin.name} (from ${origin.source}): expected 0 (archive) or at least ${MIN_STATE_HISTORY}`,
    )
  }
}

function checkBlockGasLimit(config: Record<OptionKey, unknown>, setBy: Map<OptionKey, Origin>): void {
  const target = config.blockGasLimit as bigint
  const origin = setBy.get('blockGasLimit')
  if (origin !== undefined && target > 0n && target < MIN_GAS_LIMIT) {
    throw new ConfigError(
      `invalid value ${target} for ${origin.name} (from ${origin.source}): expected 0 (keep the parent's) or at least ${MIN_GAS_LIMIT}`,
    )
  }
}

const NATS_URL = /^(nats|tls):\/\/[^\s,]+$/
const HTTP_URL = /^https?:\/\/[^\s]+$/
const REDIS_URL = /^rediss?:\/\/[^\s,]+$/

/** A replica needs the stream and the producer; the URLs (and Redis's) are checked here so that a typo stops the start. */
function checkReplication(config: Record<OptionKey, unknown>, setBy: Map<OptionKey, Origin>): void {
  const where = (key: OptionKey, flag: string): string => {
    const origin = setBy.get(key)
    return origin === undefined ? flag : `${origin.name} (from ${origin.source})`
  }
  const streamUrl = config.streamUrl as string | undefined
  if (streamUrl !== undefined && !streamUrl.split(',').every((u) => NATS_URL.test(u.trim()))) {
    throw new ConfigError(`invalid value ${JSON.stringify(streamUrl)} for ${where('streamUrl', '--stream-url')}: expected nats://HOST:PORT (or tls://), comma-separated for a cluster`)
  }
  const redisUrl = config.redisUrl as string | undefined
  if (redisUrl !== undefined && !REDIS_URL.test(redisUrl)) {
    throw new ConfigError(`invalid value ${JSON.stringify(redisUrl)} for ${where('redisUrl', '--redis-url')}: expected redis://HOST:PORT (or rediss://)`)
  }
  const producerUrl = config.producerUrl as string | undefined
  if (producerUrl !== undefined && !HTTP_URL.test(producerUrl)) {
    throw new ConfigError(`invalid value ${JSON.stringify(producerUrl)} for ${where('producerUrl', '--producer-url')}: expected http://HOST:PORT or https://HOST:PORT`)
  }
  if (config.replica === true) {
    if (streamUrl === undefined) throw new ConfigError(`${where('replica', '--replica')} needs --stream-url: the block stream it follows`)
    if (producerUrl === undefined) throw new ConfigError(`${where('replica', '--replica')} needs --producer-url: where its transactions go`)
  } else if (producerUrl !== undefined) {
    throw new ConfigError(`${where('producerUrl', '--producer-url')} is for a replica: add --replica, or leave it out on the producer`)
  }
}

function parseValue(option: Option, raw: unknown, origin: Origin): unknown {
  const value = convert(option, raw, origin.baseDir)
  if (value === INVALID) {
    throw new ConfigError(
      `invalid value ${showValue(raw)} for ${origin.name} (from ${origin.source}): expected ${expectedText(option)}`,
    )
  }
  return value
}

const INVALID = Symbol('invalid')

function convert(option: Option, raw: unknown, baseDir: string): unknown {
  switch (option.type) {
    case 'int': {
      const n = typeof raw === 'number' ? raw : typeof raw === 'string' && INT_PATTERN.test(raw) ? Number(raw) : NaN
      return Number.isSafeInteger(n) && n >= option.min && n <= option.max ? n : INVALID
    }
    case 'number': {
      const n = typeof raw === 'number' ? raw : typeof raw === 'string' && NUMBER_PATTERN.test(raw) ? Number(raw) : NaN
      return Number.isFinite(n) && n >= option.min && n <= option.max ? n : INVALID
    }
    case 'bigint': {
      let n: bigint
      if (typeof raw === 'number' && Number.isSafeInteger(raw)) n = BigInt(raw)
      else if (typeof raw === 'string' && BIGINT_PATTERN.test(raw)) n = BigInt(raw)
      else return INVALID
      return n >= option.min && n <= option.max ? n : INVALID
    }
    case 'bool': {
      if (typeof raw === 'boolean') return raw
      if (typeof raw !== 'string') return INVALID
      const word = raw.toLowerCase()
      return TRUE_WORDS.has(word) ? true : FALSE_WORDS.has(word) ? false : INVALID
    }
    case 'enum': {
      if (typeof raw !== 'string') return INVALID
      const word = raw.toLowerCase()
      return option.values.includes(word) ? word : INVALID
    }
    case 'host':
      return typeof raw === 'string' && (isIP(raw) !== 0 || HOSTNAME_PATTERN.test(raw)) ? raw : INVALID
    case 'path':
      if (raw === null && option.optional) return undefined
      return typeof raw === 'string' && raw !== '' ? resolvePath(raw, baseDir) : INVALID
    case 'string':
      if (raw === null && option.optional) return undefined
      return typeof raw === 'string' && raw !== '' ? raw : INVALID
  }
}

function resolvePath(path: string, baseDir: string): string {
  if (path === '~') return homedir()
  if (path.startsWith('~/')) return resolve(homedir(), path.slice(2))
  return resolve(baseDir, path)
}

function showValue(raw: unknown): string {
  if (typeof raw === 'string') return JSON.stringify(raw)
  if (raw === undefined) return 'undefined'
  if (typeof raw === 'bigint') return raw.toString()
  return JSON.stringify(raw)
}
