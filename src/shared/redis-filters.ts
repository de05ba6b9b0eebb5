// Polling filters kept in Redis, so that a filter made through one node is polled through any node
// behind the same load balancer. A filter is one hash (kind, the criteria as the caller encoded them,
// the cursor) that expires after the filter timeout without a poll. A poll moves the cursor to the
// polling node's head in one script, so each change is handed out once across nodes: a node behind the
// cursor hands out nothing and never moves it back. Pending-transaction hashes are one Redis stream per
// chain, appended by the producer's node only (it admits every transaction); a pending filter's cursor is
// a stream entry id, so each hash reaches each filter once whichever node polls.

import { RedisConnection } from './redis-connection.js'
import type { RedisScript } from './redis-connection.js'

export type StoredFilterKind = 'logs' | 'blocks' | 'pendingTransactions'

export type StoredFilterPoll =
  /** block numbers: the changes are the blocks after `after` up to `upTo` (none when equal) */
  | { kind: 'logs' | 'blocks'; spec: string; after: bigint; upTo: bigint }
  | { kind: 'pendingTransactions'; spec: string; hashes: string[] }

/**
 * Stream entries kept (about; Redis trims whole nodes): each entry is the hashes the producer admitted in
 * one turn of its event loop, so this keeps at least the last 10,000 admissions' worth.
 */
const PENDING_STREAM_ENTRIES = 10_000
/** Entries one poll takes at most; a filter further behind gets the rest on its next polls. */
const PENDING_ENTRIES_PER_POLL = 1_000

const KIND_CODE: Record<StoredFilterKind, string> = { logs: 'l', blocks: 'b', pendingTransactions: 'p' }
const KIND_OF: Record<string, StoredFilterKind> = { l: 'logs', b: 'blocks', p: 'pendingTransactions' }

// KEYS: filter, pending stream. ARGV: kind code, spec, cursor (block number), ttl ms.
const INSTALL: RedisScript = {
  source: `
local cursor = ARGV[3]
if ARGV[1] == 'p' then
  local last = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)
  cursor = (last[1] and last[1][1]) or '0-0'
end
redis.call('HSET', KEYS[1], 'k', ARGV[1], 's', ARGV[2], 'c', cursor)
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
`,
}

// KEYS: filter, pending stream. ARGV: head (decimal), ttl ms, pending entries per poll.
// Answers nil for an unknown filter, else {kind, spec, cursor before, cursor after, hashes...}.
const POLL: RedisScript = {
  source: `
local f = redis.call('HMGET', KEYS[1], 'k', 's', 'c')
if not f[1] then return false end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
if f[1] == 'p' then
  local entries = redis.call('XRANGE', KEYS[2], '(' .. f[3], '+', 'COUNT', ARGV[3])
  local out = {f[1], f[2], f[3], f[3]}
  if #entries > 0 then
    out[4] = entries[#entries][1]
    redis.call('HSET', KEYS[1], 'c', out[4])
    for _, entry in ipairs(entries) do out[#out + 1] = entry[2][2] end
  end
  return out
end
-- block numbers are decimal strings, exact as Lua numbers below 2^53
if tonumber(ARGV[1]) > tonumber(f[3]) then
  redis.call('HSET', KEYS[1], 'c', ARGV[1])
  return {f[1], f[2], f[3], ARGV[1]}
end
return {f[1], f[2], f[3], f[3]}
`,
}

// KEYS: filter. ARGV: ttl ms. Answers nil or {kind, spec}.
const READ: RedisScript = {
  source: `
local f = redis.call('HMGET', KEYS[1], 'k', 's')
if not f[1] then return false end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return f
`,
}

export class RedisFilterStore {
  private readonly redis: RedisConnection
  private readonly prefix: string
  private readonly pendingKey: string

  constructor(url: string, chainId: number, timeoutMs: number) {
    this.redis = new RedisConnection(url, timeoutMs)
    this.prefix = `keel:filter:${chainId}:`
    this.pendingKey = `keel:pending:${chainId}`
  }

  async install(id: string, kind: StoredFilterKind, spec: string, head: bigint, ttlMs: number): Promise<void> {
    await this.redis.script(INSTALL, [this.prefix + id, this.pendingKey], [KIND_CODE[kind], spec, head.toString(), String(ttlMs)])
  }

  /** The filter's changes since its last poll through any node, its cursor moved past them. */
  async poll(id: string, head: bigint, ttlMs: number): Promise<StoredFilterPoll | undefined> {
    const reply = (await this.redis.script(POLL, [this.prefix + id, this.pendingKey], [head.toString(), String(ttlMs), String(PENDING_ENTRIES_PER_POLL)])) as string[] | null
    if (reply === null) return undefined
    const [code, spec, before, after, ...entries] = reply
    const kind = KIND_OF[code]
    if (kind === undefined) throw new Error(`unknown filter kind ${code} in Redis`)
    if (kind === 'pendingTransactions') return { kind, spec, hashes: entries.flatMap((entry) => entry.split(',')) }
    return { kind, spec, after: BigInt(before), upTo: BigInt(after) }
  }

  /** The filter's kind and spec, its expiry pushed back as by a poll. */
  async read(id: string, ttlMs: number): Promise<{ kind: StoredFilterKind; spec: string } | undefined> {
    const reply = (await this.redis.script(READ, [this.prefix + id], [String(ttlMs)])) as [string, string] | null
    if (reply === null) return undefined
    const kind = KIND_OF[reply[0]]
    if (kind === undefined) throw new Error(`unknown filter kind ${reply[0]} in Redis`)
    return { kind, spec: reply[1] }
  }

  async remove(id: string): Promise<boolean> {
    return Number(await this.redis.command(['DEL', this.prefix + id])) === 1
  }

  /** Appends hashes the producer admitted, as one stream entry. */
  async publishPending(hashes: readonly string[]): Promise<void> {
    await this.redis.command(['XADD', this.pendingKey, 'MAXLEN', '~', String(PENDING_STREAM_ENTRIES), '*', 'h', hashes.join(',')])
  }

  connect(waitMs: number): Promise<void> {
    return this.redis.connect(waitMs)
  }

  close(): Promise<void> {
    return this.redis.close()
  }
}
