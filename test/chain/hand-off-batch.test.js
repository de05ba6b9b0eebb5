// Requests to the producer thread travel in batches, one batch in flight at a time: what is asked in one
// turn goes in one message, what is asked while a batch is out waits for its reply, answers keep their
// order, and a failed message fails exactly the requests it carried.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { HandOffBatch } from '../../dist/chain/hand-off-batch.js'

/** A send that records each batch and leaves it open until the test settles it. */
function recordingSend() {
  const sent = []
  const send = (items) =>
    new Promise((resolve, reject) => {
      sent.push({ items, resolve, reject })
    })
  return { sent, send }
}

const turn = () => new Promise((resolve) => setImmediate(resolve))

test('what is asked in one turn travels in one message; answers come back in order', async () => {
  const { sent, send } = recordingSend()
  const batch = new HandOffBatch(send)
  const answers = [batch.add('a'), batch.add('b'), batch.add('c')]
  assert.equal(sent.length, 0, 'nothing leaves before the turn ends')
  await turn()
  assert.equal(sent.length, 1)
  assert.deepEqual(sent[0].items, ['a', 'b', 'c'])
  sent[0].resolve(['A', 'B', 'C'])
  assert.deepEqual(await Promise.all(answers), ['A', 'B', 'C'])
  assert.equal(batch.batches, 1)
  assert.equal(batch.items, 3)
})

test('while a batch is out, new requests wait for its reply and then leave together', async () => {
  const { sent, send } = recordingSend()
  const batch = new HandOffBatch(send)
  const first = batch.add(1)
  await turn()
  assert.equal(sent.length, 1)
  const later = [batch.add(2), batch.add(3)]
  await turn()
  await turn()
  assert.equal(sent.length, 1, 'a second batch waits while the first is out')
  sent[0].resolve([10])
  assert.equal(await first, 10)
  // the reply's bookkeeping runs after the answers, and the next batch leaves on the turn after that
  await turn()
  await turn()
  assert.equal(sent.length, 2)
  assert.deepEqual(sent[1].items, [2, 3])
  sent[1].resolve([20, 30])
  assert.deepEqual(await Promise.all(later), [20, 30])
  // idle again: the next request leaves on the next turn
  const next = batch.add(4)
  await turn()
  assert.equal(sent.length, 3)
  sent[2].resolve([40])
  assert.equal(await next, 40)
  assert.equal(batch.batches, 3)
  assert.equal(batch.items, 4)
})

test('a failed message fails the requests it carried, and only those', async () => {
  const { sent, send } = recordingSend()
  const batch = new HandOffBatch(send)
  const carried = [batch.add('x'), batch.add('y')]
  await turn()
  const waiting = batch.add('z')
  const failure = new Error('producer thread exited (code 1)')
  sent[0].reject(failure)
  for (const p of carried) await assert.rejects(p, failure)
  await turn()
  assert.equal(sent.length, 2, 'the request that waited still leaves')
  assert.deepEqual(sent[1].items, ['z'])
  sent[1].resolve(['Z'])
  assert.equal(await waiting, 'Z')
})
