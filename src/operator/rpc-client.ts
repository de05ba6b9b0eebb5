// A minimal JSON-RPC 2.0 client over HTTP (fetch) for operator commands that talk to a running node.

export class RpcCallError extends Error {
  constructor(
    readonly method: string,
    readonly code: number,
    readonly rpcMessage: string,
  ) {
    super(`${method} failed: ${rpcMessage} (code ${code})`)
    this.name = 'RpcCallError'
  }
}

export class NodeUnreachableError extends Error {
  constructor(url: string, cause: unknown) {
    const inner = (cause as { cause?: { code?: string; message?: string } })?.cause
    const reason = inner?.code ?? inner?.message ?? (cause as Error)?.message ?? String(cause)
    super(`cannot reach the node at ${url} (${reason}); is it running? (--rpc URL)`)
    this.name = 'NodeUnreachableError'
  }
}

export class JsonRpcClient {
  private nextId = 1

  constructor(readonly url: string) {}

  async call<T>(method: string, params: unknown[] = []): Promise<T> {
    let response: Response
    try {
      response = await fetch(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: this.nextId++, method, params }),
        signal: AbortSignal.timeout(30_000),
      })
    } catch (err) {
      throw new NodeUnreachableError(this.url, err)
    }
    const text = await response.text()
    let body: { result?: T; error?: { code: number; message: string } }
    try {
      body = JSON.parse(text) as typeof body
    } catch {
      throw new Error(`${method}: HTTP ${response.status} from ${this.url}, not JSON-RPC: ${text.slice(0, 200)}`)
    }
    if (body.error !== undefined) throw new RpcCallError(method, body.error.code, body.error.message)
    if (!('result' in body)) throw new Error(`${method}: response without result from ${this.url}`)
    return body.result as T
  }
}
