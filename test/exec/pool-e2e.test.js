// Through a running node: a runaway eth_call answers geth's timeout error, and methods that need no
// EVM answer at once while the call pool is saturated.

import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { startNode, DEV_ADDRESSES } from '../helpers/node.js'
import { rpc } from '../helpers/rpc.js'

const LOOPER = '0x00000000000000000000000000000000000100f1'
const loopCall = (id) => [{ to: LOOPER, data: `0x${id.toString(16).padStart(8, '0')}` }, 'latest', { [LOOPER]: { code: '0x5b6020600020505b600056' } }]

let node
before(async () => {
  node = await startNode({ args: ['--call-workers', '1', '--rpc-evm-timeout-ms', '400'] })
})
after(async () => {
  await node?.stop()
})

test('reads answer quickly while the pool is saturated; runaway calls get the timeout error', async () => {
  await rpc(node.url, 'eth_blockNumber')
  // One worker, four calls that each run until the 400 ms timeout: the pool stays busy for ~1.6 s.
  let settled = 0
  const slow = Array.from({ length: 4 }, (_, i) => rpc(node.url, 'eth_call', loopCall(i)).finally(() => settled++))
  await new Promise((resolve) => setTimeout(resolve, 50))
  for (let i = 0; i < 5; i++) {
    const [bn, bal] = await Promise.all([rpc(node.url, 'eth_blockNumber'), rpc(node.url, 'eth_getBalance', [DEV_ADDRESSES[0], 'latest'])])
    assert.match(bn.result, /^0x[0-9a-f]+$/)
    assert.match(bal.result, /^0x[0-9a-f]+$/)
  }
  // the reads did not queue behind the pool: they were all answered while runaway calls still ran
  assert.ok(settled < 4, `reads were answered only after ${settled} of 4 pool calls had finished`)
  const answers = await Promise.all(slow)
  for (const a of answers) assert.deepEqual(a.error, { code: -32000, message: 'execution aborted (timeout = 400ms)' })
  const fine = await rpc(node.url, 'eth_estimateGas', [{ from: DEV_ADDRESSES[0], to: LOOPER, value: '0x1' }])
  assert.equal(fine.result, '0x5208')
})
