// The main thread's handle on the chain thread holds the blocks reported between 'ready' and the moment
// every listener is in place (the view, caches, metrics): none is lost, and they arrive in order.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { ProducerClient } from '../../dist/chain/producer-client.js'

test('blocks reported before the listeners are in place reach them once delivered, in order; later ones at once', async () => {
  const client = new ProducerClient((message) => assert.fail(message), new URL('../fixtures/threads/early-blocks.js', import.meta.url))
  try {
    client.start({})
    await client.ready
    // the thread's three blocks have come in while nothing listened
    await sleep(200)
    const seen = []
    client.onBlock((event) => seen.push(event.head.number))
    assert.deepEqual(seen, [], 'held until deliverBlocks')
    client.deliverBlocks()
    assert.deepEqual(seen, ['1', '2', '3'])
    client.deliverBlocks()
    assert.deepEqual(seen, ['1', '2', '3'], 'a second call delivers nothing twice')
    // any message makes the fixture report one more block
    const more = new Promise((resolve) => client.onBlock((event) => resolve(event.head.number)))
    client['worker'].postMessage({ kind: 'next' })
    assert.equal(await more, '4')
    assert.deepEqual(seen, ['1', '2', '3', '4'])
  } finally {
    await client.discard()
  }
})
