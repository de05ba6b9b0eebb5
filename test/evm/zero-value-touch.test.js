// The call workers' EVM skips the unchanged account writes of a zero-value frame (patched evm.js,
// keelSkipZeroValueTouch). Nothing a call returns may differ from the stock path: the same programs run
// on two EVMs over the same state, one with the switch, must agree on return data, gas, logs and errors.

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Common, Hardfork, Mainnet } from '@ethereumjs/common'
import { createEVM } from '@ethereumjs/evm'
import { Account, Address, bytesToHex, hexToBytes } from '@ethereumjs/util'
import '../../dist/evm/speedups.js'

const addr = (n) => `${n.toString(16).padStart(40, '0')}`
const CALLER = addr(0xca11e5) // no account
const A = addr(0xaaaa00) // the program under test
const C = addr(0xcccc00) // a contract A calls: stores 1 at slot 0, logs, returns 32 bytes
const E = addr(0xeeee00) // an existing empty account (e.g. from a genesis alloc)
const N = addr(0x5eed) // no account
const IDENTITY = addr(4) // a precompile

const push = (hex) => `${(0x5f + hex.length / 2).toString(16)}${hex}`
const word = (n) => push(n.toString(16).padStart(2, '0'))
// CALL / CALLCODE (value) and DELEGATECALL / STATICCALL (none), output to memory 0x80..0xa0
const call = (op, target, value) =>
  word(32) + word(0x80) + word(0) + word(0) + (value === undefined ? '' : word(value)) + push(target) + push('c350') + op + '50'
// EXTCODEHASH, BALANCE, EXTCODESIZE of `target` and the called frame's output, returned
const probe = (target) =>
  `${push(target)}3f${word(0)}52${push(target)}31${word(32)}52${push(target)}3b${word(64)}52` + `${word(0x80)}51${word(96)}52` + `5a${word(128)}52${word(160)}${word(0)}f3`
const C_CODE = `${word(1)}${word(0)}55${word(0x2a)}${word(0)}52${word(0)}${word(0)}a0${word(32)}${word(0)}f3`

const programs = []
for (const target of [N, E, C, A, CALLER, IDENTITY]) {
  for (const value of [0, 1]) {
    programs.push([`CALL value ${value} to ${target}`, call('f1', target, value) + probe(target)])
    programs.push([`CALLCODE value ${value} to ${target}`, call('f2', target, value) + probe(target)])
  }
  programs.push([`DELEGATECALL to ${target}`, call('f4', target) + probe(target)])
  programs.push([`STATICCALL to ${target}`, call('fa', target) + probe(target)])
  // two zero-value calls in a row: the second sees whatever the first left
  programs.push([`two zero-value CALLs to ${target}`, call('f1', target, 0) + call('f1', target, 0) + probe(target)])
}

async function evmWith(skip) {
  const common = new Common({ chain: Mainnet, hardfork: Hardfork.Osaka })
  const evm = await createEVM({ common })
  evm.keelSkipZeroValueTouch = skip
  return evm
}

async function run(skip, code, { to = A, value = 0n } = {}) {
  const evm = await evmWith(skip)
  const sm = evm.stateManager
  const at = (a) => new Address(hexToBytes(`0x${a}`))
  await sm.putAccount(at(A), new Account(0n, 10n ** 18n))
  await sm.putCode(at(A), hexToBytes(`0x${code}`))
  await sm.putAccount(at(C), new Account())
  await sm.putCode(at(C), hexToBytes(`0x${C_CODE}`))
  await sm.putAccount(at(E), new Account())
  const { execResult } = await evm.runCall({ caller: at(CALLER), origin: at(CALLER), to: at(to), value, gasLimit: 1_000_000n, skipBalance: true })
  return {
    returnValue: bytesToHex(execResult.returnValue),
    gasUsed: execResult.executionGasUsed,
    refund: execResult.gasRefund,
    error: execResult.exceptionError?.error,
    logs: JSON.stringify((execResult.logs ?? []).map((l) => l.map((x) => (Array.isArray(x) ? x.map(bytesToHex) : bytesToHex(x))))),
  }
}

test('zero-value frames without the account writes return what the stock EVM returns', async () => {
  for (const [name, code] of programs) {
    const stock = await run(false, code)
    const skipped = await run(true, code)
    assert.deepEqual(skipped, stock, name)
    assert.equal(stock.error, undefined, `${name} ran to the end`)
  }
})

test('top-level messages: zero value and value, to code, to an empty account, to nothing', async () => {
  for (const [to, value] of [[A, 0n], [A, 5n], [E, 0n], [N, 0n], [C, 0n], [N, 3n]]) {
    const code = call('f1', N, 0) + probe(N)
    assert.deepEqual(await run(true, code, { to, value }), await run(false, code, { to, value }), `to ${to} value ${value}`)
  }
})

test('the switch is what skips the writes: a zero-value frame touches no account with it, two without it', async () => {
  const touched = async (skip) => {
    const evm = await evmWith(skip)
    let writes = 0
    const put = evm.journal.putAccount.bind(evm.journal)
    evm.journal.putAccount = (...args) => {
      writes++
      return put(...args)
    }
    await evm.runCall({ caller: new Address(hexToBytes(`0x${CALLER}`)), to: new Address(hexToBytes(`0x${N}`)), gasLimit: 100_000n, skipBalance: true, skipNonceIncrement: true })
    return writes
  }
  assert.equal(await touched(false), 2)
  assert.equal(await touched(true), 0)
})
