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
