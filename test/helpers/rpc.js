// Minimal JSON-RPC over HTTP for tests that need to see the exact wire answer.

let nextId = 1

/**
 * POSTs `body` as-is (a string is sent verbatim, anything else is JSON-encoded).
 * @returns {Promise<{status: number, headers: Headers, text: string, json: unknown}>}
 *   json is undefined when the body is empty or not JSON.
 */
export async function rawPost(url, body, headers = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
  const text = await response.text()
  let json
  if (text.length > 0) {
    try {
      json = JSON.parse(text)
    } catch {
      json = undefined
    }
  }
  return { status: response.status, headers: response.headers, text, json }
}

/** @returns {Promise<{jsonrpc: string, id: unknown, result?: unknown, error?: {code: number, message: string, data?: unknown}}>} */
export async function rpc(url, method, params = []) {
  const id = nextId++
  const { status, text, json } = await rawPost(url, { jsonrpc: '2.0', id, method, params })
  if (json === undefined || typeof json !== 'object' || Array.isArray(json)) {
    throw new Error(`${method}: HTTP ${status}, not a JSON-RPC response: ${text.slice(0, 500)}`)
  }
  return json
}

/**
 * Sends `calls` ([method, params] pairs) as one JSON-RPC batch.
 * @returns {Promise<unknown[]>} the results in call order; throws if any call failed.
 */
export async function rpcBatch(url, calls) {
  if (calls.length === 0) return []
  const first = nextId
  nextId += calls.length
  const body = calls.map(([method, params = []], i) => ({ jsonrpc: '2.0', id: first + i, method, params }))
  const { status, text, json } = await rawPost(url, body)
  if (!Array.isArray(json)) throw new Error(`batch: HTTP ${status}, not a JSON-RPC batch response: ${text.slice(0, 500)}`)
  const byId = new Map(json.map((response) => [response.id, response]))
  return calls.map(([method], i) => {
    const response = byId.get(first + i)
    if (response === undefined) throw new Error(`batch: no response for ${method} (id ${first + i})`)
    if (response.error !== undefined) throw new Error(`${method} failed: ${response.error.code} ${response.error.message}`)
    return response.result
  })
}

/** The result of a successful call; throws an Error carrying code, message and data otherwise. */
export async function rpcResult(url, method, params = []) {
  const response = await rpc(url, method, params)
  if (response.error !== undefined) {
    const { code, message, data } = response.error
    const err = new Error(`${method} failed: ${code} ${message}${data === undefined ? '' : ` (data ${JSON.stringify(data)})`}`)
    Object.assign(err, { code, rpcMessage: message, data })
    throw err
  }
  if (!('result' in response)) throw new Error(`${method}: response has neither result nor error: ${JSON.stringify(response)}`)
  return response.result
}

/** Polls eth_getTransactionReceipt until the receipt exists (or the timeout passes). */
export async function waitForReceipt(url, hash, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const receipt = await rpcResult(url, 'eth_getTransactionReceipt', [hash])
    if (receipt !== null) return receipt
    await sleep(100)
  }
  throw new Error(`no receipt for ${hash} within ${timeoutMs} ms`)
}

/** Polls eth_blockNumber until it is at least `target` (or the timeout passes). */
export async function waitForBlock(url, target, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const head = BigInt(await rpcResult(url, 'eth_blockNumber', []))
    if (head >= BigInt(target)) return head
    await sleep(100)
  }
  throw new Error(`block ${target} not reached within ${timeoutMs} ms`)
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** Resolves like `promise`, or rejects once `ms` pass; the timer never keeps the process alive. */
export function withTimeout(promise, ms, what) {
  let timer
  const expired = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: timed out after ${ms} ms`)), ms)
  })
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer))
}
