// Token buckets kept in Redis, so that every node behind one load balancer spends from the same budget
// per client. One Lua script refills a bucket by the time elapsed on Redis's clock (one clock for all
// nodes) and takes tokens atomically; a bucket that has refilled to full is deleted (a new one starts
// full), so Redis holds only clients that spent recently, and a Redis restarted empty starts everyone
// afresh. Without Redis the caller decides (src/rpc/shared-ratelimit.ts).

import { RedisConnection } from './redis-connection.js'
import type { RedisScript } from './redis-connection.js'

/** What one round trip granted: the tokens taken, and the tokens left in the shared bucket (negative = debt). */
export interface BucketGrant {
  readonly granted: number
  readonly tokens: number
}

/** The shared bucket store the rate limiter leases from. */
export interface SharedBucketStore {
  /**
   * Takes `want` tokens from the bucket `key` (rate/s, burst), or all it holds when that is at least
   * `need`, or nothing. A `need` above the burst is granted from a full bucket and leaves a debt.
   */
  take(key: string, rate: number, burst: number, need: number, want: number): Promise<BucketGrant>
  /** Opens the connection, waiting at most `waitMs` for it (the first calls then find it open). */
  connect(waitMs: number): Promise<void>
  ping(): Promise<void>
  close(): Promise<void>
}

// Hash fields: t = tokens, at = Redis time (ms) of t. Numbers go back as strings: Lua numbers are
// truncated to integers in a reply, and costs may be fractional.
const TAKE_SCRIPT = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local need = tonumber(ARGV[3])
local want = tonumber(ARGV[4])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local tokens = burst
local state = redis.call('HMGET', KEYS[1], 't', 'at')
if state[1] then
  tokens = math.min(burst, tonumber(state[1]) + math.max(0, now - tonumber(state[2])) * rate / 1000)
end
local granted = 0
if tokens >= want then
  granted = want
elseif tokens >= math.min(need, burst) then
  granted = math.max(need, tokens)
end
tokens = tokens - granted
if tokens >= burst then
  redis.call('DEL', KEYS[1])
else
  redis.call('HSET', KEYS[1], 't', tostring(tokens), 'at', tostring(now))
  redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) * 1000 / rate) + 1000)
end
return {tostring(granted), tostring(tokens)}
`

/** How long one command may take by default (--redis-timeout-ms) before the caller treats Redis as unavailable. */
export const REDIS_COMMAND_TIMEOUT_MS = 50

const KEY_PREFIX = 'keel:rl:'
const TAKE: RedisScript = { source: TAKE_SCRIPT }

export class RedisBucketStore implements SharedBucketStore {
  private readonly redis: RedisConnection

  constructor(url: string, timeoutMs = REDIS_COMMAND_TIMEOUT_MS) {
    this.redis = new RedisConnection(url, timeoutMs)
  }

  async take(key: string, rate: number, burst: number, need: number, want: number): Promise<BucketGrant> {
    const reply = await this.redis.script(TAKE, [KEY_PREFIX + key], [String(rate), String(burst), String(need), String(want)])
    const [granted, tokens] = reply as [string, string]
    return { granted: Number(granted), tokens: Number(tokens) }
  }

  connect(waitMs: number): Promise<void> {
    return this.redis.connect(waitMs)
  }

  async ping(): Promise<void> {
    await this.redis.command(['PING'])
  }

  close(): Promise<void> {
    return this.redis.close()
  }
}
