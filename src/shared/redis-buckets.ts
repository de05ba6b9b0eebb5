// Token buckets kept in Redis, so that every node behind one load balancer spends from the same budget
// per client. One Lua script refills a bucket by the time elapsed on Redis's clock (one clock for all
// nodes) and takes tokens atomically; a bucket that has refilled to full is deleted (a new one starts
// full), so Redis holds only clients that spent recently, and a Redis restarted empty starts everyone
// afresh. The connection never queues a command while down and gives up on one after a short timeout:
// the caller decides what to do without Redis (src/rpc/shared-ratelimit.ts).

import { createClient } from 'redis'

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

/**
 * How long one command may take by default (--redis-timeout-ms) before the caller treats Redis as
 * unavailable. Enforced here: node-redis's
 * own command timeout (an AbortSignal.timeout) was seen never to fire on Node 20 against a stalled server.
 */
export const REDIS_COMMAND_TIMEOUT_MS = 50

const KEY_PREFIX = 'keel:rl:'

/** The part of the node-redis client used here. */
interface Client {
  sendCommand(args: string[]): Promise<unknown>
  close(): Promise<void>
  destroy(): void
}

export class RedisBucketStore implements SharedBucketStore {
  private client: Client | undefined
  private sha: string | undefined
  private closed = false
  private connecting: Promise<unknown> | undefined

  constructor(
    private readonly url: string,
    private readonly timeoutMs = REDIS_COMMAND_TIMEOUT_MS,
  ) {}

  async take(key: string, rate: number, burst: number, need: number, want: number): Promise<BucketGrant> {
    const client = this.connected()
    const args = [String(rate), String(burst), String(need), String(want)]
    let reply: unknown
    try {
      this.sha ??= String(await client.sendCommand(['SCRIPT', 'LOAD', TAKE_SCRIPT]))
      reply = await client.sendCommand(['EVALSHA', this.sha, '1', KEY_PREFIX + key, ...args])
    } catch (err) {
      // A Redis restarted empty has forgotten the script: EVAL loads it again.
      if (!String((err as Error).message).startsWith('NOSCRIPT')) throw err
      reply = await client.sendCommand(['EVAL', TAKE_SCRIPT, '1', KEY_PREFIX + key, ...args])
    }
    const [granted, tokens] = reply as [string, string]
    return { granted: Number(granted), tokens: Number(tokens) }
  }

  async connect(waitMs: number): Promise<void> {
    this.connected()
    let timer: NodeJS.Timeout | undefined
    await Promise.race([this.connecting, new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)))])
    clearTimeout(timer)
  }

  async ping(): Promise<void> {
    await this.connected().sendCommand(['PING'])
  }

  async close(): Promise<void> {
    this.closed = true
    const client = this.client
    this.client = undefined
    if (client === undefined) return
    try {
      await client.close()
    } catch {
      client.destroy()
    }
  }

  /** The client, connecting on first use (a node that only validates its options never connects). */
  private connected(): Client {
    if (this.closed) throw new Error('the Redis connection is closed')
    if (this.client !== undefined) return this.client
    const redis = createClient({
      url: this.url,
      disableOfflineQueue: true,
      socket: { connectTimeout: 1000, reconnectStrategy: (retries: number) => Math.min(50 * (retries + 1), 1000) },
    })
    // Failures reach the caller as rejected commands; the limiter logs them once per outage.
    redis.on('error', () => {})
    this.connecting = redis.connect().catch(() => {})
    const client: Client = {
      sendCommand: (args) => withTimeout(redis.sendCommand(args), this.timeoutMs),
      close: () => redis.close(),
      destroy: () => redis.destroy(),
    }
    this.client = client
    return client
  }
}

class RedisTimeoutError extends Error {}

/** The command's answer, or a rejection once `ms` have passed (a late answer is dropped). */
function withTimeout<T>(command: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    // Timers run before the poll phase: an answer already read by the kernel while the loop was busy is
    // given its turn (setImmediate runs after the poll) before the command counts as timed out.
    timer = setTimeout(() => setImmediate(() => reject(new RedisTimeoutError(`Redis did not answer in ${ms} ms`))), ms)
  })
  return Promise.race([command, timeout]).finally(() => clearTimeout(timer))
}
