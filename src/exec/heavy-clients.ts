// Clients whose calls run long. The burst worker keeps a long call from holding up the calls queued
// behind it, but a client sending several long calls at once (or one after another) would otherwise hold
// every thread of the pool, burst worker included. Once one of a client's calls has run long, its calls
// wait in a lane of their own and go out one task at a time, a task holding only that client's calls (a
// long one holds up no one else's), and the lanes together hold at most `threads` workers at once: the
// other clients keep the rest. A client leaves its lane HEAVY_FOR_MS after its last long call.
// Clients are told apart by address (RequestContext.clientIp); calls with no address have no lane, nor
// do the clients the pool is told to exempt (allow-listed addresses: the operator's own services).

/** How long a client stays in its lane after one of its calls last ran long. */
export const HEAVY_FOR_MS = 10_000
/** Calls a lane holds; more are refused (a client cannot fill the pool's queue with calls that wait for it). */
export const LANE_CAPACITY = 256

export interface ClientCall {
  /** the client's address (or `key:NAME`, an allow-listed API key); '' when unknown */
  readonly client: string
}

export interface Lane<T> {
  readonly client: string
  readonly waiting: T[]
  /** a task of its calls runs */
  running: boolean
  /** one of its calls was running long at the last look (it may sit in a shared task, sent before the client had a lane) */
  runsLong: boolean
  lastLongAt: number
}

export class HeavyClients<T extends ClientCall> {
  private readonly lanes = new Map<string, Lane<T>>()
  private waitingCalls = 0

  /** `threads`: most workers the lanes hold at once; `exempt`: clients never given a lane */
  constructor(
    private readonly threads: number,
    private readonly exempt: (client: string) => boolean = () => false,
  ) {}

  /** clients with a lane */
  get size(): number {
    return this.lanes.size
  }

  /** calls waiting in the lanes */
  get waiting(): number {
    return this.waitingCalls
  }

  has(client: string): boolean {
    return this.lanes.has(client)
  }

  /** Before a look at the running calls: none is known to run long until `sawLong` says so. */
  beginLook(): void {
    for (const lane of this.lanes.values()) lane.runsLong = false
  }

  /** A call of `client` runs long at `now`: the client gets a lane if it had none. */
  sawLong(client: string, now: number): void {
    const lane = this.lanes.get(client)
    if (lane !== undefined) {
      lane.runsLong = true
      lane.lastLongAt = now
    } else if (!this.exempt(client)) {
      this.lanes.set(client, { client, waiting: [], running: false, runsLong: true, lastLongAt: now })
    }
  }

  /** After a look: lanes with nothing waiting or running whose last long call is HEAVY_FOR_MS old are closed. */
  endLook(now: number): void {
    for (const [client, lane] of this.lanes) {
      if (!lane.running && !lane.runsLong && lane.waiting.length === 0 && now - lane.lastLongAt >= HEAVY_FOR_MS) this.lanes.delete(client)
    }
  }

  /** Queues a call of a client with a lane; false when its lane is full. */
  add(call: T): boolean {
    const lane = this.lanes.get(call.client)!
    if (lane.waiting.length >= LANE_CAPACITY) return false
    lane.waiting.push(call)
    this.waitingCalls++
    return true
  }

  /**
   * The next calls to run together (at most `max`, the longest waiting first), with their lane (now
   * running), taking the lanes in turn; undefined when none waits, or the lanes already hold `threads`
   * workers.
   */
  next(max: number): { calls: T[]; lane: Lane<T> } | undefined {
    if (this.waitingCalls === 0) return undefined
    let busy = 0
    let ready: Lane<T> | undefined
    for (const lane of this.lanes.values()) {
      if (lane.running || lane.runsLong) busy++
      else if (ready === undefined && lane.waiting.length > 0) ready = lane
    }
    if (ready === undefined || busy >= this.threads) return undefined
    ready.running = true
    const calls = ready.waiting.splice(0, max)
    this.waitingCalls -= calls.length
    // to the back of the turn
    this.lanes.delete(ready.client)
    this.lanes.set(ready.client, ready)
    return { calls, lane: ready }
  }

  /** Takes out of its lane the first waiting call that `matches`, if one does. */
  remove(matches: (call: T) => boolean): T | undefined {
    for (const lane of this.lanes.values()) {
      const i = lane.waiting.findIndex(matches)
      if (i < 0) continue
      this.waitingCalls--
      return lane.waiting.splice(i, 1)[0]
    }
    return undefined
  }

  /** Every call still waiting (the pool closes). */
  drain(): T[] {
    const calls: T[] = []
    for (const lane of this.lanes.values()) calls.push(...lane.waiting.splice(0))
    this.waitingCalls = 0
    return calls
  }
}
