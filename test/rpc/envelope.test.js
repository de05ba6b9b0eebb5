import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { Envelope } from '../../dist/rpc/envelope.js'
import { Dispatcher } from '../../dist/rpc/dispatch.js'
import { RawJson, SplicedAnswer } from '../../dist/rpc/context.js'
import { RpcError, executionReverted } from '../../dist/errors.js'
import { defaultTransportLimits } from '../../dist/rpc/limits.js'
import { RateLimiter } from '../../dist/rpc/ratelimit.js'

const ctx = { transport: 'http', clientIp: '10.0.0.1' }

const setup = (limits = defaultTransportLimits) => {
  const internalErrors = []
  const calls = []
  const notified = []
  const dispatcher = new Dispatcher()
  dispatcher.register('echo', (params) => params)
  dispatcher.register('first', (params) => params[0])
  dispatcher.register('nothing', () => undefined)
  dispatcher.register('raw', () => new RawJson('{"cached":true,"n":"0x1"}'))
  const big = new RawJson(JSON.stringify(Array.from({ length: 20_000 }, (_, i) => `0x${i.toString(16)}`)))
  dispatcher.register('bigRaw', () => big)
  // ASCII bytes, as eth_getLogs answers: a big one is answered as bytes
  const bigBytes = new RawJson(Buffer.from(JSON.stringify(Array.from({ length: 20_000 }, (_, i) => `0x${i.toString(16)}`))))
  dispatcher.register('bigBytes', () => bigBytes)
  dispatcher.register('smallBytes', () => new RawJson(Buffer.from('[{"n":"0x1"}]')))
  dispatcher.register('revert', () => {
    throw executionReverted('Ownable: caller is not the owner', '0x08c379a0')
  })
  dispatcher.register('asyncRevert', async () => {
    throw new RpcError(-32000, 'nonce too low: next nonce 7, tx nonce 5')
  })
  dispatcher.register('bug', () => {
    throw new Error('secret stack detail')
  })
  dispatcher.register('bigint', () => 1n)
  dispatcher.register('slow', async (params) => {
    await new Promise((resolve) => setTimeout(resolve, params[0]))
    return params[1]
  })
  dispatcher.register('ctx', (_params, c) => c.clientIp)
  dispatcher.register('notify', (params) => {
    notified.push(params[0])
    return 'ignored'
  })
  dispatcher.register('big', (params) => 'x'.repeat(params[0]))
  const envelope = new Envelope(dispatcher, limits, {
    onInternalError: (err, method) => internalErrors.push([method, err.message]),
    onCall: (method, _ctx, code) => calls.push([method, code]),
  })
  const call = async (body) => {
    const text = await envelope.handle(typeof body === 'string' ? body : JSON.stringify(body), ctx)
    return text === null ? null : { text, json: JSON.parse(text) }
  }
  return { envelope, call, internalErrors, calls, notified }
}

const req = (id, method, params) =>
  params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params }

describe('Envelope: single requests', () => {
  it('answers a call with jsonrpc, the id and the result', async () => {
    const { call } = setup()
    const r = await call(req(1, 'echo', ['a', 2]))
    assert.equal(r.text, '{"jsonrpc":"2.0","id":1,"result":["a",2]}')
  })

  it('treats absent and null params as []', async () => {
    const { call } = setup()
    assert.deepEqual((await call(req(1, 'echo'))).json.result, [])
    assert.deepEqual((await call({ jsonrpc: '2.0', id: 2, method: 'echo', params: null })).json.result, [])
  })

  it('serialises undefined as null and splices RawJson verbatim', async () => {
    const { call } = setup()
    assert.equal((await call(req(1, 'nothing'))).text, '{"jsonrpc":"2.0","id":1,"result":null}')
    assert.equal((await call(req(2, 'raw'))).text, '{"jsonrpc":"2.0","id":2,"result":{"cached":true,"n":"0x1"}}')
  })

  it('answers a big cached RawJson with the id of each request, in and out of batches', async () => {
    const { call } = setup()
    const expected = Array.from({ length: 20_000 }, (_, i) => `0x${i.toString(16)}`)
    for (const id of [1, 1, 'a', 1, null, 7]) {
      const answer = await call(req(id, 'bigRaw'))
      assert.equal(answer.json.id, id)
      assert.deepEqual(answer.json.result, expected)
    }
    const batch = await call([req(3, 'bigRaw'), req(4, 'raw'), req(5, 'bigRaw')])
    assert.deepEqual(batch.json.map((a) => a.id), [3, 4, 5])
    assert.deepEqual(batch.json[2].result, expected)
  })

  it('answers a big RawJson of bytes spliced around its bytes with the id of each request, and as text in a batch', async () => {
    const { call } = setup()
    const expected = Array.from({ length: 20_000 }, (_, i) => `0x${i.toString(16)}`)
    for (const id of [1, 1, 'é', 2, null]) {
      const answer = await call(req(id, 'bigBytes'))
      assert.ok(answer.text instanceof SplicedAnswer, 'spliced')
      const bytes = Buffer.concat([Buffer.from(answer.text.head), answer.text.result, Buffer.from('}')])
      assert.equal(answer.text.length, bytes.length)
      assert.deepEqual(JSON.parse(bytes.toString('utf8')), { jsonrpc: '2.0', id, result: expected })
      assert.equal(answer.text.toString(), bytes.toString('utf8'))
    }
    const batch = await call([req(3, 'bigBytes'), req(4, 'smallBytes'), req(5, 'bigBytes')])
    assert.equal(typeof batch.text, 'string')
    assert.deepEqual(batch.json.map((a) => a.id), [3, 4, 5])
    assert.deepEqual(batch.json[0].result, expected)
    assert.deepEqual(batch.json[2].result, expected)
    assert.equal((await call(req(6, 'smallBytes'))).text, '{"jsonrpc":"2.0","id":6,"result":[{"n":"0x1"}]}')
  })

  it('passes the request context to the handler', async () => {
    const { call } = setup()
    assert.equal((await call(req(1, 'ctx'))).json.result, '10.0.0.1')
  })

  it('echoes string, null, negative, zero and float ids', async () => {
    const { call } = setup()
    for (const id of ['abc', '', null, -5, 0, 0.5]) {
      const r = await call(req(id, 'first', [1]))
      assert.deepEqual(r.json, { jsonrpc: '2.0', id, result: 1 })
    }
  })

  it('echoes the original text of ids JSON.parse cannot represent exactly', async () => {
    const { call } = setup()
    let r = await call('{"jsonrpc":"2.0","id":12345678901234567890123,"method":"first","params":[1]}')
    assert.equal(r.text, '{"jsonrpc":"2.0","id":12345678901234567890123,"result":1}')
    r = await call('{"params":[{"id":7.10}], "id" : 1.50, "jsonrpc":"2.0","method":"first"}')
    assert.equal(r.text, '{"jsonrpc":"2.0","id":1.50,"result":{"id":7.1}}')
    r = await call('{"jsonrpc":"2.0","id":1e400,"method":"missing"}')
    assert.ok(r.text.startsWith('{"jsonrpc":"2.0","id":1e400,"error":'))
  })

  it('answers unparseable JSON with -32700 "parse error" and id null', async () => {
    const { call } = setup()
    for (const body of ['{', '', 'nope', '{"jsonrpc":"2.0",}']) {
      const r = await call(body)
      assert.equal(r.text, '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}')
    }
  })

  it('answers requests that are not objects with -32600 and id null', async () => {
    const { call } = setup()
    for (const body of ['1', '"x"', 'null', 'true']) {
      const r = await call(body)
      assert.deepEqual(r.json, { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'invalid request' } })
    }
  })

  it('answers a missing or wrong jsonrpc version with -32600, echoing the id', async () => {
    const { call } = setup()
    for (const body of [{ id: 4, method: 'echo' }, { jsonrpc: '1.0', id: 4, method: 'echo' }, { jsonrpc: 2, id: 4, method: 'echo' }]) {
      const r = await call(body)
      assert.deepEqual(r.json, { jsonrpc: '2.0', id: 4, error: { code: -32600, message: 'invalid request' } })
    }
  })

  it('answers a missing, empty or non-string method with -32600, echoing the id', async () => {
    const { call } = setup()
    for (const method of [undefined, '', 5, null, ['echo']]) {
      const r = await call({ jsonrpc: '2.0', id: 'q', method })
      assert.deepEqual(r.json, { jsonrpc: '2.0', id: 'q', error: { code: -32600, message: 'invalid request' } })
    }
  })

  it('answers an id that is not string/number/null with -32600 and id null', async () => {
    const { call } = setup()
    for (const id of [{ a: 1 }, [1], true]) {
      const r = await call({ jsonrpc: '2.0', id, method: 'echo' })
      assert.deepEqual(r.json, { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'invalid request' } })
    }
  })

  it('answers scalar params with -32600 and by-name params with -32602 "non-array args"', async () => {
    const { call } = setup()
    for (const params of ['x', 3, true]) {
      const r = await call({ jsonrpc: '2.0', id: 9, method: 'echo', params })
      assert.deepEqual(r.json, { jsonrpc: '2.0', id: 9, error: { code: -32600, message: 'invalid request' } })
    }
    let r = await call({ jsonrpc: '2.0', id: 9, method: 'echo', params: { a: 1 } })
    assert.deepEqual(r.json, { jsonrpc: '2.0', id: 9, error: { code: -32602, message: 'non-array args' } })
    r = await call({ jsonrpc: '2.0', id: 9, method: 'missing', params: { a: 1 } })
    assert.equal(r.json.error.code, -32601)
  })

  it('answers an unknown method with geth\'s -32601 wording', async () => {
    const { call } = setup()
    const r = await call(req(3, 'eth_nope'))
    assert.deepEqual(r.json, {
      jsonrpc: '2.0',
      id: 3,
      error: { code: -32601, message: 'the method eth_nope does not exist/is not available' },
    })
  })

  it('serialises RpcError code, message and data (sync and async)', async () => {
    const { call } = setup()
    let r = await call(req(1, 'revert'))
    assert.equal(
      r.text,
      '{"jsonrpc":"2.0","id":1,"error":{"code":3,"message":"execution reverted: Ownable: caller is not the owner","data":"0x08c379a0"}}',
    )
    r = await call(req(2, 'asyncRevert'))
    assert.deepEqual(r.json, { jsonrpc: '2.0', id: 2, error: { code: -32000, message: 'nonce too low: next nonce 7, tx nonce 5' } })
    assert.equal('data' in r.json.error, false)
  })

  it('hides plain errors behind -32603 "internal error" and reports them once', async () => {
    const { call, internalErrors } = setup()
    const r = await call(req(1, 'bug'))
    assert.deepEqual(r.json, { jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'internal error' } })
    assert.doesNotMatch(r.text, /secret/)
    assert.deepEqual(internalErrors, [['bug', 'secret stack detail']])
  })

  it('turns an unserialisable result into -32603', async () => {
    const { call, internalErrors } = setup()
    const r = await call(req(1, 'bigint'))
    assert.deepEqual(r.json.error, { code: -32603, message: 'internal error' })
    assert.equal(internalErrors.length, 1)
  })

  it('runs notifications (no id member) without answering', async () => {
    const { call, notified, calls } = setup()
    assert.equal(await call({ jsonrpc: '2.0', method: 'notify', params: ['n1'] }), null)
    assert.deepEqual(notified, ['n1'])
    assert.deepEqual(calls, [['notify', 0]])
    // id: null is a call, not a notification
    assert.deepEqual((await call(req(null, 'notify', ['n2']))).json, { jsonrpc: '2.0', id: null, result: 'ignored' })
    // a failing notification is not answered either
    assert.equal(await call({ jsonrpc: '2.0', method: 'revert' }), null)
  })

  it('reports every call to onCall with its error code', async () => {
    const { call, calls } = setup()
    await call(req(1, 'first', [1]))
    await call(req(2, 'revert'))
    await call(req(3, 'bug'))
    assert.deepEqual(calls, [['first', 0], ['revert', 3], ['bug', -32603]])
  })
})

describe('Envelope: batches', () => {
  it('answers in request order although items finish out of order', async () => {
    const { call } = setup()
    const r = await call([req(1, 'slow', [30, 'a']), req(2, 'slow', [1, 'b']), req(3, 'first', ['c'])])
    assert.deepEqual(
      r.json.map((x) => [x.id, x.result]),
      [[1, 'a'], [2, 'b'], [3, 'c']],
    )
  })

  it('runs batch items concurrently', async () => {
    const { call } = setup()
    const started = performance.now()
    const items = Array.from({ length: 10 }, (_, i) => req(i, 'slow', [50, i]))
    const r = await call(items)
    assert.equal(r.json.length, 10)
    assert.ok(performance.now() - started < 400, 'ten 50 ms calls ran one after another')
  })

  it('answers [] with a single -32600 "empty batch"', async () => {
    const { call } = setup()
    const r = await call('[]')
    assert.equal(r.text, '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"empty batch"}}')
  })

  it('answers [1,2] with two -32600 errors', async () => {
    const { call } = setup()
    const r = await call('[1,2]')
    const error = { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'invalid request' } }
    assert.deepEqual(r.json, [error, error])
  })

  it('mixes results and errors, omitting notifications', async () => {
    const { call, notified } = setup()
    const r = await call([
      req('a', 'first', [1]),
      { jsonrpc: '2.0', method: 'notify', params: ['x'] },
      req('b', 'revert'),
      { jsonrpc: '2.0', id: 'c' },
      req('d', 'missing'),
    ])
    assert.deepEqual(notified, ['x'])
    assert.deepEqual(
      r.json.map((x) => [x.id, x.result ?? x.error.code]),
      [['a', 1], ['b', 3], ['c', -32600], ['d', -32601]],
    )
    assert.equal(r.json[1].error.data, '0x08c379a0')
  })

  it('answers an all-notification batch with nothing', async () => {
    const { call, notified } = setup()
    assert.equal(await call([{ jsonrpc: '2.0', method: 'notify', params: [1] }, { jsonrpc: '2.0', method: 'notify', params: [2] }]), null)
    assert.deepEqual(notified, [1, 2])
  })

  it('echoes the original text of unusual ids per batch item', async () => {
    const { call } = setup()
    const r = await call(
      '[{"jsonrpc":"2.0","id":1,"method":"first","params":[{"id":2.50}]}, {"id":[1],"jsonrpc":"2.0","method":"x"},' +
        ' {"jsonrpc":"2.0","method":"first","params":[0],"id":99999999999999999999}]',
    )
    assert.equal(
      r.text,
      '[{"jsonrpc":"2.0","id":1,"result":{"id":2.5}},{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request"}},' +
        '{"jsonrpc":"2.0","id":99999999999999999999,"result":0}]',
    )
  })

  it('rejects a batch over the item limit with one -32600 "batch too large" on the first call\'s id', async () => {
    const { call, notified } = setup({ ...defaultTransportLimits, batchRequestLimit: 3 })
    const ok = await call([req(1, 'first', [1]), req(2, 'first', [2]), req(3, 'first', [3])])
    assert.equal(ok.json.length, 3)
    const items = [1, { jsonrpc: '2.0', method: 'notify', params: ['n'] }, req(7, 'first', [1]), req(8, 'first', [1])]
    const r = await call(items)
    assert.deepEqual(r.json, [{ jsonrpc: '2.0', id: 7, error: { code: -32600, message: 'batch too large' } }])
    assert.deepEqual(notified, [], 'nothing in a rejected batch runs')
    const noCalls = await call([1, 2, 3, 4])
    assert.deepEqual(noCalls.json, [{ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'batch too large' } }])
  })

  it('allows the default 1000 items and rejects 1001', async () => {
    const { call } = setup()
    const items = Array.from({ length: 1001 }, (_, i) => req(i, 'first', [i]))
    const r = await call(items)
    assert.equal(r.json.length, 1)
    assert.equal(r.json[0].error.message, 'batch too large')
    assert.equal((await call(items.slice(0, 1000))).json.length, 1000)
  })

  it('answers calls past the response size limit with -32003 "response too large"', async () => {
    const { call } = setup({ ...defaultTransportLimits, batchResponseMaxSize: 2500 })
    const r = await call([req(1, 'big', [1000]), req(2, 'big', [1000]), req(3, 'big', [1000]), req(4, 'big', [10]), req('n', 'first', [1])])
    assert.deepEqual(
      r.json.map((x) => [x.id, x.error?.code ?? x.result.length]),
      [[1, 1000], [2, 1000], [3, 1000], [4, -32003], ['n', -32003]],
    )
    assert.equal(r.json[3].error.message, 'response too large')
  })

  it('stays within the default 25,000,000 byte response limit for normal batches', async () => {
    const { call } = setup()
    const r = await call(Array.from({ length: 20 }, (_, i) => req(i, 'big', [1_000_000])))
    assert.equal(r.json.filter((x) => x.error).length, 0)
    const over = await call(Array.from({ length: 30 }, (_, i) => req(i, 'big', [1_000_000])))
    assert.ok(over.json.slice(25).every((x) => x.error?.code === -32003))
    assert.ok(over.json.slice(0, 25).every((x) => typeof x.result === 'string'))
  })
})

describe('Envelope: rate limits', () => {
  it('charges a batch call by call: the calls the bucket covers run, the rest get -32005 each, a notification nothing', async () => {
    const dispatcher = new Dispatcher()
    const ran = []
    dispatcher.register('echo', (params) => {
      ran.push(params[0])
      return params[0]
    })
    const rateLimiter = new RateLimiter({ policy: { rate: 1, burst: 5 }, methodCosts: { echo: 2 } })
    const envelope = new Envelope(dispatcher, defaultTransportLimits, { rateLimiter })
    const batch = [req(1, 'echo', ['a']), req(2, 'echo', ['b']), req(3, 'echo', ['c']), { jsonrpc: '2.0', method: 'echo', params: ['n'] }, req(4, 'echo', ['d'])]
    const httpCtx = { transport: 'http', clientIp: '10.7.0.1', retryAfterSeconds: 0 }
    const answers = JSON.parse(await envelope.handle(JSON.stringify(batch), httpCtx))
    assert.deepEqual(ran, ['a', 'b'], 'the burst (5) covers two calls of cost 2, in order')
    assert.deepEqual(answers.map((a) => a.result ?? a.error.code), ['a', 'b', -32005, -32005])
    assert.equal(answers[2].error.message, 'limit exceeded')
    assert.ok(answers[3].error.data.retryAfter >= 1)
    assert.equal(httpCtx.retryAfterSeconds, 0, 'served in part: HTTP 200, no Retry-After')
    // a fresh address's large batch buys one burst, not a debt
    const large = Array.from({ length: 100 }, (_, i) => req(i, 'echo', [i]))
    const fresh = JSON.parse(await envelope.handle(JSON.stringify(large), { transport: 'http', clientIp: '10.7.0.2' }))
    assert.equal(fresh.filter((a) => 'result' in a).length, 2)
    const next = JSON.parse(await envelope.handle(JSON.stringify(req(9, 'echo', ['x'])), { transport: 'http', clientIp: '10.7.0.2' }))
    assert.equal(next.error.code, -32005)
    assert.equal(next.error.data.retryAfter, 1, 'one token short, no debt to repay')
  })
})
