// A replica's JSON-RPC client of the producer (--producer-url): where its writes and its 'pending'
// questions go. The producer's answer comes back as it was given, error code, message and data included,
// so a client sees through a replica exactly what the producer said. When the producer cannot be
// reached, the caller gets ProducerUnreachable, never a guess.

export interface RpcErrorObject {
  code: number
  message: string
  data?: unknown
}

export type RpcOutcome = { ok: true; result: unknown } | { ok: false; error: RpcErrorObject }

export class ProducerUnreachable extends Error {
  constructor(url: string, cause: unknown) {
    super(`the block producer at ${url} cannot be reached: ${(cause as Error)?.message ?? String(cause)}`)
    this.name = 'ProducerUnreachable'
  }
}

export class ProducerForwarder {
  private nextId = 1

  constructor(
    readonly url: string,
    private readonly timeoutMs: number,
  ) {}

  /** Several calls in one JSON-RPC batch; the outcomes in the calls' order. */
  async batch(calls: Array<{ method: string; params: unknown[] }>): Promise<RpcOutcome[]> {
    if (calls.length === 0) return []
    const first = this.nextId
    this.nextId += calls.length
    const body = JSON.stringify(calls.map((c, i) => ({ jsonrpc: '2.0', id: first + i, method: c.method, params: c.params })))
    let answers: unknown
    try {
      const res = await fetch(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        signal: AbortSignal.timeout(this.timeoutMs),
      })
      const text = await res.text()
      if (!res.ok && !text.startsWith('[') && !text.startsWith('{')) throw new Error(`HTTP ${res.status}: ${text.slice(0, 200)}`)
      answers = JSON.parse(text)
    } catch (err) {
      throw new ProducerUnreachable(this.url, err)
    }
    // one error object for the whole batch (e.g. the producer's rate limit)
    if (!Array.isArray(answers)) {
      const error = (answers as { error?: RpcErrorObject }).error
      if (error !== undefined) return calls.map(() => ({ ok: false, error }))
      throw new ProducerUnreachable(this.url, new Error('the producer answered a batch with something else'))
    }
    const byId = new Map<number, { result?: unknown; error?: RpcErrorObject }>()
    for (const a of answers as Array<{ id: number; result?: unknown; error?: RpcErrorObject }>) byId.set(a.id, a)
    return calls.map((_, i) => {
      const a = byId.get(first + i)
      if (a === undefined) return { ok: false, error: { code: -32603, message: 'the block producer did not answer this call' } }
      return a.error !== undefined ? { ok: false, error: a.error } : { ok: true, result: a.result }
    })
  }

  async call(method: string, params: unknown[]): Promise<RpcOutcome> {
    return (await this.batch([{ method, params }]))[0]
  }
}
