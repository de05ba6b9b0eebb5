// The call worker's warm-up: its token code answers as a token's balanceOf does, over real storage, and
// writes nothing; the idle loop yields to the event loop and to clients' calls; a node's warm-up leaves no
// trace in what it reports.

import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { hexToBytes } from '@ethereumjs/util'
import { Interface } from 'ethers'
import { ExecEngine } from '../../dist/exec/engine.js'
import { balanceOfWarmUpCall, warmUpWhileIdle } from '../../dist/exec/warm-up.js'
import { HISTORY_STORAGE } from '../../dist/chain/system-contracts.js'
import { compile } from '../helpers/contracts.js'
import { countTurns } from '../helpers/turns.js'
import { deploy, openTempChain } from '../../bench/lib/temp-chain.js'

const NOBODY = '0x00000000000000000000000000000000000b0b00'

let chain
let engine
let token
let alice
const tokenAbi = new Interface(compile().Token.abi)

before(async () => {
  chain = await openTempChain()
  alice = chain.dev[0].address
  token = await deploy(chain, compile().Token.bytecode)
  engine = new ExecEngine(chain.common, chain.level, { gasCap: 50_000_000n, timeoutMs: 5000 })
})

after(async () => {
  await chain?.close()
})

async function returnOf(task) {
  const r = await engine.run(task)
  assert.equal(r.ok, true, JSON.stringify(r, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)))
  return r.returnData
}

test("in place of a deployed token's code, the warm-up's balanceOf reads the token's own balances", async () => {
  const block = chain.headExecBlock()
  const own = await returnOf({ kind: 'call', block, args: { to: token, data: hexToBytes(tokenAbi.encodeFunctionData('balanceOf', [alice])) } })
  assert.equal(BigInt(own), 1_000_000n * 10n ** 18n)
  // the code is replaced for the call, the storage is the chain's: the mapping's slot is keccak(holder . 0), as solc lays it out
  assert.equal(await returnOf(balanceOfWarmUpCall(block, alice, token)), own)
  assert.equal(BigInt(await returnOf(balanceOfWarmUpCall(block, NOBODY, token))), 0n)
})

test('the warm-up code reverts on another selector and on calldata shorter than a selector', async () => {
  const block = chain.headExecBlock()
  const transfer = balanceOfWarmUpCall(block, alice, token)
  transfer.args.data = hexToBytes(tokenAbi.encodeFunctionData('transfer', [alice, 1n]))
  const short = balanceOfWarmUpCall(block, alice, token)
  short.args.data = hexToBytes('0x70a082')
  for (const task of [transfer, short]) {
    const r = await engine.run(task)
    assert.equal(r.ok, false)
    assert.equal(r.error.code, 3)
    assert.equal(r.error.message, 'execution reverted')
  }
})

test('at the EIP-2935 contract (the default target), warm-up calls answer zero and write nothing', async () => {
  const block = chain.headExecBlock()
  assert.ok(block.number >= 1n, 'the chain has blocks, so the history contract holds block hashes')
  const before = engine.writesAttempted
  const ran = await warmUpWhileIdle(engine, block, async () => true, 50)
  assert.equal(ran, 50)
  assert.equal(BigInt(await returnOf(balanceOfWarmUpCall(block, NOBODY))), 0n)
  assert.equal(balanceOfWarmUpCall(block, NOBODY).args.to, HISTORY_STORAGE.address)
  assert.equal(engine.writesAttempted, before)
  assert.equal(engine.writesAttempted, 0)
})

test('the idle loop runs a call only once idle() resolves, each on a later turn of the event loop', async () => {
  const block = chain.headExecBlock()
  let runs = 0
  const counted = { run: (task) => (runs++, engine.run(task)) }
  let open
  let gate = new Promise((resolve) => (open = resolve))
  const warming = warmUpWhileIdle(counted, block, () => gate, 30)
  for (let i = 0; i < 20; i++) await new Promise(setImmediate)
  assert.equal(runs, 0, 'nothing runs while a client batch is open')
  const turnCount = countTurns()
  open(true)
  gate = Promise.resolve(true)
  assert.equal(await warming, 30)
  const turns = turnCount.stop()
  assert.equal(runs, 30)
  assert.ok(turns >= 29, `other callbacks ran ${turns} times while 30 warm-up calls ran (one a turn)`)
})

test('idle() resolving false (clients warmed the worker) ends the warm-up there', async () => {
  const block = chain.headExecBlock()
  let asked = 0
  const ran = await warmUpWhileIdle(engine, block, async () => ++asked <= 7, 30)
  assert.equal(ran, 7)
  assert.equal(asked, 8)
})

test("a node's call workers warm up without a trace: the pool counts only clients' calls, which are answered", async (t) => {
  const { startNode } = await import('../helpers/node.js')
  const { rpcResult, sleep } = await import('../helpers/rpc.js')
  const node = await startNode({ blockTime: 1 })
  t.after(() => node.stop())
  // a client's call while the workers warm up: answered, and right
  const looper = '0x00000000000000000000000000000000000100f2'
  const code = '0x602a60005260206000f3' // return 42
  assert.equal(await rpcResult(node.url, 'eth_call', [{ to: looper }, 'latest', { [looper]: { code } }]), `0x${'2a'.padStart(64, '0')}`)
  await sleep(1500) // 600 warm-up calls take ~0.15 s of a worker
  const metrics = await (await fetch(node.metricsUrl)).text()
  assert.match(metrics, /^keel_call_pool_calls_total 1$/m)
})
