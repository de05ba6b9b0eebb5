// JSON-RPC parameter validation. Every validator accepts any JSON value and either returns a typed
// value or throws an RpcError; nothing here can crash on odd input.
//
// Messages reproduce what geth 1.17 puts on the wire, because client libraries and users compare them:
// geth decodes positional params with encoding/json into hexutil/common types, so a bad argument reads
// "invalid argument <N>: <decoder error>", e.g.
//   invalid argument 0: hex string has length 40, want 64 for common.Hash
//   invalid argument 0: json: cannot unmarshal hex string without 0x prefix into Go value of type common.Address
//   invalid argument 0: json: cannot unmarshal non-string into Go struct field TransactionArgs.gas of type hexutil.Uint64
// Checks geth makes after decoding (in the method body) carry geth's code: -32000 for plain errors
// (e.g. "both gasPrice and (maxFeePerGas or maxPriorityFeePerGas) specified"), -32602 for the filter limits.

import { toChecksumAddress } from '@ethereumjs/util'
import { invalidParams, RpcError, serverError } from '../errors.js'
import { decodeHexDigits, firstNonHex } from '../util/hex.js'

// ---------------------------------------------------------------------------------------------------
// Result types

export type BlockTag = 'latest' | 'earliest' | 'pending' | 'safe' | 'finalized'

/** A block number or a tag (geth rpc.BlockNumber). */
export type BlockRef = { kind: 'number'; number: bigint } | { kind: 'tag'; tag: BlockTag }

/** EIP-1898 block parameter (geth rpc.BlockNumberOrHash). */
export type BlockSelector = BlockRef | { kind: 'hash'; hash: string; requireCanonical: boolean }

export interface AccessListEntry {
  address: string
  storageKeys: string[]
}

export interface AuthorizationEntry {
  chainId: bigint
  address: string
  nonce: bigint
  yParity: bigint
  r: bigint
  s: bigint
}

/** eth_call / eth_estimateGas / eth_createAccessList transaction object (geth TransactionArgs). */
export interface CallRequest {
  from?: string
  /** null: contract creation (also when `to` is absent). */
  to: string | null
  gas?: bigint
  gasPrice?: bigint
  maxFeePerGas?: bigint
  maxPriorityFeePerGas?: bigint
  maxFeePerBlobGas?: bigint
  value?: bigint
  nonce?: bigint
  /** `input`, or `data` when only `data` was given. */
  input?: Uint8Array
  accessList?: AccessListEntry[]
  authorizationList?: AuthorizationEntry[]
  blobVersionedHashes?: string[]
  chainId?: bigint
  type?: bigint
}

export interface AccountOverride {
  balance?: bigint
  nonce?: bigint
  code?: Uint8Array
  /** Replaces the whole storage: slot -> value (both 0x + 64 lowercase hex). */
  state?: Map<string, string>
  /** Patches individual slots. */
  stateDiff?: Map<string, string>
  movePrecompileToAddress?: string
}

/** eth_call 3rd parameter: lowercase address -> override. */
export type StateOverrides = Map<string, AccountOverride>

/** eth_call 4th parameter. */
export interface BlockOverrides {
  number?: bigint
  difficulty?: bigint
  time?: bigint
  gasLimit?: bigint
  feeRecipient?: string
  prevRandao?: string
  baseFeePerGas?: bigint
  blobBaseFee?: bigint
  beaconRoot?: string
  /** EIP-4895 withdrawals (eth_simulateV1 credits them; eth_call and eth_estimateGas refuse them) */
  withdrawals?: Withdrawal[]
}

/** One EIP-4895 withdrawal of a block override (amount in gwei). */
export interface Withdrawal {
  index: bigint
  validatorIndex: bigint
  address: string
  amount: bigint
}

/** eth_getLogs / eth_newFilter criteria, normalised. */
export interface LogFilter {
  blockHash?: string
  fromBlock?: BlockRef
  toBlock?: BlockRef
  /** Empty: any address. */
  addresses: string[]
  /** One entry per position; null: any topic at that position. */
  topics: Array<string[] | null>
}

// ---------------------------------------------------------------------------------------------------
// geth decoder error plumbing

/** Where a value sits: the argument index and, inside an object, geth's Go struct path. */
interface Site {
  arg: number
  /** e.g. "TransactionArgs.gas"; absent for a top-level argument. */
  field?: string
}

const argSite = (arg: number): Site => ({ arg })
const fieldSite = (arg: number, field: string): Site => ({ arg, field })

const argError = (site: Site, reason: string): RpcError => invalidParams(`invalid argument ${site.arg}: ${reason}`)

/** encoding/json's UnmarshalTypeError text. */
function typeError(site: Site, what: string, goType: string): RpcError {
  const into = site.field === undefined ? `Go value of type ${goType}` : `Go struct field ${site.field} of type ${goType}`
  return argError(site, `json: cannot unmarshal ${what} into ${into}`)
}

/** The UnmarshalTypeError of a value `v` in struct field `field` (e.g. "simOpts.validation") of argument `arg`. */
export const fieldTypeError = (arg: number, field: string, v: unknown, goType: string): RpcError =>
  typeError(fieldSite(arg, field), jsonKind(v), goType)

/** The JSON kind name encoding/json uses in its messages. */
export function jsonKind(v: unknown): string {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'array'
  switch (typeof v) {
    case 'string':
      return 'string'
    case 'number':
    case 'bigint':
      return 'number'
    case 'boolean':
      return 'bool'
    default:
      return 'object'
  }
}

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** True for an omitted or null optional argument (geth: nil pointer). */
export const isAbsent = (v: unknown): v is null | undefined => v === undefined || v === null

// hexutil's decoder errors
const ERR_EMPTY_STRING = 'empty hex string'
const ERR_SYNTAX = 'invalid hex string'
const ERR_MISSING_PREFIX = 'hex string without 0x prefix'
const ERR_ODD_LENGTH = 'hex string of odd length'
const ERR_EMPTY_NUMBER = 'hex string "0x"'
const ERR_LEADING_ZERO = 'hex number with leading zero digits'
const ERR_UINT64_RANGE = 'hex number > 64 bits'
const ERR_BIG256_RANGE = 'hex number > 256 bits'

const has0xPrefix = (s: string): boolean => s.length >= 2 && s.charCodeAt(0) === 48 && (s.charCodeAt(1) | 32) === 120

/** A decoded hex text (digits without prefix) or the hexutil error text. */
type Checked = { digits: string } | { error: string }

/** hexutil checkText(input, wantPrefix=true): "" allowed; prefix required; even length. */
function checkText(s: string): Checked {
  if (s.length === 0) return { digits: '' }
  if (!has0xPrefix(s)) return { error: ERR_MISSING_PREFIX }
  const digits = s.slice(2)
  if (digits.length % 2 !== 0) return { error: ERR_ODD_LENGTH }
  return { digits }
}

/** hexutil checkNumberText: "" allowed (zero); prefix required; "0x" and leading zeros rejected. */
function checkNumberText(s: string): Checked {
  if (s.length === 0) return { digits: '' }
  if (!has0xPrefix(s)) return { error: ERR_MISSING_PREFIX }
  const digits = s.slice(2)
  if (digits.length === 0) return { error: ERR_EMPTY_NUMBER }
  if (digits.length > 1 && digits.charCodeAt(0) === 48) return { error: ERR_LEADING_ZERO }
  return { digits }
}

/** hexutil.DecodeUint64 (used for block numbers): returns the value or the error text. */
function decodeUint64Text(s: string): bigint | string {
  if (s.length === 0) return ERR_EMPTY_STRING
  if (!has0xPrefix(s)) return ERR_MISSING_PREFIX
  const digits = s.slice(2)
  if (digits.length === 0) return ERR_EMPTY_NUMBER
  if (digits.length > 1 && digits.charCodeAt(0) === 48) return ERR_LEADING_ZERO
  // strconv.ParseUint checks each digit before the overflow check, and the 17th digit overflows.
  const bad = firstNonHex(digits)
  if (bad !== -1 && bad <= 16) return ERR_SYNTAX
  if (digits.length > 16) return ERR_UINT64_RANGE
  return BigInt('0x' + digits)
}

/** hexutil.Decode (used by the log filter): returns the bytes or the error text. */
function decodeBytesText(s: string): Uint8Array | string {
  if (s.length === 0) return ERR_EMPTY_STRING
  if (!has0xPrefix(s)) return ERR_MISSING_PREFIX
  // encoding/hex reports a bad character before an odd length.
  if (firstNonHex(s, 2) !== -1) return ERR_SYNTAX
  if (s.length % 2 !== 0) return ERR_ODD_LENGTH
  return decodeHexDigits(s, 2)
}

// ---------------------------------------------------------------------------------------------------
// Decoders for geth's JSON types (reused for top-level arguments and object fields)

/** common.Address / common.Hash (hexutil.UnmarshalFixedJSON). Returns 0x + lowercase hex. */
function decodeFixed(v: unknown, site: Site, byteLength: number, goType: string): string {
  if (typeof v !== 'string') return fail(typeError(site, 'non-string', goType))
  const checked = checkText(v)
  if ('error' in checked) return fail(typeError(site, checked.error, goType))
  const { digits } = checked
  if (digits.length !== byteLength * 2) {
    return fail(argError(site, `hex string has length ${digits.length}, want ${byteLength * 2} for ${goType}`))
  }
  if (firstNonHex(digits) !== -1) return fail(typeError(site, ERR_SYNTAX, goType))
  return '0x' + digits.toLowerCase()
}

const decodeAddress = (v: unknown, site: Site): string => decodeFixed(v, site, 20, 'common.Address')
const decodeHash = (v: unknown, site: Site): string => decodeFixed(v, site, 32, 'common.Hash')

/** hexutil.Bytes. */
function decodeBytes(v: unknown, site: Site): Uint8Array {
  const goType = 'hexutil.Bytes'
  if (typeof v !== 'string') return fail(typeError(site, 'non-string', goType))
  const checked = checkText(v)
  if ('error' in checked) return fail(typeError(site, checked.error, goType))
  if (firstNonHex(checked.digits) !== -1) return fail(typeError(site, ERR_SYNTAX, goType))
  return decodeHexDigits(checked.digits)
}

/** hexutil.Big (max 256 bits), hexutil.Uint64 / hexutil.Uint (max 64 bits). */
function decodeNumber(v: unknown, site: Site, maxDigits: 16 | 64, goType: string): bigint {
  if (typeof v !== 'string') return fail(typeError(site, 'non-string', goType))
  const checked = checkNumberText(v)
  if ('error' in checked) return fail(typeError(site, checked.error, goType))
  const { digits } = checked
  if (digits.length > maxDigits) return fail(typeError(site, maxDigits === 16 ? ERR_UINT64_RANGE : ERR_BIG256_RANGE, goType))
  if (firstNonHex(digits) !== -1) return fail(typeError(site, ERR_SYNTAX, goType))
  return digits.length === 0 ? 0n : BigInt('0x' + digits)
}

const decodeBig = (v: unknown, site: Site): bigint => decodeNumber(v, site, 64, '*hexutil.Big')
const decodeU64 = (v: unknown, site: Site): bigint => decodeNumber(v, site, 16, 'hexutil.Uint64')

const MAX_INT64 = (1n << 63n) - 1n
const TAGS: ReadonlySet<string> = new Set<BlockTag>(['latest', 'earliest', 'pending', 'safe', 'finalized'])

/** rpc.BlockNumber. Any non-string reaches DecodeUint64 as raw JSON text, hence "without 0x prefix". */
function decodeBlockRef(v: unknown, site: Site, tooLarge = 'block number larger than int64'): BlockRef {
  if (typeof v !== 'string') return fail(argError(site, ERR_MISSING_PREFIX))
  if (TAGS.has(v)) return { kind: 'tag', tag: v as BlockTag }
  const n = decodeUint64Text(v)
  if (typeof n === 'string') return fail(argError(site, n))
  if (n > MAX_INT64) return fail(argError(site, tooLarge))
  return { kind: 'number', number: n }
}

/** Go bool: null is a no-op (false); any other non-boolean is a type error. */
function decodeBool(v: unknown, site: Site): boolean {
  if (v === null || v === undefined) return false
  if (typeof v !== 'boolean') return fail(typeError(site, jsonKind(v), 'bool'))
  return v
}

/**
 * encoding/json matches an object's keys to a struct's fields without regard to case ("From" is
 * "from"): the field name a key stands for, or the key itself when it names none.
 */
function fieldNamed(key: string, fields: ReadonlyMap<string, string>): string {
  return fieldOf(key, fields) ?? key
}

/** The field `key` stands for (its own name first: the common case needs no lower-casing), if any. */
const fieldOf = (key: string, fields: ReadonlyMap<string, string>): string | undefined => fields.get(key) ?? fields.get(key.toLowerCase())

/** Each field by its own name (the common case: one lookup, no lower-casing) and by its lower-case name. */
export const fieldsOf = (...names: string[]): ReadonlyMap<string, string> =>
  new Map(names.flatMap((name): [string, string][] => [[name, name], [name.toLowerCase(), name]]))

/**
 * An object's values under the field names its keys stand for, as encoding/json decodes it into a
 * struct: keys match fields in any case, a later key overwrites an earlier one for the same field, and
 * keys that name no field are dropped.
 */
export function goFields(v: Record<string, unknown>, fields: ReadonlyMap<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const key in v) {
    const field = fieldOf(key, fields)
    if (field !== undefined) out[field] = v[key]
  }
  return out
}

function fail(err: RpcError): never {
  throw err
}

// ---------------------------------------------------------------------------------------------------
// Public validators for positional arguments

/** Checks the argument count the way geth's positional decoder does. */
export function expectParams(params: readonly unknown[], min: number, max: number): void {
  if (params.length > max) throw invalidParams(`too many arguments, want at most ${max}`)
  if (params.length < min) throw invalidParams(`missing value for required argument ${params.length}`)
}

/** Throws geth's "missing value" error when a required argument was omitted. */
function required(v: unknown, i: number): void {
  if (v === undefined) throw invalidParams(`missing value for required argument ${i}`)
}

/** 0x + 40 hex digits (any case, checksum not enforced). Returns lowercase. */
export function address(v: unknown, i: number): string {
  required(v, i)
  return decodeAddress(v, argSite(i))
}

/** 0x + 64 hex digits. Returns lowercase. */
export function hash32(v: unknown, i: number): string {
  required(v, i)
  return decodeHash(v, argSite(i))
}

/**
 * eth_getStorageValues' request: address -> storage keys. geth decodes it as map[common.Address][]common.Hash
 * (JSON null is an empty map); the keys are taken as execution-apis' schema gives them (bytesMax32: a
 * short key such as "0x0" is left-padded, where geth's common.Hash would refuse it).
 */
export function storageRequests(v: unknown, i: number): { address: string; slots: Uint8Array[] }[] {
  required(v, i)
  if (v === null) return []
  const site = argSite(i)
  if (typeof v !== 'object' || Array.isArray(v)) return fail(typeError(site, jsonKind(v), 'map[common.Address][]common.Hash'))
  const out: { address: string; slots: Uint8Array[] }[] = []
  for (const [key, list] of Object.entries(v as Record<string, unknown>)) {
    decodeFixedKey(key, site, 20, 'Address')
    if (list !== null && !Array.isArray(list)) return fail(typeError(site, jsonKind(list), '[]common.Hash'))
    const slots: Uint8Array[] = list === null ? [] : new Array(list.length)
    for (let k = 0; k < slots.length; k++) slots[k] = decodeSlotKey((list as unknown[])[k], site)
    // keyed as the client wrote the address (checksummed or not), as execution-apis' example answers
    out.push({ address: key, slots })
  }
  return out
}

/** A storage key of up to 32 bytes (0x optional), left-padded. */
function decodeSlotKey(v: unknown, site: Site): Uint8Array {
  if (typeof v !== 'string') return fail(typeError(site, 'non-string', 'common.Hash'))
  const digits = has0xPrefix(v) ? v.slice(2) : v
  if (digits.length > 64) return fail(argError(site, `hex string has length ${digits.length}, want at most 64 for common.Hash`))
  if (firstNonHex(digits) !== -1) return fail(typeError(site, ERR_SYNTAX, 'common.Hash'))
  return decodeHexDigits(digits.padStart(64, '0'))
}

/** DATA: 0x + even number of hex digits ("" and "0x" are empty). */
export function data(v: unknown, i: number): Uint8Array {
  required(v, i)
  return decodeBytes(v, argSite(i))
}

/** QUANTITY up to 256 bits (geth *hexutil.Big). */
export function quantity(v: unknown, i: number): bigint {
  required(v, i)
  return decodeBig(v, argSite(i))
}

/** QUANTITY up to 64 bits (geth hexutil.Uint64). */
export function uint64(v: unknown, i: number): bigint {
  required(v, i)
  return decodeU64(v, argSite(i))
}

/**
 * A count given as hex or decimal, as a JSON number or a string (geth math.HexOrDecimal64: eth_feeHistory's
 * block count, which some clients send as a plain number).
 */
export function hexOrDecimal64(v: unknown, i: number): bigint {
  required(v, i)
  let text: string
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return BigInt(v)
  if (typeof v === 'string') text = v
  else text = JSON.stringify(v)
  // strconv.ParseUint: digits only, base 16 after 0x/0X, base 10 otherwise; "" is 0
  const hex = text.startsWith('0x') || text.startsWith('0X')
  const digits = hex ? text.slice(2) : text
  const valid = text === '' || (hex ? /^[0-9a-fA-F]+$/.test(digits) : /^[0-9]+$/.test(digits))
  const n = text === '' ? 0n : valid ? BigInt(hex ? `0x${digits}` : digits) : -1n
  if (n < 0n || n > 0xffffffffffffffffn) throw argError(argSite(i), `invalid hex or decimal integer ${JSON.stringify(text)}`)
  return n
}

/** QUANTITY up to 64 bits used as an index or count (geth hexutil.Uint); returns a number when safe. */
export function uint(v: unknown, i: number): number {
  required(v, i)
  const n = decodeNumber(v, argSite(i), 16, 'hexutil.Uint')
  // Indexes beyond 2^53 cannot match anything; saturate instead of losing precision silently.
  return n > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(n)
}

/** A Go int (encoding/json: a JSON number without a fraction), e.g. debug_storageRangeAt's txIndex. */
export function goInt(v: unknown, i: number): number {
  required(v, i)
  if (typeof v !== 'number') throw typeError(argSite(i), jsonKind(v), 'int')
  if (!Number.isSafeInteger(v)) throw typeError(argSite(i), `number ${v}`, 'int')
  return v
}

export function bool(v: unknown, i: number): boolean {
  required(v, i)
  return decodeBool(v, argSite(i))
}

/** A block number or tag (no hash), e.g. eth_getBlockByNumber's first argument. */
export function blockTag(v: unknown, i: number): BlockRef {
  required(v, i)
  return decodeBlockRef(v, argSite(i))
}

/**
 * Otterscan's block parameters: a JSON number (ethers sends block numbers so to the ots_ methods), a
 * hex number or a tag, as Erigon and anvil accept them.
 */
export function lenientBlockTag(v: unknown, i: number): BlockRef {
  if (typeof v === 'number') return { kind: 'number', number: BigInt(jsonIndex(v, i)) }
  return blockTag(v, i)
}

/** As lenientBlockTag, with a block hash also accepted (ots_hasCode). */
export function lenientBlockSelector(v: unknown, i: number): BlockSelector {
  if (typeof v === 'number') return { kind: 'number', number: BigInt(jsonIndex(v, i)) }
  return blockSelector(v, i)
}

/** A count or index sent as a JSON number or a hex QUANTITY (Otterscan's page numbers, sizes and nonces). */
export function lenientUint(v: unknown, i: number): number {
  if (typeof v === 'number') return jsonIndex(v, i)
  return uint(v, i)
}

function jsonIndex(v: number, i: number): number {
  if (!Number.isSafeInteger(v) || v < 0) throw invalidParams(`invalid argument ${i}: ${v} is not a non-negative integer`)
  return v
}

/** The 'latest' block tag, as the parsers return it. */
export const LATEST: BlockRef = Object.freeze({ kind: 'tag', tag: 'latest' }) as BlockRef

/**
 * EIP-1898 block parameter: a tag, a number, a 32-byte hash, `{blockNumber}` or
 * `{blockHash, requireCanonical?}`. With `optional`, an omitted or null argument means 'latest'.
 */
export function blockSelector(v: unknown, i: number, opts: { optional?: boolean } = {}): BlockSelector {
  const site = argSite(i)
  if (v === undefined || v === null) {
    if (opts.optional) return LATEST
    if (v === undefined) throw invalidParams(`missing value for required argument ${i}`)
    throw serverError('invalid arguments; neither block nor hash specified')
  }
  if (typeof v === 'string') {
    if (TAGS.has(v)) return { kind: 'tag', tag: v as BlockTag }
    if (v.length === 66) {
      // geth: common.Hash.UnmarshalText, whose errors are not wrapped.
      if (!has0xPrefix(v)) return fail(argError(site, ERR_MISSING_PREFIX))
      if (firstNonHex(v, 2) !== -1) return fail(argError(site, ERR_SYNTAX))
      return { kind: 'hash', hash: v.toLowerCase(), requireCanonical: false }
    }
    return decodeBlockRef(v, site, 'blocknumber too high')
  }
  if (!isObject(v)) return fail(typeError(site, jsonKind(v), 'string'))
  // geth first decodes the object form; on any failure it retries as a string, which reports this.
  const objectFailure = (): never => fail(typeError(site, 'object', 'string'))
  let number: BlockRef | undefined
  let hash: string | undefined
  let requireCanonical = false
  try {
    if (!isAbsent(v.blockNumber)) number = decodeBlockRef(v.blockNumber, site)
    if (!isAbsent(v.blockHash)) hash = decodeHash(v.blockHash, site)
    requireCanonical = decodeBool(v.requireCanonical, site)
  } catch {
    return objectFailure()
  }
  if (number !== undefined && hash !== undefined) {
    return fail(argError(site, 'cannot specify both BlockHash and BlockNumber, choose one or the other'))
  }
  if (hash !== undefined) return { kind: 'hash', hash, requireCanonical }
  if (number !== undefined) return number
  throw serverError('invalid arguments; neither block nor hash specified')
}

// ---------------------------------------------------------------------------------------------------
// Transaction call object

function decodeAccessList(v: unknown, arg: number, path: string): AccessListEntry[] {
  if (!Array.isArray(v)) return fail(typeError(fieldSite(arg, path), jsonKind(v), 'types.AccessList'))
  const out: AccessListEntry[] = new Array(v.length)
  for (let k = 0; k < v.length; k++) {
    const item = v[k]
    if (!isObject(item)) return fail(typeError(fieldSite(arg, path), jsonKind(item), 'types.AccessTuple'))
    if (isAbsent(item.address)) return fail(argError(argSite(arg), "missing required field 'address' for AccessTuple"))
    const address = decodeAddress(item.address, fieldSite(arg, 'AccessTuple.address'))
    const keys = item.storageKeys
    if (isAbsent(keys)) return fail(argError(argSite(arg), "missing required field 'storageKeys' for AccessTuple"))
    if (!Array.isArray(keys)) return fail(typeError(fieldSite(arg, 'AccessTuple.storageKeys'), jsonKind(keys), '[]common.Hash'))
    const storageKeys: string[] = new Array(keys.length)
    for (let j = 0; j < keys.length; j++) storageKeys[j] = decodeHash(keys[j], fieldSite(arg, 'AccessTuple.storageKeys'))
    out[k] = { address, storageKeys }
  }
  return out
}

const AUTHORIZATION_FIELDS = ['chainId', 'address', 'nonce', 'yParity', 'r', 's'] as const

function decodeAuthorizationList(v: unknown, arg: number, path: string): AuthorizationEntry[] {
  if (!Array.isArray(v)) return fail(typeError(fieldSite(arg, path), jsonKind(v), '[]types.SetCodeAuthorization'))
  const out: AuthorizationEntry[] = new Array(v.length)
  for (let k = 0; k < v.length; k++) {
    const item = v[k]
    if (!isObject(item)) return fail(typeError(fieldSite(arg, path), jsonKind(item), 'types.SetCodeAuthorization'))
    for (const name of AUTHORIZATION_FIELDS) {
      if (isAbsent(item[name])) {
        return fail(argError(argSite(arg), `missing required field '${name}' for SetCodeAuthorization`))
      }
    }
    const at = (name: string): Site => fieldSite(arg, `SetCodeAuthorization.${name}`)
    out[k] = {
      chainId: decodeNumber(item.chainId, at('chainId'), 64, '*hexutil.U256'),
      address: decodeAddress(item.address, at('address')),
      nonce: decodeU64(item.nonce, at('nonce')),
      yParity: decodeU64(item.yParity, at('yParity')),
      r: decodeNumber(item.r, at('r'), 64, '*hexutil.U256'),
      s: decodeNumber(item.s, at('s'), 64, '*hexutil.U256'),
    }
  }
  return out
}

function decodeHashList(v: unknown, arg: number, path: string): string[] {
  if (!Array.isArray(v)) return fail(typeError(fieldSite(arg, path), jsonKind(v), '[]common.Hash'))
  const out: string[] = new Array(v.length)
  for (let k = 0; k < v.length; k++) out[k] = decodeHash(v[k], fieldSite(arg, path))
  return out
}

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false
  for (let k = 0; k < a.length; k++) if (a[k] !== b[k]) return false
  return true
}

const TRANSACTION_ARGS_FIELDS = fieldsOf(
  'from', 'to', 'gas', 'gasPrice', 'maxFeePerGas', 'maxPriorityFeePerGas', 'maxFeePerBlobGas', 'value', 'nonce',
  'data', 'input', 'accessList', 'authorizationList', 'blobVersionedHashes', 'chainId', 'type',
)
const ACCOUNT_OVERRIDE_FIELDS = fieldsOf('nonce', 'code', 'balance', 'state', 'stateDiff', 'movePrecompileToAddress')
const BLOCK_OVERRIDE_FIELDS = fieldsOf(
  'number', 'difficulty', 'time', 'gasLimit', 'feeRecipient', 'coinbase', 'prevRandao', 'baseFeePerGas', 'blobBaseFee', 'beaconRoot',
  'withdrawals',
)
const WITHDRAWAL_FIELDS = fieldsOf('index', 'validatorIndex', 'address', 'amount')

/**
 * The transaction object of eth_call, eth_estimateGas and eth_createAccessList (GenericTransaction).
 * Unknown fields are ignored, as geth does. With `chainId`, a mismatching `chainId` field is rejected.
 */
export function callRequest(v: unknown, i: number, opts: { chainId?: bigint } = {}): CallRequest {
  required(v, i)
  const out: CallRequest = { to: null }
  // geth's TransactionArgs is a value type: JSON null decodes to an empty object.
  if (v === null) return out
  if (!isObject(v)) return fail(typeError(argSite(i), jsonKind(v), 'ethapi.TransactionArgs'))
  let dataField: Uint8Array | undefined
  let inputField: Uint8Array | undefined
  for (const name in v) {
    const value = v[name]
    if (value === null || value === undefined) continue // nil pointer: as if absent
    const key = fieldNamed(name, TRANSACTION_ARGS_FIELDS)
    const site = fieldSite(i, `TransactionArgs.${key}`)
    switch (key) {
      case 'from':
        out.from = decodeAddress(value, site)
        break
      case 'to':
        out.to = decodeAddress(value, site)
        break
      case 'gas':
        out.gas = decodeU64(value, site)
        break
      case 'gasPrice':
        out.gasPrice = decodeBig(value, site)
        break
      case 'maxFeePerGas':
        out.maxFeePerGas = decodeBig(value, site)
        break
      case 'maxPriorityFeePerGas':
        out.maxPriorityFeePerGas = decodeBig(value, site)
        break
      case 'maxFeePerBlobGas':
        out.maxFeePerBlobGas = decodeBig(value, site)
        break
      case 'value':
        out.value = decodeBig(value, site)
        break
      case 'nonce':
        out.nonce = decodeU64(value, site)
        break
      case 'data':
        dataField = decodeBytes(value, site)
        break
      case 'input':
        inputField = decodeBytes(value, site)
        break
      case 'accessList':
        out.accessList = decodeAccessList(value, i, site.field!)
        break
      case 'authorizationList':
        out.authorizationList = decodeAuthorizationList(value, i, site.field!)
        break
      case 'blobVersionedHashes':
        out.blobVersionedHashes = decodeHashList(value, i, site.field!)
        break
      case 'chainId':
        out.chainId = decodeBig(value, site)
        break
      case 'type':
        out.type = decodeU64(value, site)
        break
    }
  }
  if (out.gasPrice !== undefined && (out.maxFeePerGas !== undefined || out.maxPriorityFeePerGas !== undefined)) {
    throw serverError('both gasPrice and (maxFeePerGas or maxPriorityFeePerGas) specified')
  }
  if (dataField !== undefined && inputField !== undefined && !bytesEqual(dataField, inputField)) {
    throw serverError('both "data" and "input" are set and not equal. Please use "input" to pass transaction call data')
  }
  const input = inputField ?? dataField
  if (input !== undefined) out.input = input
  if (opts.chainId !== undefined && out.chainId !== undefined && out.chainId !== opts.chainId) {
    throw serverError(`chainId does not match node's (have=${out.chainId}, want=${opts.chainId})`)
  }
  return out
}

// ---------------------------------------------------------------------------------------------------
// eth_call overrides

/** Map key of a Go map with common.Address/common.Hash keys (UnmarshalText: errors are not wrapped). */
function decodeFixedKey(key: string, site: Site, byteLength: number, typeName: string): string {
  const checked = checkText(key)
  if ('error' in checked) return fail(argError(site, checked.error))
  if (checked.digits.length !== byteLength * 2) {
    return fail(argError(site, `hex string has length ${checked.digits.length}, want ${byteLength * 2} for ${typeName}`))
  }
  if (firstNonHex(checked.digits) !== -1) return fail(argError(site, ERR_SYNTAX))
  return '0x' + checked.digits.toLowerCase()
}

function decodeStorageMap(v: unknown, arg: number, path: string): Map<string, string> {
  if (!isObject(v)) return fail(typeError(fieldSite(arg, path), jsonKind(v), 'map[common.Hash]common.Hash'))
  const out = new Map<string, string>()
  for (const key in v) {
    const slot = decodeFixedKey(key, argSite(arg), 32, 'Hash')
    out.set(slot, decodeHash(v[key], fieldSite(arg, path)))
  }
  return out
}

/** eth_call's third argument: `{ [address]: { balance, nonce, code, state, stateDiff } }`. Absent: undefined. */
export function stateOverrides(v: unknown, i: number): StateOverrides | undefined {
  if (isAbsent(v)) return undefined
  if (!isObject(v)) return fail(typeError(argSite(i), jsonKind(v), 'override.StateOverride'))
  const out: StateOverrides = new Map()
  for (const key in v) {
    const addr = decodeFixedKey(key, argSite(i), 20, 'Address')
    const account = v[key]
    const override: AccountOverride = {}
    if (isObject(account)) {
      for (const name in account) {
        const value = account[name]
        if (isAbsent(value)) continue
        const field = fieldNamed(name, ACCOUNT_OVERRIDE_FIELDS)
        const site = fieldSite(i, `OverrideAccount.${field}`)
        switch (field) {
          case 'nonce':
            override.nonce = decodeU64(value, site)
            break
          case 'code':
            override.code = decodeBytes(value, site)
            break
          case 'balance':
            override.balance = decodeBig(value, site)
            break
          case 'state':
            override.state = decodeStorageMap(value, i, site.field!)
            break
          case 'stateDiff':
            override.stateDiff = decodeStorageMap(value, i, site.field!)
            break
          case 'movePrecompileToAddress':
            override.movePrecompileToAddress = decodeAddress(value, site)
            break
        }
      }
    } else if (account !== null) {
      return fail(typeError(argSite(i), jsonKind(account), 'override.OverrideAccount'))
    }
    if (override.state !== undefined && override.stateDiff !== undefined) {
      throw serverError(`account ${toChecksumAddress(addr)} has both 'state' and 'stateDiff'`)
    }
    out.set(addr, override)
  }
  return out
}

/** eth_call's fourth argument. `coinbase` is accepted as an alias of `feeRecipient`. Absent: undefined. */
export function blockOverrides(v: unknown, i: number): BlockOverrides | undefined {
  if (isAbsent(v)) return undefined
  if (!isObject(v)) return fail(typeError(argSite(i), jsonKind(v), 'override.BlockOverrides'))
  const out: BlockOverrides = {}
  let coinbase: string | undefined
  for (const name in v) {
    const value = v[name]
    if (isAbsent(value)) continue
    const key = fieldNamed(name, BLOCK_OVERRIDE_FIELDS)
    const site = fieldSite(i, `BlockOverrides.${key}`)
    switch (key) {
      case 'number':
        out.number = decodeBig(value, site)
        break
      case 'difficulty':
        out.difficulty = decodeBig(value, site)
        break
      case 'time':
        out.time = decodeU64(value, site)
        break
      case 'gasLimit':
        out.gasLimit = decodeU64(value, site)
        break
      case 'feeRecipient':
        out.feeRecipient = decodeAddress(value, site)
        break
      case 'coinbase':
        coinbase = decodeAddress(value, site)
        break
      case 'prevRandao':
        out.prevRandao = decodeHash(value, site)
        break
      case 'baseFeePerGas':
        out.baseFeePerGas = decodeBig(value, site)
        break
      case 'blobBaseFee':
        out.blobBaseFee = decodeBig(value, site)
        break
      case 'beaconRoot':
        out.beaconRoot = decodeHash(value, site)
        break
      case 'withdrawals':
        out.withdrawals = decodeWithdrawals(value, i)
        break
    }
  }
  if (out.feeRecipient === undefined && coinbase !== undefined) out.feeRecipient = coinbase
  return out
}

const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000'

/** geth's types.Withdrawals (JSON from gencodec: quantities as hex). */
function decodeWithdrawals(v: unknown, i: number): Withdrawal[] {
  if (!Array.isArray(v)) return fail(typeError(fieldSite(i, 'BlockOverrides.withdrawals'), jsonKind(v), 'types.Withdrawals'))
  return v.map((w) => {
    if (!isObject(w)) return fail(typeError(fieldSite(i, 'BlockOverrides.withdrawals'), jsonKind(w), 'types.Withdrawal'))
    // no field is required: an absent one is zero, as in geth's generated decoder
    const f = goFields(w, WITHDRAWAL_FIELDS)
    const u64 = (name: string): bigint => (isAbsent(f[name]) ? 0n : decodeU64(f[name], fieldSite(i, `Withdrawal.${name}`)))
    return {
      index: u64('index'),
      validatorIndex: u64('validatorIndex'),
      address: isAbsent(f.address) ? ZERO_ADDRESS : decodeAddress(f.address, fieldSite(i, 'Withdrawal.address')),
      amount: u64('amount'),
    }
  })
}

// ---------------------------------------------------------------------------------------------------
// Log filter

/** geth's limit on topic positions (LOG0..LOG4). */
export const MAX_TOPICS = 4
/** geth's limit on alternatives inside one topic position while decoding. */
const MAX_SUB_TOPICS = 1000
/** geth --rpc.logquerylimit default: addresses, or alternatives per topic position. */
export const DEFAULT_LOG_QUERY_LIMIT = 1000

function decodeFilterAddress(s: string): string | { error: string } {
  const b = decodeBytesText(s)
  if (typeof b === 'string') return { error: b }
  if (b.length !== 20) return { error: `hex has invalid length ${b.length} after decoding; expected 20 for address` }
  return s.toLowerCase()
}

function decodeTopic(s: string, site: Site): string {
  const b = decodeBytesText(s)
  if (typeof b === 'string') return fail(argError(site, b))
  if (b.length !== 32) return fail(argError(site, `hex has invalid length ${b.length} after decoding; expected 32 for topic`))
  return s.toLowerCase()
}

/**
 * eth_getLogs / eth_newFilter / logs-subscription criteria (geth filters.FilterCriteria).
 * `logQueryLimit` (default 1000, 0 = unlimited) caps addresses and alternatives per topic position.
 */
export function logFilter(v: unknown, i: number, opts: { logQueryLimit?: number } = {}): LogFilter {
  required(v, i)
  const site = argSite(i)
  const out: LogFilter = { addresses: [], topics: [] }
  if (v === null) return out
  if (!isObject(v)) return fail(typeError(site, jsonKind(v), 'filters.input'))
  let rawAddresses: unknown
  let rawTopics: unknown
  for (const key in v) {
    const value = v[key]
    if (isAbsent(value)) continue
    switch (key) {
      case 'blockHash':
        out.blockHash = decodeHash(value, fieldSite(i, 'input.blockHash'))
        break
      case 'fromBlock':
        out.fromBlock = decodeBlockRef(value, site)
        break
      case 'toBlock':
        out.toBlock = decodeBlockRef(value, site)
        break
      case 'address':
        rawAddresses = value
        break
      case 'topics':
        if (!Array.isArray(value)) return fail(typeError(fieldSite(i, 'input.topics'), jsonKind(value), '[]interface {}'))
        rawTopics = value
        break
    }
  }
  if (out.blockHash !== undefined && (out.fromBlock !== undefined || out.toBlock !== undefined)) {
    return fail(argError(site, 'cannot specify both BlockHash and FromBlock/ToBlock, choose one or the other'))
  }
  if (rawAddresses !== undefined) {
    if (typeof rawAddresses === 'string') {
      const a = decodeFilterAddress(rawAddresses)
      if (typeof a !== 'string') return fail(argError(site, `invalid address: ${a.error}`))
      out.addresses = [a]
    } else if (Array.isArray(rawAddresses)) {
      const addresses: string[] = new Array(rawAddresses.length)
      for (let k = 0; k < rawAddresses.length; k++) {
        const item: unknown = rawAddresses[k]
        if (typeof item !== 'string') return fail(argError(site, `non-string address at index ${k}`))
        const a = decodeFilterAddress(item)
        if (typeof a !== 'string') return fail(argError(site, `invalid address at index ${k}: ${a.error}`))
        addresses[k] = a
      }
      out.addresses = addresses
    } else {
      return fail(argError(site, 'invalid addresses in query'))
    }
  }
  if (rawTopics !== undefined) {
    const topics = rawTopics as unknown[]
    if (topics.length > MAX_TOPICS) return fail(argError(site, 'exceed max topics'))
    for (let k = 0; k < topics.length; k++) {
      const t = topics[k]
      if (t === null || t === undefined) {
        out.topics.push(null)
      } else if (typeof t === 'string') {
        out.topics.push([decodeTopic(t, site)])
      } else if (Array.isArray(t)) {
        if (t.length > MAX_SUB_TOPICS) return fail(argError(site, 'exceed max topics'))
        let alternatives: string[] | null = []
        for (const alt of t as unknown[]) {
          // A null alternative matches anything; geth stops reading the position there.
          if (alt === null || alt === undefined) {
            alternatives = null
            break
          }
          if (typeof alt !== 'string') return fail(argError(site, 'invalid topic(s)'))
          alternatives.push(decodeTopic(alt, site))
        }
        out.topics.push(alternatives)
      } else {
        return fail(argError(site, 'invalid topic(s)'))
      }
    }
  }
  const limit = opts.logQueryLimit ?? DEFAULT_LOG_QUERY_LIMIT
  if (limit > 0) {
    let exceeded = out.addresses.length > limit
    for (const position of out.topics) if (position !== null && position.length > limit) exceeded = true
    if (exceeded) throw invalidParams('exceed max addresses or topics per search position')
  }
  return out
}
