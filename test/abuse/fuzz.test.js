// Bounded fuzzing over HTTP and WS with a seeded PRNG: tens of thousands of malformed and hostile
// requests. Every answer must be a well-formed JSON-RPC answer (or an HTTP error), no call may end in an
// internal error, the node must survive, the chain must not change, and memory must stay bounded.

import assert from 'node:assert/strict'
import http from 'node:http'
import net from 'node:net'
import { after, before, describe, it } from 'node:test'
import WebSocket from 'ws'
import { DEV_ADDRESSES, startNode } from '../helpers/node.js'
import { rpcResult } from '../helpers/rpc.js'
import { prng, request, rssOf } from './http-client.js'

const SEED = Number(process.env.KEEL_FUZZ_SEED ?? 0x600d)
const HTTP_REQUESTS = 20_000
const WS_MESSAGES = 10_000
const CONCURRENCY = 32
const TIME_BUDGET_MS = 75_000

const METHODS = [
  'eth_chainId', 'eth_blockNumber', 'eth_getBalance', 'eth_getCode', 'eth_getStorageAt', 'eth_getTransactionCount',
  'eth_call', 'eth_estimateGas', 'eth_createAccessList', 'eth_getBlockByNumber', 'eth_getBlockByHash',
  'eth_getBlockTransactionCountByNumber', 'eth_getTransactionByHash', 'eth_getTransactionReceipt',
  'eth_getTransactionByBlockNumberAndIndex', 'eth_getBlockReceipts', 'eth_getLogs', 'eth_newFilter',
  'eth_newBlockFilter', 'eth_getFilterChanges', 'eth_getFilterLogs', 'eth_uninstallFilter', 'eth_feeHistory',
  'eth_gasPrice', 'eth_maxPriorityFeePerGas', 'eth_sendRawTransaction', 'eth_sendRawTransactionSync', 'eth_subscribe', 'eth_unsubscribe',
  'net_version', 'web3_clientVersion', 'web3_sha3', 'txpool_status', 'txpool_content', 'eth_syncing',
  'debug_traceTransaction', 'debug_traceBlockByNumber', 'debug_traceBlockByHash', 'debug_traceBlock', 'debug_traceCall',
  'debug_getRawHeader', 'debug_getRawBlock', 'debug_getRawReceipts', 'debug_getRawTransaction', 'debug_getBadBlocks', 'debug_storageRangeAt',
  'no_suchMethod', '', 'eth_', '__proto__', 'constructor', 'toString',
]

function hostileValue(r, depth = 0) {
  switch (r.int(depth > 3 ? 12 : 16)) {
    case 0: return null
    case 1: return r.next() < 0.5
    case 2: return r.int(2 ** 31) * (r.next() < 0.2 ? -1 : 1)
    case 3: return r.pick([1e308, -1e308, 2 ** 53 + 1, 0.5, -0, 1e-300])
    case 4: return `0x${r.bytes(r.int(40)).toString('hex')}`
    case 5: return `0x${'f'.repeat(r.int(200))}`
    case 6: return r.pick(['0x', '0x0', '0x00', '0xzz', '0X1', '1', '', ' ', 'latest', 'pending', 'earliest', 'safe', 'finalized', '0x-1', '0x1g'])
    case 7: return `0x${r.bytes(20).toString('hex').slice(r.int(3))}` // odd lengths around an address
    case 8: return `0x${r.bytes(32).toString('hex')}`
    case 9: return r.bytes(r.int(30)).toString('latin1')
    case 10: return '\u0000\ud800\uffff'.repeat(r.int(5))
    case 11: return { __proto__: { polluted: true } }
    case 12: return Array.from({ length: r.int(6) }, () => hostileValue(r, depth + 1))
    case 13: {
      const obj = {}
      for (const key of ['from', 'to', 'data', 'input', 'value', 'gas', 'gasPrice', 'fromBlock', 'toBlock', 'address', 'topics', 'blockHash', 'unknownField', '__proto__']) {
        if (r.next() < 0.4) obj[key] = hostileValue(r, depth + 1)
      }
      return obj
    }
    case 14: return { blockNumber: hostileValue(r, depth + 1), requireCanonical: hostileValue(r, depth + 1) }
    default: return 'x'.repeat(r.int(1000))
  }
}

/** Streams a body past the 5 MiB limit over a raw socket; resolves to what the node answered. */
function oversizePost(port, framing) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    let answer = ''
    const size = 5 * 1024 * 1024 + 1
    socket.on('data', (chunk) => {
      answer += chunk
    })
    socket.on('error', () => {}) // the node may close while we still write: expected
    socket.on('close', () => resolve(answer))
    const framingHeader = framing === 'length' ? `Content-Length: ${size}` : 'Transfer-Encoding: chunked'
    socket.write(`POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${framingHeader}\r\n\r\n`)
    // A declared length is refused before any body byte is read: wait for that answer first (writing on
    // into a closed socket makes the kernel reset it, which can discard the answer on our side).
    if (framing === 'length') return
    const piece = Buffer.alloc(64 * 1024, 0x5b)
    let written = 0
    const pump = () => {
      while (written < size + piece.length && !socket.destroyed) {
        const data = framing === 'length' ? piece : Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')])
        written += piece.length
        if (!socket.write(data)) return void socket.once('drain', pump)
      }
    }
    pump()
    setTimeout(() => socket.destroy(), framing === 'length' ? 3000 : 10_000)
  })
}

const nested = (depth, open = '[', close = ']', inner = '1') => open.repeat(depth) + inner + close.repeat(depth)

/** One hostile body: { body, contentType?, ws: usable over WS }. */
function hostileRequest(r) {
  const method = r.pick(METHODS)
  const params = Array.from({ length: r.int(5) }, () => hostileValue(r))
  const valid = () => ({ jsonrpc: '2.0', id: r.int(1e6), method, params })
  switch (r.int(20)) {
    case 0: return { body: r.bytes(r.int(2000)) }
    case 1: {
      const text = JSON.stringify(valid())
      return { body: text.slice(0, r.int(text.length)) }
    }
    case 2: return { body: nested(1 + r.int(200_000)) }
    case 3: return { body: `{"jsonrpc":"2.0","id":1,"method":"${method}","params":${nested(1 + r.int(5000))}}` }
    case 4: return { body: `{"jsonrpc":"2.0","id":1e400,"method":"${method}","params":[1e999,-1e999,123456789012345678901234567890,"0x${'f'.repeat(r.int(3000))}"]}` }
    case 5: return { body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: [Array.from({ length: 10_001 + r.int(20_000) }, () => '0x1')] }) }
    case 6: return { body: JSON.stringify({ ...valid(), extra: hostileValue(r), jsonrpc: r.pick(['2.0', '1.0', 2, null]) }) }
    case 7: return { body: JSON.stringify({ ...valid(), id: hostileValue(r) }) }
    case 8: return { body: JSON.stringify({ ...valid(), params: hostileValue(r) }) }
    case 9: return { body: JSON.stringify(Array.from({ length: r.int(30) }, () => (r.next() < 0.8 ? valid() : hostileValue(r)))) }
    case 10: return { body: JSON.stringify(Array.from({ length: 1001 + r.int(500) }, () => ({ jsonrpc: '2.0', id: 1, method: 'eth_chainId' }))) }
    case 11: return { body: JSON.stringify(valid()), contentType: r.pick(['text/plain', '', 'application/x-www-form-urlencoded', 'application/jsonx', 'multipart/form-data']), http: true }
    case 12: return { body: r.pick(['', ' ', 'null', 'true', '[]', '{}', '"x"', '[[]]', '[null]', '1', '[1,2]']) }
    case 13: return { body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: ['x'.repeat(100_000 + r.int(100_000))] }) }
    case 14: return { body: `{"jsonrpc":"2.0","id":1,"method":"${method}","params":[${nested(70, '{"a":', '}')}]}` }
    default: return { body: JSON.stringify(valid()) }
  }
}

const problems = []
const note = (what) => {
  if (problems.length < 20) problems.push(what)
}

/** Checks one JSON-RPC answer object (not a batch). */
function checkAnswer(answer, where) {
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer) || answer.jsonrpc !== '2.0' || !('id' in answer)) {
    note(`${where}: not a JSON-RPC answer: ${JSON.stringify(answer).slice(0, 200)}`)
    return
  }
  if ('error' in answer) {
    const { code, message } = answer.error ?? {}
    if (!Number.isInteger(code) || typeof message !== 'string') note(`${where}: malformed error ${JSON.stringify(answer.error)}`)
    else if (code === -32603) note(`${where}: internal error ${message}`)
  } else if (!('result' in answer)) {
    note(`${where}: neither result nor error`)
  }
}

function checkBody(text, where) {
  if (text === '') return // only notifications
  let json
  try {
    json = JSON.parse(text)
  } catch {
    note(`${where}: body is not JSON: ${text.slice(0, 200)}`)
    return
  }
  if (Array.isArray(json)) for (const item of json) checkAnswer(item, where)
  else checkAnswer(json, where)
}

describe('fuzzing', () => {
  let node
  let baseline
  const rss = []

  const chainSnapshot = async (url) => {
    const genesis = await rpcResult(url, 'eth_getBlockByNumber', ['0x0', false])
    const balances = []
    for (const address of DEV_ADDRESSES) {
      balances.push(await rpcResult(url, 'eth_getBalance', [address, 'latest']))
      balances.push(await rpcResult(url, 'eth_getTransactionCount', [address, 'latest']))
    }
    return { genesis: [genesis.hash, genesis.stateRoot], balances, pool: await rpcResult(url, 'txpool_status') }
  }

  before(async () => {
    node = await startNode({ args: ['--metrics-port', '0'], blockTime: 1 })
    baseline = await chainSnapshot(node.url)
    rss.push(await rssOf(node.proc.pid))
  })
  after(async () => node?.stop())

  it(`survives ${HTTP_REQUESTS} hostile HTTP requests with well-formed answers`, async () => {
    const r = prng(SEED)
    const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY })
    const deadline = Date.now() + TIME_BUDGET_MS / 2
    let sent = 0
    const statuses = new Map()
    const worker = async () => {
      while (sent < HTTP_REQUESTS && Date.now() < deadline) {
        const n = sent++
        const { body, contentType } = hostileRequest(r)
        const res = await request(node.url, { body, agent, headers: contentType === undefined ? {} : { 'content-type': contentType } })
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
        if (res.status === 200) checkBody(res.text, `http #${n}`)
        else if (![413, 415].includes(res.status)) note(`http #${n}: status ${res.status} ${res.text.slice(0, 200)}`)
        if (n % 2000 === 0) rss.push(await rssOf(node.proc.pid))
      }
    }
    await Promise.all(Array.from({ length: CONCURRENCY }, worker))
    // Bodies over the 5 MiB limit: refused from the declared length, and from the bytes when chunked.
    assert.match(await oversizePost(node.port, 'length'), /^HTTP\/1\.1 413/)
    // Chunked: the node answers 413 and closes once the bytes pass the limit (the answer may be lost in
    // the reset when we are still writing); either way it must have stopped reading and still serve.
    const chunked = await oversizePost(node.port, 'chunked')
    assert.ok(chunked === '' || /^HTTP\/1\.1 413/.test(chunked), chunked.slice(0, 100))
    assert.equal((await request(node.url, { body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}' })).status, 200)
    agent.destroy()
    assert.ok(sent >= HTTP_REQUESTS * 0.5, `only ${sent} requests within the time budget`)
    assert.ok((statuses.get(415) ?? 0) > 0 && (statuses.get(200) ?? 0) > sent / 2, JSON.stringify([...statuses]))
    assert.deepEqual(problems, [])
  })

  it(`survives ${WS_MESSAGES} hostile WS messages with well-formed answers and open sockets`, async () => {
    const r = prng(SEED + 1)
    const sockets = await Promise.all(
      Array.from({ length: 4 }, () => new Promise((resolve, reject) => {
        const ws = new WebSocket(node.wsUrl)
        ws.once('open', () => resolve(ws))
        ws.once('error', reject)
      })),
    )
    let answers = 0
    for (const [i, ws] of sockets.entries()) {
      ws.on('message', (data) => {
        answers++
        checkBody(String(data), `ws ${i}`)
      })
    }
    const deadline = Date.now() + TIME_BUDGET_MS / 3
    let sent = 0
    for (; sent < WS_MESSAGES && Date.now() < deadline; sent++) {
      const ws = sockets[sent % sockets.length]
      const { body } = hostileRequest(r)
      ws.send(body)
      // Keep the unsent buffer small: the node must not see us as a slow consumer.
      while (ws.bufferedAmount > 1 << 20) await new Promise((resolve) => setTimeout(resolve, 5))
      if (sent % 200 === 0) await new Promise((resolve) => setImmediate(resolve))
    }
    // Everything answered (notifications and empty batches of notifications have no answer) settles.
    let last = -1
    while (answers !== last) {
      last = answers
      await new Promise((resolve) => setTimeout(resolve, 500))
    }
    for (const ws of sockets) assert.equal(ws.readyState, WebSocket.OPEN)
    for (const ws of sockets) ws.close()
    assert.ok(answers > sent * 0.8, `${answers} answers to ${sent} messages`)
    assert.deepEqual(problems, [])
  })

  it('leaves the chain unchanged and memory bounded', async () => {
    assert.equal(node.proc.exitCode, null, 'the node is still running')
    const now = await chainSnapshot(node.url)
    assert.deepEqual(now.genesis, baseline.genesis)
    assert.deepEqual(now.balances, baseline.balances)
    assert.deepEqual(now.pool, baseline.pool)
    rss.push(await rssOf(node.proc.pid))
    const peak = Math.max(...rss)
    const growth = rss.at(-1) - rss[0]
    assert.ok(peak < 1.5 * 1024 ** 3, `peak RSS ${(peak / 2 ** 20).toFixed(0)} MiB`)
    assert.ok(growth < 400 * 1024 ** 2, `RSS grew ${(growth / 2 ** 20).toFixed(0)} MiB: ${rss.map((b) => (b / 2 ** 20).toFixed(0)).join(', ')}`)
  })
})
