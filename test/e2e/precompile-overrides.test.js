// eth_call's state overrides on precompiles, as geth's override.StateOverride.Apply: movePrecompileToAddress
// makes the precompile answer at its new address; an override of a precompile's own address takes the
// precompile away, so code put there runs. The call workers keep their EVMs from call to call: the next
// call without overrides finds every precompile where it was.

import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { after, before, test } from 'node:test'
import { startNode } from '../helpers/node.js'
import { rpc, rpcResult } from '../helpers/rpc.js'

const SHA256 = '0x0000000000000000000000000000000000000002'
const IDENTITY = '0x0000000000000000000000000000000000000004'
const MOVED = '0x0000000000000000000000000000000000123456'
const INPUT = '0x6b65656c'
const sha256Of = (hex) => `0x${createHash('sha256').update(Buffer.from(hex.slice(2), 'hex')).digest('hex')}`
/** returns the 32-byte word 0x2a */
const RETURNS_42 = '0x602a60005260206000f3'
const WORD_42 = `0x${'2a'.padStart(64, '0')}`

let node

before(async () => {
  node = await startNode({ blockTime: 1 })
})

after(async () => {
  await node?.stop()
})

const call = (to, overrides) => rpcResult(node.url, 'eth_call', [{ to, input: INPUT }, 'latest', overrides])

test('movePrecompileToAddress: the precompile answers at its new address, and code can take its old one', async () => {
  assert.equal(await call(MOVED, { [SHA256]: { movePrecompileToAddress: MOVED } }), sha256Of(INPUT))
  assert.equal(await call(SHA256, { [SHA256]: { movePrecompileToAddress: MOVED, code: RETURNS_42 } }), WORD_42)
  // without overrides, nothing moved: the worker's EVM got its precompiles back
  assert.equal(await call(SHA256), sha256Of(INPUT))
  assert.equal(await call(MOVED), '0x')
})

test("an override of a precompile's own address replaces the precompile with the code it gives", async () => {
  assert.equal(await call(IDENTITY), INPUT)
  assert.equal(await call(IDENTITY, { [IDENTITY]: { code: RETURNS_42 } }), WORD_42)
  assert.equal(await call(IDENTITY), INPUT)
})

test('movePrecompileToAddress refuses what geth refuses, in its words', async () => {
  const refused = async (overrides) => {
    const response = await rpc(node.url, 'eth_call', [{ to: MOVED, input: INPUT }, 'latest', overrides])
    assert.ok(response.error, `refused: ${JSON.stringify(overrides)}`)
    assert.equal(response.error.code, -32000)
    return response.error.message
  }
  assert.equal(await refused({ [MOVED]: { movePrecompileToAddress: SHA256 } }), 'account 0x0000000000000000000000000000000000123456 is not a precompile')
  assert.equal(
    await refused({ [SHA256]: { movePrecompileToAddress: MOVED }, [MOVED]: { balance: '0x1' } }),
    'account 0x0000000000000000000000000000000000123456 is already overridden',
  )
  assert.equal(
    await refused({ [SHA256]: { movePrecompileToAddress: SHA256 } }),
    'account 0x0000000000000000000000000000000000000002 is already overridden',
  )
})
