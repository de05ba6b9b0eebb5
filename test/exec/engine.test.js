// The call engine against a real chain database: calls never write, estimates follow geth, the gas caps
// hold, and the revert-proof read caches keep answers right (overrides included).

import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { hexToBytes } from '@ethereumjs/util'
import { Interface } from 'ethers'
import { ExecEngine } from '../../dist/exec/engine.js'
import { compile } from '../helpers/contracts.js'
import { deploy, openTempChain } from '../../bench/lib/temp-chain.js'

const LOOP_CODE = hexToBytes('0x5b600056') // JUMPDEST PUSH1 0 JUMP: runs until it is out of gas
const STRANGER = '0x00000000000000000000000000000000deadbeef'
const RECIPIENT = '0x1111111111111111111111111111111111111111'

let chain
let engine
let token
let reverter
let alice
const tokenAbi = new Interface(compile().Token.abi)
const reverterAbi = new Interface(compile().Reverter.abi)

const transferData = (to, amount) => hexToBytes(tokenAbi.encodeFunctionData('transfer', [to, amount]))
const balanceOfData = (who) => hexToBytes(tokenAbi.encodeFunctionData('balanceOf', [who]))

function task(kind, args, extra = {}) {
  return { kind, block: chain.headExecBlock(), args, ...extra }
}

async function balanceOf(who, extra) {
  const r = await engine.run(task('call', { to: token, data: balanceOfData(who) }, extra))
  assert.equal(r.ok, true, JSON.stringify(r, (_k, v) => (typeof v === "bigint" ? v.toString() : v)))
  return BigInt(r.returnData)
}

before(async () => {
  const { Token, Reverter } = compile()
  chain = await openTempChain()
  alice = chain.dev[0].address
  token = await deploy(chain, Token.bytecode)
  reverter = await deploy(chain, Reverter.bytecode)
  engine = new ExecEngine(chain.common, chain.level, { gasCap: 50_000_000n, timeoutMs: 5000 })
})

after(async () => {
  await chain?.close()
})

describe('a call never writes to the database', () => {
  test('state-changing calls, estimates and overrides leave writesAttempted at 0 and state unchanged', async () => {
    const before = await balanceOf(alice)
    assert.equal(before, 1_000_000n * 10n ** 18n)
    const call = await engine.run(task('call', { from: alice, to: token, data: transferData(RECIPIENT, 5n) }))
    assert.deepEqual(call, { ok: true, kind: 'call', returnData: `0x${'00'.repeat(31)}01` })
    const est = await engine.run(task('estimateGas', { from: alice, to: token, data: transferData(RECIPIENT, 5n) }))
    assert.equal(est.ok, true)
    // a stranger with an overridden balance and a contract replaced by a loop through overrides
    const overridden = await engine.run(
      task('call', { from: STRANGER, to: token, data: transferData(RECIPIENT, 7n), value: 0n }, {
        stateOverrides: {
          [STRANGER]: { balance: 10n ** 20n, nonce: 5n },
          [token]: { stateDiff: {} },
        },
      }),
    )
    assert.equal(overridden.ok, false) // ERC20InsufficientBalance: the stranger holds no tokens
    assert.equal(overridden.error.code, 3)
    const created = await engine.run(task('call', { from: alice, to: null, data: hexToBytes(compile().Storage.bytecode) }))
    assert.equal(created.ok, true)
    const accessList = await engine.run(task('createAccessList', { from: alice, to: token, data: transferData(RECIPIENT, 5n) }))
    assert.equal(accessList.ok, true)
    assert.equal(engine.writesAttempted, 0)
    assert.equal(await balanceOf(alice), before)
    assert.equal(await balanceOf(RECIPIENT), 0n)
  })
})

describe('eth_estimateGas follows geth', () => {
  test('an ERC20 transfer estimate is enough and close to the gas the mined transfer used', async () => {
    const r = await engine.run(task('estimateGas', { from: alice, to: token, data: transferData(RECIPIENT, 10n ** 18n) }))
    assert.equal(r.ok, true, JSON.stringify(r, (_k, v) => (typeof v === "bigint" ? v.toString() : v)))
    const estimate = r.gas
    const raw = chain.sign(chain.dev[0].key, { to: hexToBytes(token), data: transferData(RECIPIENT, 10n ** 18n), gasLimit: estimate })
    await chain.submit(raw)
    await chain.sealBlock()
    const used = chain.head.gasUsed // the only tx of the block
    assert.equal(await balanceOf(RECIPIENT), 10n ** 18n, 'the transfer with the estimated gas succeeded')
    assert.ok(estimate >= used, `estimate ${estimate} >= used ${used}`)
    assert.ok(estimate <= (used * 103n) / 100n + 2300n, `estimate ${estimate} close to used ${used}`)
  })

  test('estimates are the least gas that works: the estimate succeeds, one less runs out (refunds and fees too)', async () => {
    // RECIPIENT holds tokens from the test before: moving all of them zeroes its slot (a gas refund)
    assert.ok((await balanceOf(RECIPIENT)) > 0n)
    const cases = [
      ['ERC20 transfer, no fee', { from: alice, to: token, data: transferData(RECIPIENT, 3n) }],
      ['ERC20 transfer, paying fees (runTx path)', { from: alice, to: token, data: transferData(RECIPIENT, 3n), maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1n }],
      ['ERC20 transfer of the whole balance (SSTORE to zero: refund)', { from: RECIPIENT, to: token, data: transferData(alice, await balanceOf(RECIPIENT)) }],
    ]
    for (const [name, args] of cases) {
      const r = await engine.run(task('estimateGas', args))
      assert.equal(r.ok, true, `${name}: ${JSON.stringify(r, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))}`)
      const at = async (gas) => engine.run(task('call', { ...args, gas }))
      const enough = await at(r.gas)
      assert.equal(enough.ok, true, `${name}: the call with the estimate (${r.gas}) failed: ${JSON.stringify(enough.error)}`)
      const short = await at(r.gas - 1n)
      assert.equal(short.ok, false, `${name}: ${r.gas - 1n} gas was enough too, so ${r.gas} is not the least`)
    }
  })

  test('estimates of code whose path depends on the gas left still succeed (GAS, the SSTORE stipend check)', async () => {
    // an estimate may skip re-running at the gas the first run consumed only when nothing looked at the
    // gas left; each of these would fail at exactly that gas
    const cases = [
      // GAS PUSH3 100000 LT PUSH1 13 JUMPI PUSH1 0 DUP1 REVERT JUMPDEST STOP: reverts unless > 100000 gas is left
      ['a branch on GAS', '0x5a620186a010600d57600080fd5b00'],
      // SSTORE(0, 1) then SSTORE(0, 2): the second write costs 100, but EIP-2200 refuses it with 2300 or less left
      ['a cheap SSTORE at the very end', '0x600160005560026000555b00'],
    ]
    for (const [name, code] of cases) {
      const overrides = { stateOverrides: { [STRANGER]: { code: hexToBytes(code) } } }
      const r = await engine.run(task('estimateGas', { from: alice, to: STRANGER }, overrides))
      assert.equal(r.ok, true, `${name}: ${JSON.stringify(r.error)}`)
      const consumed = 21_000n + 40_000n
      assert.ok(r.gas < consumed + 100_000n + 10_000n, `${name}: ${r.gas} is a search result, not the cap`)
      const enough = await engine.run(task('call', { from: alice, to: STRANGER, gas: r.gas }, overrides))
      assert.equal(enough.ok, true, `${name}: the call with the estimate (${r.gas}) failed: ${JSON.stringify(enough.error)}`)
    }
  })

  test('a plain transfer is exactly 21000', async () => {
    const r = await engine.run(task('estimateGas', { from: alice, to: RECIPIENT, value: 1n }))
    assert.deepEqual(r, { ok: true, kind: 'estimateGas', gas: 21000n })
  })

  test('a reverting call answers code 3 with the revert data', async () => {
    const data = hexToBytes(reverterAbi.encodeFunctionData('failRequire', []))
    const r = await engine.run(task('estimateGas', { from: alice, to: reverter, data }))
    assert.equal(r.ok, false)
    assert.equal(r.error.code, 3)
    assert.equal(r.error.message, 'execution reverted: nope')
    assert.match(r.error.data, /^0x08c379a0/)
  })

  test('a gas limit below what the call needs: gas required exceeds allowance (N)', async () => {
    const r = await engine.run(task('estimateGas', { from: alice, to: token, data: transferData(RECIPIENT, 1n), gas: 30_000n }))
    assert.equal(r.ok, false)
    assert.equal(r.error.code, -32000)
    assert.equal(r.error.message, 'gas required exceeds allowance (30000)')
  })

  test('a call that never ends runs into the Osaka per-transaction cap (2^24)', async () => {
    const r = await engine.run(task('estimateGas', { from: alice, to: STRANGER }, { stateOverrides: { [STRANGER]: { code: LOOP_CODE } } }))
    assert.equal(r.ok, false)
    assert.equal(r.error.message, `gas required exceeds allowance (${1n << 24n})`)
  })

  test('the RPC gas cap bounds calls and estimates', async () => {
    const capped = new ExecEngine(chain.common, chain.level, { gasCap: 100_000n, timeoutMs: 5000 })
    const overrides = { stateOverrides: { [STRANGER]: { code: LOOP_CODE } } }
    const call = await capped.run(task('call', { from: alice, to: STRANGER, gas: 10_000_000n }, overrides))
    assert.equal(call.ok, false)
    assert.equal(call.error.message, 'out of gas')
    const est = await capped.run(task('estimateGas', { from: alice, to: STRANGER }, overrides))
    assert.equal(est.ok, false)
    assert.equal(est.error.message, 'gas required exceeds allowance (100000)')
    assert.equal(capped.writesAttempted, 0)
  })
})

describe('the read caches survive the revert and stay right', () => {
  test('a repeated call reads no storage slot from the trie', async () => {
    await balanceOf(alice)
    const before = engine.readCacheStats.slotMisses
    await balanceOf(alice)
    await balanceOf(alice)
    assert.equal(engine.readCacheStats.slotMisses, before)
  })

  test('slot entries stay valid across a block that did not touch the contract', async () => {
    const balance = await balanceOf(alice)
    await chain.submit(chain.sign(chain.dev[1].key, { to: hexToBytes(RECIPIENT), value: 1n, gasLimit: 21_000n }))
    await chain.sealBlock()
    const misses = engine.readCacheStats.slotMisses
    assert.equal(await balanceOf(alice), balance)
    assert.equal(engine.readCacheStats.slotMisses, misses)
  })

  test('a block that changes the contract is seen at the new head', async () => {
    const before = await balanceOf(RECIPIENT)
    await chain.submit(chain.sign(chain.dev[0].key, { to: hexToBytes(token), data: transferData(RECIPIENT, 3n) }))
    await chain.sealBlock()
    assert.equal(await balanceOf(RECIPIENT), before + 3n)
  })

  test('overrides apply to one call only, over cached reads', async () => {
    const real = await balanceOf(alice)
    // the whole storage replaced: alice holds nothing in this call
    assert.equal(await balanceOf(alice, { stateOverrides: { [token]: { state: {} } } }), 0n)
    // mapping slot 0: _balances[alice] lives at keccak(alice . 0)
    const { keccak256, AbiCoder } = await import('ethers')
    const slot = keccak256(AbiCoder.defaultAbiCoder().encode(['address', 'uint256'], [alice, 0]))
    assert.equal(await balanceOf(alice, { stateOverrides: { [token]: { stateDiff: { [slot]: '0x2a' } } } }), 42n)
    assert.equal(await balanceOf(alice), real)
    assert.equal(engine.writesAttempted, 0)
  })
})

describe('plain eth_call (no gas, no fee) runs the EVM directly and agrees with the runTx path', () => {
  // A plain message runs in the EVM directly; the same message through runTx (the path of calls that pay
  // a fee, create or carry authorizations) must see the same gas (intrinsic gas taken, the same warm
  // addresses), value, storage and revert data. The second run is sent down the runTx path by hand.
  const CAP = 1n << 24n
  const PROBE = '0x00000000000000000000000000000000000a11ce'
  // GAS PUSH1 0 MSTORE ; SELFBALANCE PUSH1 32 MSTORE ; PUSH20 token BALANCE POP ; GAS PUSH1 64 MSTORE ;
  // PUSH1 0 SLOAD PUSH1 96 MSTORE ; PUSH1 128 PUSH1 0 RETURN
  const probeCode = () =>
    hexToBytes(`0x5a600052476020527373${token.slice(2)}31505a604052600054606052608060 00f3`.replace('7373', '73').replace(' ', ''))

  async function both(args, extra = {}) {
    const direct = await engine.run(task('call', { ...args, gas: CAP }, extra))
    const plainCall = engine.plainCall
    let ranTx = 0
    engine.plainCall = (s, block, t, gas) => {
      ranTx++
      return engine.runOnce(s, block, t, gas)
    }
    try {
      const viaRunTx = await engine.run(task('call', { ...args, gas: CAP }, extra))
      assert.equal(ranTx, 1, 'the second run went through runTx')
      return { direct, viaRunTx }
    } finally {
      engine.plainCall = plainCall
    }
  }

  test('gasleft, value, cold account access and storage are the same on both paths', async () => {
    const overrides = { stateOverrides: { [PROBE]: { code: probeCode(), state: { ['0x' + '00'.repeat(32)]: '0x' + '00'.repeat(31) + '2a' } } } }
    for (const args of [
      { to: PROBE },
      { from: alice, to: PROBE, value: 1234n },
      { from: alice, to: PROBE, data: hexToBytes('0x00ff00ff'), accessList: [{ address: token, storageKeys: [] }] },
      // the callee's slot warm from the list (the SLOAD costs 100, not 2,100)
      { from: alice, to: PROBE, accessList: [{ address: PROBE, storageKeys: ['0x' + '00'.repeat(32)] }] },
    ]) {
      const { direct, viaRunTx } = await both(args, overrides)
      assert.equal(direct.ok, true, JSON.stringify(direct))
      assert.deepEqual(direct, viaRunTx)
      const words = direct.returnData.slice(2).match(/.{64}/g).map((w) => BigInt(`0x${w}`))
      assert.ok(words[0] < CAP && words[0] > CAP - 30_000n, `gasleft ${words[0]} after intrinsic gas`)
      assert.equal(words[1], args.value ?? 0n, 'the value reached the callee')
      assert.equal(words[3], 42n)
    }
  })

  test("an access list's slots are warm on both paths; without one, the callee's slots are cold", async () => {
    // GAS PUSH1 0 SLOAD POP GAS SWAP1 SUB PUSH1 0 MSTORE PUSH1 32 PUSH1 0 RETURN: the gas of the SLOAD (+ 7)
    const METER = '0x000000000000000000000000000000000000b10c'
    const overrides = { stateOverrides: { [METER]: { code: hexToBytes('0x5a600054505a900360005260206000f3') } } }
    const slot0 = '0x' + '00'.repeat(32)
    for (const [accessList, expected] of [
      [undefined, 2107n],
      [[{ address: METER, storageKeys: [slot0] }], 107n],
      [[{ address: token, storageKeys: [slot0] }], 2107n],
    ]) {
      const args = accessList === undefined ? { from: alice, to: METER } : { from: alice, to: METER, accessList }
      const { direct, viaRunTx } = await both(args, overrides)
      assert.equal(direct.ok, true, JSON.stringify(direct))
      assert.deepEqual(direct, viaRunTx)
      assert.equal(BigInt(direct.returnData), expected, JSON.stringify(accessList))
    }
  })

  test('reverts, custom errors, panics and ERC20 reads are the same on both paths', async () => {
    for (const data of ['failRequire', 'failEmpty', 'failPanic'].map((f) => reverterAbi.encodeFunctionData(f)).concat(reverterAbi.encodeFunctionData('failCustom', [7n]))) {
      const { direct, viaRunTx } = await both({ from: alice, to: reverter, data: hexToBytes(data) })
      assert.equal(direct.ok, false)
      assert.deepEqual(direct, viaRunTx)
    }
    const { direct, viaRunTx } = await both({ to: token, data: balanceOfData(alice) })
    assert.deepEqual(direct, viaRunTx)
  })
})

describe('eth_createAccessList lists what geth\'s tracer lists', () => {
  const TOUCHER = '0x000000000000000000000000000000000000c0b1'
  // COINBASE BALANCE POP STOP: a touch of the block's coinbase, warm from the start (EIP-3651)
  const touchesCoinbase = { stateOverrides: { [TOUCHER]: { code: hexToBytes('0x41315000') } } }
  // PUSH20 token EXTCODESIZE POP STOP: a cold address
  const touchesToken = () => ({ stateOverrides: { [TOUCHER]: { code: hexToBytes(`0x73${token.slice(2)}3b5000`) } } })

  test('the coinbase when an opcode touches it, on the direct path and through runTx (a fee paid)', async () => {
    const coinbase = chain.headExecBlock().coinbase.toLowerCase()
    for (const fees of [{}, { maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1n }]) {
      const r = await engine.run(task('createAccessList', { from: alice, to: TOUCHER, ...fees }, touchesCoinbase))
      assert.equal(r.ok, true, JSON.stringify(r, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)))
      assert.deepEqual(r.accessList, [{ address: coinbase, storageKeys: [] }])
      // the run with the list: intrinsic 21,000 + 2,400 for the entry, COINBASE 2 + warm BALANCE 100 + POP 2
      assert.equal(r.gasUsed, 23_504n)
      const cold = await engine.run(task('createAccessList', { from: alice, to: TOUCHER, ...fees }, touchesToken()))
      assert.deepEqual(cold.accessList, [{ address: token.toLowerCase(), storageKeys: [] }], 'an address warmed by the run is listed as before')
    }
  })

  test('not the coinbase when it is the sender or nothing touches it, and a plain call is unchanged', async () => {
    const coinbase = chain.headExecBlock().coinbase
    const asSender = await engine.run(task('createAccessList', { from: coinbase, to: TOUCHER }, touchesCoinbase))
    assert.deepEqual(asSender.accessList, [], 'the sender is left out')
    const untouched = await engine.run(task('createAccessList', { from: alice, to: TOUCHER }, touchesToken()))
    assert.ok(!untouched.accessList.some((item) => item.address === coinbase.toLowerCase()))
    // the journal reports nothing after the listing: a call touching the coinbase afterwards runs as ever
    const call = await engine.run(task('call', { from: alice, to: TOUCHER }, touchesCoinbase))
    assert.deepEqual(call, { ok: true, kind: 'call', returnData: '0x' })
  })
})
