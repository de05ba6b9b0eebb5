// A worker's results cross back compactly (eth_call's return data as a bare string) and arrive as sent.

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads'
import { fromWire, toWire } from '../../dist/exec/result-wire.js'

test('every kind of result survives the trip through a MessagePort unchanged', () => {
  const results = [
    { ok: true, kind: 'call', returnData: '0x' },
    { ok: true, kind: 'call', returnData: `0x${'00'.repeat(31)}2a` },
    { ok: true, kind: 'estimateGas', gas: 21000n },
    { ok: true, kind: 'createAccessList', accessList: [{ address: '0x00000000000000000000000000000000000000aa', storageKeys: [`0x${'00'.repeat(32)}`] }], gasUsed: 30000n },
    { ok: true, kind: 'createAccessList', accessList: [], gasUsed: 21000n, error: 'execution reverted' },
    { ok: false, error: { code: 3, message: 'execution reverted: no', data: '0x08c379a0' } },
    { ok: false, error: { code: -32000, message: 'execution aborted (timeout = 5s)' } },
  ]
  const { port1, port2 } = new MessageChannel()
  port1.postMessage(results.map(toWire))
  const arrived = receiveMessageOnPort(port2).message
  port1.close()
  assert.equal(typeof arrived[1], 'string', 'return data travels bare')
  assert.deepEqual(arrived.map(fromWire), results)
})
