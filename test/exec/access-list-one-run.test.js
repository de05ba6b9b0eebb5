// eth_createAccessList answers geth's way: the gas of a run with the list it found. When the first run's
// path cannot depend on its gas, that run's gas is derived from it (cold-accesses.ts) instead of running
// again; these cases hold the derived answer to runs that execute with the list, direct and through
// runTx (a fee paid).

import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { hexToBytes } from '@ethereumjs/util'
import { Interface } from 'ethers'
import { ExecEngine } from '../../dist/exec/engine.js'
import { compile } from '../helpers/contracts.js'
import { deploy, openTempChain } from '../../bench/lib/temp-chain.js'

const CODE = '0x000000000000000000000000000000000000a11c'
const OTHERS = ['0x00000000000000000000000000000000000b0b01', '0x00000000000000000000000000000000000b0b02', '0x00000000000000000000000000000000000b0b03']
const FEES = { maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1n }
const slot = (n) => '0x' + n.toString(16).padStart(64, '0')
const push20 = (a) => '73' + a.slice(2)
const show = (v) => JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x))

// set once the chain is up (before)
let chain, engine, token, reverter, storage, alice
const tokenAbi = new Interface(compile().Token.abi)
const reverterAbi = new Interface(compile().Reverter.abi)
const storageAbi = new Interface(compile().Storage.abi)

before(async () => {
  chain = await openTempChain()
  alice = chain.dev[0].address
  token = await deploy(chain, compile().Token.bytecode)
  reverter = await deploy(chain, compile().Reverter.bytecode)
  storage = await deploy(chain, compile().Storage.bytecode)
  engine = new ExecEngine(chain.common, chain.level, { gasCap: 50_000_000n, timeoutMs: 5000 })
})

after(async () => {
  await chain?.close()
})

function task(args, extra = {}) {
  return { kind: 'createAccessList', block: chain.headExecBlock(), args, ...extra }
}

/** The answer, and how many runs it took (listing runs, direct or through runTx, and runs after them). */
async function answer(args, extra) {
  const { listingRun, runOnce } = engine
  let runs = 0
  engine.listingRun = (...a) => {
    runs++
    return listingRun.apply(engine, a)
  }
  engine.runOnce = (...a) => {
    runs++
    return runOnce.apply(engine, a)
  }
  try {
    const r = await engine.run(task(args, extra))
    assert.equal(r.ok, true, show(r))
    return { r, runs }
  } finally {
    delete engine.listingRun
    delete engine.runOnce
  }
}

/**
 * The answer derived from one run equals that of runs with the list: given it up front (a direct run),
 * and through runTx (a fee paid) until the list is stable. With `oneRun` true (false), both requests
 * without a list took one run (two), the direct one and the one through runTx.
 */
async function agrees(args, extra, { oneRun }) {
  const { r, runs } = await answer(args, extra)
  const paying = await answer({ ...args, ...FEES }, extra)
  if (oneRun !== undefined) {
    assert.equal(runs, oneRun ? 1 : 2, `runs for ${show(args)}`)
    assert.equal(paying.runs, oneRun ? 1 : 2, `runs through runTx for ${show(args)}`)
  }
  assert.deepEqual(paying.r, r, 'through runTx')
  const given = await answer({ ...args, accessList: r.accessList }, extra)
  assert.equal(given.runs, 1)
  assert.deepEqual(given.r, r, 'a direct run with the list')
  const givenPaying = await answer({ ...args, ...FEES, accessList: r.accessList }, extra)
  assert.equal(givenPaying.runs, 1)
  assert.deepEqual(givenPaying.r, r, 'through runTx with the list')
  return r
}

const code = (hex, state) => ({ stateOverrides: { [CODE]: { code: hexToBytes(hex), ...(state ? { state } : {}) } } })

describe('eth_createAccessList in one run', () => {
  test('an ERC20 transfer (SLOADs, SSTOREs, a log)', async () => {
    const data = hexToBytes(tokenAbi.encodeFunctionData('transfer', [OTHERS[0], 5n]))
    const r = await agrees({ from: alice, to: token, data }, undefined, { oneRun: true })
    assert.equal(r.accessList.length, 1)
    assert.equal(r.accessList[0].storageKeys.length, 2, 'the two balances')
  })

  test('an SSTORE to a fresh slot, with no SLOAD before it', async () => {
    // PUSH1 1 PUSH1 5 SSTORE STOP
    const r = await agrees({ from: alice, to: CODE }, code('0x600160055500'), { oneRun: true })
    assert.deepEqual(r.accessList, [{ address: CODE, storageKeys: [slot(5)] }])
    // 21,000 + 2,400 + 1,900 listed; PUSH1 PUSH1 6, SSTORE 20,000 warm
    assert.equal(r.gasUsed, 21_000n + 2_400n + 1_900n + 6n + 20_000n)
  })

  test('BALANCE, EXTCODEHASH and EXTCODECOPY of cold addresses, the recipient and a precompile', async () => {
    const hex = '0x' +
      push20(OTHERS[0]) + '3150' + // BALANCE POP
      push20(OTHERS[1]) + '3f50' + // EXTCODEHASH POP
      '602060006000' + push20(token) + '3c' + // EXTCODECOPY 32 bytes of the token's code to memory 0
      '30315060013b50' + // ADDRESS BALANCE POP, PUSH1 1 EXTCODESIZE POP (warm: not listed)
      push20(OTHERS[0]) + '3b5000' // EXTCODESIZE POP of the first again (warm now), STOP
    const r = await agrees({ from: alice, to: CODE }, code(hex), { oneRun: true })
    assert.deepEqual(r.accessList.map((i) => i.address), [OTHERS[0], OTHERS[1], token.toLowerCase()])
  })

  test('a revert after an SLOAD', async () => {
    // PUSH1 7 SLOAD POP PUSH1 0 PUSH1 0 REVERT
    const r = await agrees({ from: alice, to: CODE }, code('0x6007545060006000fd'), { oneRun: true })
    assert.equal(r.error, 'execution reverted')
    assert.deepEqual(r.accessList, [{ address: CODE, storageKeys: [slot(7)] }])
  })

  test('a slot cleared (a refund, capped at a fifth of the gas used)', async () => {
    // PUSH1 0 PUSH1 1 SSTORE PUSH1 0 PUSH1 2 SSTORE STOP: two set slots cleared
    const r = await agrees({ from: alice, to: CODE }, code('0x600060015560006002550000', { [slot(1)]: slot(9), [slot(2)]: slot(9) }), { oneRun: true })
    assert.deepEqual(r.accessList, [{ address: CODE, storageKeys: [slot(1), slot(2)] }])
  })

  test('a SELFDESTRUCT to a cold beneficiary', async () => {
    const r = await agrees({ from: alice, to: CODE }, code('0x' + push20(OTHERS[2]) + 'ff'), { oneRun: true })
    assert.deepEqual(r.accessList, [{ address: OTHERS[2], storageKeys: [] }])
  })

  test('a run that reads GAS or makes a call takes the second run', async () => {
    // GAS POP PUSH1 3 SLOAD POP STOP
    await agrees({ from: alice, to: CODE }, code('0x5a5060035450 00'.replace(' ', '')), { oneRun: false })
    // STATICCALL(gas, token, 0, 0, 0, 0): the token's fallback reverts, the call's result is popped
    const hex = '0x6000600060006000' + push20(token) + '5afa5000'
    await agrees({ from: alice, to: CODE }, code(hex), { oneRun: false })
  })

  test('a gas limit too tight for the list\'s intrinsic gas takes the second run, which decides', async () => {
    const data = hexToBytes(tokenAbi.encodeFunctionData('transfer', [OTHERS[0], 5n]))
    const roomy = (await answer({ from: alice, to: token, data })).r
    // enough for the run without a list, too little for the one with it
    const gas = roomy.gasUsed - 1_000n
    const { r, runs } = await answer({ from: alice, to: token, data, gas })
    assert.equal(runs >= 2, true, `runs ${runs}`)
    const paying = await answer({ from: alice, to: token, data, gas, ...FEES })
    assert.equal(paying.runs >= 2, true, `runs through runTx ${paying.runs}`)
    assert.deepEqual(r, paying.r)
  })
})

describe('eth_createAccessList of compiled contracts: the same answer with the list given, direct and through runTx', () => {
  test('an OpenZeppelin ERC20, a revert shape for each kind, a log emitter, a storage contract and a call between contracts', async () => {
    const calls = [
      [token, tokenAbi.encodeFunctionData('approve', [OTHERS[0], 7n])],
      [token, tokenAbi.encodeFunctionData('transfer', [alice, 1n])],
      [token, tokenAbi.encodeFunctionData('transfer', [OTHERS[1], 0n])],
      [token, tokenAbi.encodeFunctionData('transferFrom', [OTHERS[0], alice, 1n])],
      [token, tokenAbi.encodeFunctionData('balanceOf', [OTHERS[2]])],
      [token, tokenAbi.encodeFunctionData('name')],
      [token, tokenAbi.encodeFunctionData('totalSupply')],
      [token, '0x12345678'],
      ...['failRequire', 'failPanic', 'failEmpty', 'ok'].map((f) => [reverter, reverterAbi.encodeFunctionData(f)]),
      [reverter, reverterAbi.encodeFunctionData('failCustom', [3n])],
      [reverter, reverterAbi.encodeFunctionData('emitMany', [3n])],
      [storage, storageAbi.encodeFunctionData('set', [11n])],
      [storage, storageAbi.encodeFunctionData('set', [0n])],
      [storage, storageAbi.encodeFunctionData('value')],
      [storage, storageAbi.encodeFunctionData('copyFrom', [storage])],
    ]
    let oneRun = 0
    for (const [to, data] of calls) {
      const args = { from: alice, to, data: hexToBytes(data) }
      const r = await agrees(args, undefined, {})
      if ((await answer(args)).runs === 1 && r.accessList.length > 0) oneRun++
    }
    assert.ok(oneRun >= 10, `answered in one run: ${oneRun} of ${calls.length}`)
  })
})
