// The eth_call result cache: a request in flight is shared; a settled success or revert can be read at
// once (peek), anything else is forgotten.

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { CallResultCache } from '../../dist/exec/call-cache.js'

const success = { ok: true, kind: 'call', returnData: '0x01' }
const revert = { ok: false, error: { code: 3, message: 'execution reverted', data: '0x' } }
const failure = { ok: false, error: { code: -32000, message: 'execution aborted (timeout = 5s)' } }

test('a request in flight is shared, and readable at once only when it has settled', async () => {
  const cache = new CallResultCache()
  let runs = 0
  let resolve
  const compute = () => {
    runs++
    return new Promise((r) => (resolve = r))
  }
  const first = cache.run('k', compute)
  const second = cache.run('k', compute)
  assert.equal(runs, 1)
  assert.equal(cache.peek('k'), undefined, 'not settled yet')
  resolve(success)
  assert.equal(await first, success)
  assert.equal(await second, success)
  assert.equal(cache.peek('k'), success)
  assert.equal(cache.peek('other'), undefined)
})

test('reverts are kept, other failures and rejections are not', async () => {
  const cache = new CallResultCache()
  await cache.run('revert', async () => revert)
  await cache.run('failure', async () => failure)
  await cache.run('thrown', async () => Promise.reject(new Error('boom'))).catch(() => {})
  await new Promise((r) => setImmediate(r))
  assert.equal(cache.peek('revert'), revert)
  assert.equal(cache.peek('failure'), undefined)
  assert.equal(cache.peek('thrown'), undefined)
  let runs = 0
  await cache.run('failure', async () => (runs++, success))
  assert.equal(runs, 1, 'a failure is run again')
})

test('keys tell blocks, kinds and request parts apart, and are flat JSON text', () => {
  const a = '0x' + 'aa'.repeat(32)
  const b = '0x' + 'bb'.repeat(32)
  const req = { to: '0x5fbdb2315678afecb367f032d93f642f64180aa3', data: '0x70a08231' }
  const key = CallResultCache.key(a, 'call', [req, undefined, undefined])
  assert.equal(key, CallResultCache.key(a, 'call', [{ ...req }, undefined, undefined]), 'equal requests share a key')
  const others = [
    CallResultCache.key(b, 'call', [req, undefined, undefined]),
    CallResultCache.key(a, 'estimateGas', [req, undefined, undefined]),
    CallResultCache.key(a, 'call', [{ ...req, data: '0x70a08232' }, undefined, undefined]),
    CallResultCache.key(a, 'call', [req, { [req.to]: { balance: '0x1' } }, undefined]),
    CallResultCache.key(a, 'call', [req, undefined, { number: '0x1' }]),
    // a separator inside a value cannot make two different requests collide
    CallResultCache.key(a, 'call', [{ to: req.to, data: '0x70a08231","x":"' }, undefined, undefined]),
  ]
  for (const other of others) assert.notEqual(other, key)
  assert.equal(new Set(others).size, others.length)
  assert.deepEqual(JSON.parse(key), [a, 'call', req, null, null])
})

test('the least recently used entries go first once the cache is full', async () => {
  const cache = new CallResultCache({ maxEntries: 4 })
  for (const k of ['a', 'b', 'c']) await cache.run(k, async () => success)
  assert.equal(cache.peek('a'), success, 'a hit keeps the entry')
  for (const k of ['d', 'e', 'f', 'g']) await cache.run(k, async () => success)
  assert.ok(cache.size <= 4)
  assert.equal(cache.peek('g'), success)
  assert.equal(cache.peek('b'), undefined, 'the oldest unused entry is gone')
})

test('another client joining a request in flight is told (its call may wait in the first client\'s lane)', async () => {
  const joins = []
  const cache = new CallResultCache({ onJoin: (running, client) => joins.push({ running, client }) })
  let resolve
  const first = cache.run('k', () => new Promise((r) => (resolve = r)), '198.51.100.7')
  cache.run('k', () => assert.fail('shared'), '198.51.100.7')
  assert.equal(joins.length, 0, 'the same client')
  const second = cache.run('k', () => assert.fail('shared'), '198.51.100.8')
  assert.equal(joins.length, 1)
  assert.equal(joins[0].running, first)
  assert.equal(joins[0].client, '198.51.100.8')
  resolve(success)
  assert.equal(await second, success)
  await cache.run('k', () => assert.fail('cached'), '198.51.100.9')
  assert.equal(joins.length, 1, 'a settled answer joins nothing')
})
