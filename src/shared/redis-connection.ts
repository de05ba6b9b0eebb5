// One connection to the Redis that the nodes behind one load balancer share (--redis-url). It never
// queues a command while down and gives up on one after a timeout, so a caller learns at once that
// Redis is unavailable and decides what to do without it (each user of Redis has its own fallback).
// Lua scripts run by their SHA; a Redis restarted empty has forgotten them and gets the source again.

// The client library loads on first use: a node without --redis-url never needs it, and it is ~5 MiB of
// the main thread's heap (its modules' source, functions and objects).
type RedisModule = typeof import('redis')
let redisModule: Promise<RedisModule> | undefined
const loadRedis = (): Promise<RedisModule> => (redisModule ??= import('redis'))

/** A Lua script, loaded once per connection. */
export interface RedisScript {
  readonly source: string
}

export class RedisTimeoutError extends Error {}

/** The part of the node-redis client used here. */
interface Client {
  sendCommand(args: string[]): Promise<unknown>
  close(): Promise<void>
  destroy(): void
}

export class RedisConnection {
  private client: Client | undefined
  private connecting: Promise<unknown> | undefined
  private closed = false
  private readonly shas = new Map<RedisScript, string>()

  constructor(
    private readonly url: string,
    /** how long one command may take before it counts as failed */
    readonly timeoutMs: number,
  ) {}

  command(args: string[]): Promise<unknown> {
    return withTimeout(this.connected().sendCommand(args), this.timeoutMs)
  }

  async script(script: RedisScript, keys: string[], args: string[]): Promise<unknown> {
    let sha = this.shas.get(script)
    try {
      if (sha === undefined) {
        sha = String(await this.command(['SCRIPT', 'LOAD', script.source]))
        this.shas.set(script, sha)
      }
      return await this.command(['EVALSHA', sha, String(keys.length), ...keys, ...args])
    } catch (err) {
      if (!String((err as Error).message).startsWith('NOSCRIPT')) throw err
      return this.command(['EVAL', script.source, String(keys.length), ...keys, ...args])
    }
  }

  /** Opens the connection, waiting at most `waitMs` for it (the first commands then find it open). */
  async connect(waitMs: number): Promise<void> {
    this.connected()
    let timer: NodeJS.Timeout | undefined
    await Promise.race([this.connecting, new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)))])
    clearTimeout(timer)
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
    const opening = loadRedis().then(({ createClient }) => {
      const redis = createClient({
        url: this.url,
        disableOfflineQueue: true,
        socket: { connectTimeout: 1000, reconnectStrategy: (retries: number) => Math.min(50 * (retries + 1), 1000) },
      })
      // Failures reach the callers as rejected commands; each logs them once per outage.
      redis.on('error', () => {})
      return { redis, connected: redis.connect().catch(() => {}) }
    })
    // as a failed connection, a client library that failed to load reaches the callers through their commands
    this.connecting = opening.then((o) => o.connected, () => {})
    const client: Client = {
      sendCommand: (args) => opening.then((o) => o.redis.sendCommand(args)),
      close: () => opening.then((o) => o.redis.close()),
      destroy: () => void opening.then((o) => o.redis.destroy(), () => {}),
    }
    this.client = client
    return client
  }
}

/**
 * The command's answer, or a rejection once `ms` have passed (a late answer is dropped). Enforced here:
 * node-redis's own command timeout (an AbortSignal.timeout) was seen never to fire on Node 20 against a
 * stalled server.
 */
function withTimeout<T>(command: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    // Timers run before the poll phase: an answer already read by the kernel while the loop was busy is
    // given its turn (setImmediate runs after the poll) before the command counts as timed out.
    timer = setTimeout(() => setImmediate(() => reject(new RedisTimeoutError(`Redis did not answer in ${ms} ms`))), ms)
  })
  return Promise.race([command, timeout]).finally(() => clearTimeout(timer))
}
