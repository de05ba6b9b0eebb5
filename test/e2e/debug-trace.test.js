// debug_traceTransaction, debug_traceBlockByNumber/Hash, debug_traceBlock and debug_traceCall as geth answers them: the
// callTracer's frame tree (types, addresses, gas, input and output, errors, revert reasons, logs and their
// positions), the default struct logger's steps (gas accounting, depth, stack, memory, storage), the
// 4byte and noop tracers, per-transaction entries of a block, and geth's errors; and the debug_getRaw*
// consensus encodings, checked against the block's hash and roots. Transactions are sent with ethers.
// The same file runs against anvil (KEEL_E2E_TARGET=anvil) to compare shapes.

import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { createMPT } from '@ethereumjs/mpt'
import { RLP } from '@ethereumjs/rlp'
import { ContractFactory, Interface, JsonRpcProvider, Wallet, getBytes, id as keccakText, hexlify as bytesToHex, keccak256 } from 'ethers'
import { compile } from '../helpers/contracts.js'
import { CHAIN_ID, DEV_KEYS, startNode, target } from '../helpers/node.js'
import { rpc, rpcResult } from '../helpers/rpc.js'

const { Caller, Reverter, Storage } = compile()
const callerAbi = new Interface(Caller.abi)
const storageAbi = new Interface(Storage.abi)
const CALLED = keccakText('Called(uint256)')

let node
let provider
let wallet
let caller
let storage
let reverter
/** receipts by name: the transactions traced below */
const sent = {}

before(async () => {
  // anvil records opcode steps only with --steps-tracing
  // a response limit of 2 MB, so that a trace can pass it (below)
  node = await startNode({ blockTime: 1, args: target === 'anvil' ? ['--steps-tracing'] : ['--batch-response-max-size', '2000000'] })
  provider = new JsonRpcProvider(node.url, CHAIN_ID, { staticNetwork: true, pollingInterval: 200 })
  wallet = new Wallet(DEV_KEYS[6], provider)
  const deploy = async (artifact) => {
    const contract = await new ContractFactory(artifact.abi, artifact.bytecode, wallet).deploy()
    await contract.waitForDeployment()
    return contract
  }
  storage = await deploy(Storage)
  reverter = await deploy(Reverter)
  caller = await deploy(Caller)
  const send = async (name, data, gasLimit = 300_000n, value = 0n) => {
    const tx = await wallet.sendTransaction({ to: await caller.getAddress(), data, gasLimit, value })
    sent[name] = await tx.wait()
  }
  const s = await storage.getAddress()
  sent.callSetData = callerAbi.encodeFunctionData('callSet', [s, 7n])
  await send('callSet', sent.callSetData)
  await send('readValue', callerAbi.encodeFunctionData('readValue', [s]))
  await send('delegateSet', callerAbi.encodeFunctionData('delegateSet', [s, 9n]))
  await send('tryFail', callerAbi.encodeFunctionData('tryFail', [await reverter.getAddress()]))
  await send('create', callerAbi.encodeFunctionData('create', [11n]), 500_000n)
  await send('mixed', callerAbi.encodeFunctionData('mixed', ['0x00000000000000000000000000000000000000dd', `0x${'11'.repeat(32)}`]), 600_000n, 3n)
  await send('destroy', callerAbi.encodeFunctionData('destroy', ['0x00000000000000000000000000000000000000ee']), 100_000n, 4n)
  await send('overspend', callerAbi.encodeFunctionData('overspend', ['0x00000000000000000000000000000000000000ff']), 100_000n)
  const transfer = await wallet.sendTransaction({ to: '0x00000000000000000000000000000000000000aa', value: 5n })
  sent.transfer = await transfer.wait()
  const legacy = await wallet.sendTransaction({ type: 0, to: '0x00000000000000000000000000000000000000aa', value: 6n, gasPrice: 10n ** 10n })
  sent.legacy = await legacy.wait()
})

after(async () => {
  provider?.destroy()
  await node?.stop()
})

/** anvil (KEEL_E2E_TARGET=anvil) departs from geth in a few fields; these assertions are geth's */
const geth = target === 'keel'
const lower = (address) => address.toLowerCase()
/** a memory word or storage slot: geth's 64 hex digits without 0x (anvil prefixes 0x) */
const word = (digits) => (geth ? digits : `0x${digits}`)
const trace = (hash, config) => rpcResult(node.url, 'debug_traceTransaction', config === undefined ? [hash] : [hash, config])
const callTrace = (name, tracerConfig) => trace(sent[name].hash, { tracer: 'callTracer', ...(tracerConfig ? { tracerConfig } : {}) })

test('callTracer: a CALL to another contract, between two logs (withLog: positions)', async () => {
  const receipt = sent.callSet
  const tx = await provider.getTransaction(receipt.hash)
  const top = await callTrace('callSet', { withLog: true })
  assert.equal(top.type, 'CALL')
  assert.equal(top.from, lower(wallet.address))
  assert.equal(top.to, lower(await caller.getAddress()))
  assert.equal(top.value, '0x0')
  // geth: the transaction's gas limit (anvil gives what is left after the intrinsic gas)
  if (geth) assert.equal(BigInt(top.gas), tx.gasLimit)
  assert.equal(BigInt(top.gasUsed), receipt.gasUsed)
  assert.equal(top.input, tx.data)
  assert.equal(top.output, undefined, 'no output field for an empty output')
  assert.equal(top.calls.length, 1)
  const inner = top.calls[0]
  assert.equal(inner.type, 'CALL')
  assert.equal(inner.from, lower(await caller.getAddress()))
  assert.equal(inner.to, lower(await storage.getAddress()))
  assert.equal(inner.input, storageAbi.encodeFunctionData('set', [7n]))
  assert.equal(inner.value, '0x0')
  assert.ok(BigInt(inner.gasUsed) > 20_000n && BigInt(inner.gasUsed) < BigInt(inner.gas), `inner gas ${inner.gasUsed} of ${inner.gas}`)
  assert.deepEqual(
    top.logs.map((l) => [l.address, l.topics[0], BigInt(l.data), l.position]),
    [
      [lower(await caller.getAddress()), CALLED, 0n, '0x0'],
      [lower(await caller.getAddress()), CALLED, 7n, '0x1'],
    ],
  )
  // without withLog there are no logs
  assert.equal((await callTrace('callSet')).logs, undefined)
  // onlyTopCall: the transaction's own frame
  const only = await callTrace('callSet', { onlyTopCall: true })
  assert.equal(only.calls, undefined)
  assert.equal(only.gasUsed, top.gasUsed)
})

test('callTracer: STATICCALL (no value) with its output, DELEGATECALL from the delegating contract', async () => {
  const read = await callTrace('readValue')
  const staticCall = read.calls[0]
  assert.equal(staticCall.type, 'STATICCALL')
  assert.equal('value' in staticCall, false)
  assert.equal(BigInt(staticCall.output), 7n)
  assert.equal(BigInt(read.output), 7n)

  const delegated = (await callTrace('delegateSet')).calls[0]
  assert.equal(delegated.type, 'DELEGATECALL')
  assert.equal(delegated.from, lower(await caller.getAddress()))
  assert.equal(delegated.to, lower(await storage.getAddress()))
  assert.equal(delegated.input, storageAbi.encodeFunctionData('set', [9n]))
})

test('callTracer: a reverted inner call carries its error, revert data and reason; its caller succeeds', async () => {
  const top = await callTrace('tryFail', { withLog: true })
  assert.equal(top.error, undefined)
  const failed = top.calls[0]
  assert.equal(failed.to, lower(await reverter.getAddress()))
  assert.equal(failed.error, 'execution reverted')
  assert.equal(failed.revertReason, 'nope')
  assert.equal(failed.output, new Interface(['function Error(string)']).encodeFunctionData('Error', ['nope']))
  assert.equal(top.logs.length, 1, 'the caller emitted its log after catching the revert')
  assert.equal(top.logs[0].position, '0x1')
})

test('callTracer: CREATE names the new contract and returns its code', async () => {
  const top = await callTrace('create')
  const created = top.calls[0]
  assert.equal(created.type, 'CREATE')
  assert.equal(created.from, lower(await caller.getAddress()))
  assert.equal(created.input, Storage.bytecode)
  assert.equal(created.output, await provider.getCode(created.to))
  assert.equal(created.output, Storage.deployedBytecode)
  const set = top.calls[1]
  assert.equal(set.type, 'CALL')
  assert.equal(set.to, created.to)
})

test('callTracer: a CALL with value, a precompile, CREATE2, a failed frame whose logs are dropped, SELFDESTRUCT', async () => {
  const self = lower(await caller.getAddress())
  const top = await callTrace('mixed', { withLog: true })
  assert.equal(top.value, '0x3')
  const [send, precompile, created, failed] = top.calls
  assert.deepEqual([send.type, send.to, send.value, send.input], ['CALL', '0x00000000000000000000000000000000000000dd', '0x3', '0x'])
  assert.deepEqual([precompile.type, precompile.to, precompile.input], ['STATICCALL', '0x0000000000000000000000000000000000000002', '0x616263'])
  assert.equal(precompile.output, '0xba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
  assert.equal(created.type, 'CREATE2')
  assert.equal(created.output, Storage.deployedBytecode)
  assert.deepEqual([failed.type, failed.from, failed.to, failed.error, failed.revertReason], ['CALL', self, self, 'execution reverted', 'undone'])
  assert.equal(failed.logs, undefined, "a reverted frame's logs are dropped")
  assert.equal(top.logs, undefined)
  const destroyed = await callTrace('destroy')
  assert.deepEqual(destroyed.calls, [
    { type: 'SELFDESTRUCT', from: self, gas: '0x0', gasUsed: '0x0', to: '0x00000000000000000000000000000000000000ee', input: '0x', value: '0x4' },
  ])
  // a CALL with more value than the caller holds: a frame that never started, as geth lists it
  const [overspent] = (await callTrace('overspend')).calls
  assert.deepEqual(
    { ...overspent, gas: undefined },
    { type: 'CALL', from: self, gas: undefined, gasUsed: '0x0', to: '0x00000000000000000000000000000000000000ff', input: '0x', error: 'insufficient balance for transfer', value: '0xde0b6b3a7640000' },
  )
  assert.ok(BigInt(overspent.gas) > 2300n)
  // the struct logger: a CALL with value costs the gas it gives without the stipend the callee gets on top
  const steps = (await trace(sent.mixed.hash)).structLogs
  const call = steps.findIndex((l) => l.op === 'CALL')
  assert.equal(steps[call + 1].depth, 1, 'a call to an account without code runs no step')
  // the caller gets back all the callee was given (its gas and the stipend) less what it used
  assert.equal(steps[call + 1].gas, steps[call].gas - steps[call].gasCost + Number(send.gas) - Number(send.gasUsed))
  assert.ok(steps[call].gasCost > Number(send.gas) - 2300, 'its cost holds the gas it gives, not the stipend')
})

test('an address with high bits set above its 20 bytes is the address the EVM reads: its low 20 bytes', async () => {
  // runtime: PUSH32 (12 bytes of 0xff, then 0x…ee) SELFDESTRUCT; init code copies it out and returns it
  const word = `${'ff'.repeat(12)}${'00'.repeat(19)}ee`
  const runtime = `7f${word}ff`
  const deployed = await (await wallet.sendTransaction({ data: `0x6022600c60003960226000f3${runtime}` })).wait()
  const paid = await (await wallet.sendTransaction({ to: deployed.contractAddress, value: 7n, gasLimit: 100_000n })).wait()
  const top = await trace(paid.hash, { tracer: 'callTracer' })
  assert.equal(top.calls[0].type, 'SELFDESTRUCT')
  assert.equal(top.calls[0].to, `0x${'00'.repeat(19)}ee`)
  const pre = await trace(paid.hash, { tracer: 'prestateTracer' })
  assert.ok(`0x${'00'.repeat(19)}ee` in pre, Object.keys(pre).join(' '))
})

test('callTracer: a plain transfer is one CALL frame of 21,000 gas', async () => {
  const top = await trace(sent.transfer.hash, { tracer: 'callTracer' })
  assert.equal(top.type, 'CALL')
  assert.equal(top.to, '0x00000000000000000000000000000000000000aa')
  assert.equal(top.value, '0x5')
  assert.equal(top.input, '0x')
  assert.equal(BigInt(top.gasUsed), 21_000n)
  assert.equal(top.calls, undefined)
})

test('struct logger: steps account for every unit of gas, at the right depth, with the stack', async () => {
  const receipt = sent.callSet
  const result = await trace(receipt.hash)
  assert.equal(result.failed, false)
  assert.equal(BigInt(result.gas), receipt.gasUsed)
  // geth: hex digits without 0x (anvil prefixes 0x)
  if (geth) assert.equal(result.returnValue, '')
  const logs = result.structLogs
  assert.ok(logs.length > 50, `${logs.length} steps`)
  assert.deepEqual([logs[0].pc, logs[0].op, logs[0].depth, logs[0].stack], [0, 'PUSH1', 1, []])
  // the gas left before a step is the gas left before the one before it, less that one's cost (within a frame)
  let checked = 0
  for (let i = 0; i + 1 < logs.length; i++) {
    const a = logs[i]
    const b = logs[i + 1]
    if (a.depth !== b.depth || a.op === 'CALL' || a.op === 'STATICCALL') continue
    assert.equal(b.gas, a.gas - a.gasCost, `step ${i} (${a.op}) to ${i + 1}`)
    checked++
  }
  assert.ok(checked > 40)
  // the CALL into Storage.set gives it gas; the callee's steps run at depth 2
  const call = logs.findIndex((l) => l.op === 'CALL')
  assert.equal(logs[call + 1].depth, 2)
  assert.equal(logs[call + 1].pc, 0)
  assert.ok(logs[call].gasCost > logs[call + 1].gas, `a CALL costs the gas it gives and more: ${JSON.stringify(logs.slice(call - 1, call + 2).map(({ stack, ...l }) => l))}`)
  // the SSTORE of 7 into slot 0 of Storage, and the storage seen so far
  const sstore = logs.find((l) => l.op === 'SSTORE' && l.depth === 2)
  assert.deepEqual(sstore.storage, { [word('0'.repeat(64))]: word('0'.repeat(63) + '7') })
  for (const l of logs) for (const item of l.stack) assert.match(item, /^0x(0|[1-9a-f][0-9a-f]*)$/)
})

test('struct logger options: memory as 32-byte words, no stack, no storage, a limit', async () => {
  const hash = sent.callSet.hash
  const withMemory = (await trace(hash, { enableMemory: true, disableStack: true, disableStorage: true })).structLogs
  assert.ok(withMemory.every((l) => Array.isArray(l.memory) && !('stack' in l) && !('storage' in l)))
  if (geth) assert.ok(withMemory.some((l) => l.memory.length > 2))
  for (const l of withMemory) for (const w of l.memory) assert.equal(w, word(w.replace(/^0x/, '')).toLowerCase())
  for (const l of withMemory) for (const w of l.memory) assert.match(w.replace(/^0x/, ''), /^[0-9a-f]{64}$/)
  // geth's limit on the steps recorded (anvil records them all); a CALL that is the last step recorded
  // still costs the gas it gives, and no later step's cost or error lands on an earlier entry
  if (geth) {
    assert.equal((await trace(hash, { limit: 5 })).structLogs.length, 5)
    // mixed: a CALL, then a STATICCALL to a precompile, a CREATE2 and another CALL past the limit
    const full = (await trace(sent.mixed.hash)).structLogs
    const call = full.findIndex((l) => l.op === 'CALL')
    assert.deepEqual((await trace(sent.mixed.hash, { limit: call + 1 })).structLogs, full.slice(0, call + 1))
    assert.deepEqual((await trace(sent.mixed.hash, { limit: call + 3 })).structLogs, full.slice(0, call + 3))
  }
  const plain = await trace(sent.transfer.hash)
  if (geth) assert.deepEqual(plain, { gas: 21000, failed: false, returnValue: '', structLogs: [] })
})

test('struct logger: a view result is the return value, without 0x', async () => {
  const result = await trace(sent.readValue.hash)
  assert.equal(result.returnValue, `${geth ? '' : '0x'}${7n.toString(16).padStart(64, '0')}`)
})

test('prestateTracer: the accounts and slots a transaction reached, as they were before it; diffMode: what it changed', async () => {
  const receipt = sent.callSet
  const slot0 = `0x${'0'.repeat(64)}`
  const from = lower(wallet.address)
  const storageAddress = lower(await storage.getAddress())
  const callerAddress = lower(await caller.getAddress())
  const block = await provider.getBlock(receipt.blockNumber)
  const nonce = (await provider.getTransaction(receipt.hash)).nonce
  const pre = await trace(receipt.hash, { tracer: 'prestateTracer' })
  assert.deepEqual(Object.keys(pre).sort(), [block.miner.toLowerCase(), callerAddress, storageAddress, from].sort())
  assert.equal(pre[from].nonce, nonce)
  assert.equal(BigInt(pre[from].balance), await provider.getBalance(wallet.address, receipt.blockNumber - 1))
  assert.equal(pre[callerAddress].code, Caller.deployedBytecode)
  assert.deepEqual(pre[storageAddress].storage, { [slot0]: slot0 }, 'slot 0 before the transaction set it')
  assert.equal('storage' in pre[callerAddress], false)

  const { pre: before, post: after } = await trace(receipt.hash, { tracer: 'prestateTracer', tracerConfig: { diffMode: true } })
  assert.deepEqual(after[storageAddress], { storage: { [slot0]: `0x${'0'.repeat(63)}7` } })
  // the slot was empty before: left out of pre, as geth leaves empty slots out
  assert.equal(before[storageAddress].storage, undefined)
  assert.equal(after[from].nonce, nonce + 1)
  assert.equal(BigInt(after[from].balance), await provider.getBalance(wallet.address, receipt.blockNumber))
  assert.equal(after[callerAddress], undefined, 'the caller changed nothing')
  assert.equal(before[callerAddress], undefined)

  // a contract the transaction created was nothing before it: not in pre (geth; anvil lists it empty)
  if (geth) {
    const created = (await callTrace('create')).calls[0].to
    const createPre = await trace(sent.create.hash, { tracer: 'prestateTracer' })
    assert.equal(createPre[created], undefined)
    const createDiff = await trace(sent.create.hash, { tracer: 'prestateTracer', tracerConfig: { diffMode: true } })
    assert.equal(createDiff.post[created].code, Storage.deployedBytecode)
    assert.deepEqual(createDiff.post[created].storage, { [slot0]: `0x${'0'.repeat(62)}0b` })
  }
  // the same from debug_traceCall, with disableCode
  const request = { from: wallet.address, to: await caller.getAddress(), data: callerAbi.encodeFunctionData('callSet', [await storage.getAddress(), 3n]) }
  const callPre = await rpcResult(node.url, 'debug_traceCall', [request, 'latest', { tracer: 'prestateTracer', tracerConfig: { disableCode: true } }])
  assert.equal(callPre[callerAddress].code, undefined)
  assert.deepEqual(callPre[storageAddress].storage, { [slot0]: `0x${'0'.repeat(63)}7` })
})

test('4byteTracer and noopTracer', async () => {
  const fourByte = await trace(sent.callSet.hash, { tracer: '4byteTracer' })
  const callSet = callerAbi.getFunction('callSet').selector
  const set = storageAbi.getFunction('set').selector
  assert.deepEqual(fourByte, { [`${callSet}-64`]: 1, [`${set}-32`]: 1 })
  assert.deepEqual(await trace(sent.callSet.hash, { tracer: 'noopTracer' }), {})
})

test('muxTracer: each tracer\'s result under its name, as that tracer alone answers', { skip: !geth && 'anvil answers muxTracer with nothing in it' }, async () => {
  const tracerConfig = { callTracer: { withLog: true }, prestateTracer: { diffMode: true }, '4byteTracer': {}, noopTracer: null }
  for (const name of ['mixed', 'create', 'tryFail']) {
    const hash = sent[name].hash
    const muxed = await trace(hash, { tracer: 'muxTracer', tracerConfig })
    assert.deepEqual(Object.keys(muxed), ['4byteTracer', 'callTracer', 'noopTracer', 'prestateTracer'])
    assert.deepEqual(muxed.callTracer, await trace(hash, { tracer: 'callTracer', tracerConfig: { withLog: true } }))
    assert.deepEqual(muxed.prestateTracer, await trace(hash, { tracer: 'prestateTracer', tracerConfig: { diffMode: true } }))
    assert.deepEqual(muxed['4byteTracer'], await trace(hash, { tracer: '4byteTracer' }))
    assert.deepEqual(muxed.noopTracer, {})
  }
  // debug_traceCall too, and nested
  const request = { from: '0x00000000000000000000000000000000000000bb', to: await caller.getAddress(), data: callerAbi.encodeFunctionData('callSet', [await storage.getAddress(), 5n]) }
  const call = await rpcResult(node.url, 'debug_traceCall', [request, 'latest', { tracer: 'muxTracer', tracerConfig: { muxTracer: { callTracer: {} } } }])
  assert.deepEqual(call, { muxTracer: { callTracer: await rpcResult(node.url, 'debug_traceCall', [request, 'latest', { tracer: 'callTracer' }]) } })
})

test('debug_traceBlockByNumber and ByHash: every transaction of the block, with its hash', async () => {
  const receipt = sent.callSet
  const byNumber = await rpcResult(node.url, 'debug_traceBlockByNumber', [`0x${receipt.blockNumber.toString(16)}`, { tracer: 'callTracer' }])
  const block = await rpcResult(node.url, 'eth_getBlockByNumber', [`0x${receipt.blockNumber.toString(16)}`, false])
  assert.deepEqual(
    byNumber.map((r) => r.txHash),
    block.transactions,
  )
  const mine = byNumber.find((r) => r.txHash === receipt.hash)
  assert.deepEqual(mine.result, await callTrace('callSet'))
  const byHash = await rpcResult(node.url, 'debug_traceBlockByHash', [block.hash, { tracer: 'callTracer' }])
  assert.deepEqual(byHash, byNumber)
})

test('debug_traceBlock: a block given as RLP traces as its stored twin; an altered one in its own context; what cannot be traced', { skip: !geth && 'anvil has no debug_traceBlock' }, async () => {
  const number = `0x${sent.transfer.blockNumber.toString(16)}`
  const raw = await rpcResult(node.url, 'debug_getRawBlock', [number])
  for (const config of [{ tracer: 'callTracer' }, { tracer: 'prestateTracer' }, {}]) {
    assert.deepEqual(await rpcResult(node.url, 'debug_traceBlock', [raw, config]), await rpcResult(node.url, 'debug_traceBlockByNumber', [number, config]))
  }
  // the same transactions under another coinbase: a block the chain does not hold, run in its own context
  const [header, txs, ...rest] = RLP.decode(getBytes(raw))
  const reencode = (fields, list = txs) => bytesToHex(RLP.encode([fields, list, ...rest]))
  const coinbase = '0x00000000000000000000000000000000000000cc'
  const altered = header.slice()
  altered[2] = getBytes(coinbase)
  const stored = await rpcResult(node.url, 'debug_traceBlock', [raw, { tracer: 'prestateTracer' }])
  const other = await rpcResult(node.url, 'debug_traceBlock', [reencode(altered), { tracer: 'prestateTracer' }])
  const mine = (entries) => entries.find((e) => e.txHash === sent.transfer.hash).result
  assert.ok(coinbase in mine(other), 'the altered block\'s coinbase is in the prestate')
  assert.ok(!(coinbase in mine(stored)))
  assert.ok(lower(sent.transfer.from) in mine(other))
  assert.deepEqual(await rpcResult(node.url, 'debug_traceBlock', [reencode(header, [])]), [])
  // what the chain would refuse, in geth's words: a transaction twice (its nonce is spent), a sender with nothing
  const twice = await rpc(node.url, 'debug_traceBlock', [reencode(header, [...txs, ...txs])])
  const nonce = BigInt(sent.transfer.nonce ?? (await provider.getTransaction(sent.transfer.hash)).nonce)
  assert.deepEqual(twice.error, { code: -32000, message: `tracing failed: nonce too low: address ${wallet.address}, tx: ${nonce} state: ${nonce + 1n}` })
  const pauper = Wallet.createRandom()
  const unfunded = getBytes(await pauper.signTransaction({ type: 2, chainId: CHAIN_ID, nonce: 0, to: coinbase, value: 1n, gasLimit: 21_000n, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1n }))
  const poor = await rpc(node.url, 'debug_traceBlock', [reencode(header, [unfunded])])
  assert.deepEqual(poor.error, { code: -32000, message: `tracing failed: insufficient funds for gas * price + value: address ${pauper.address} have 0 want ${21_000n * 10n ** 10n + 1n}` })
  // geth checks the fee cap against the block's base fee before the funds
  const baseFee = BigInt(bytesToHex(header[15]))
  const cheap = getBytes(await pauper.signTransaction({ type: 2, chainId: CHAIN_ID, nonce: 0, to: coinbase, value: 1n, gasLimit: 21_000n, maxFeePerGas: 1n, maxPriorityFeePerGas: 1n }))
  const under = await rpc(node.url, 'debug_traceBlock', [reencode(header, [cheap])])
  assert.deepEqual(under.error, { code: -32000, message: `tracing failed: max fee per gas less than block base fee: address ${pauper.address}, maxFeePerGas: 1, baseFee: ${baseFee}` })
  // the parent is found by number, then by hash, as geth's traceBlock finds it
  const orphan = header.slice()
  orphan[0] = getBytes(`0x${'11'.repeat(32)}`)
  assert.deepEqual((await rpc(node.url, 'debug_traceBlock', [reencode(orphan)])).error, { code: -32000, message: `block 0x${'11'.repeat(32)} not found` })
  const far = header.slice()
  far[8] = getBytes('0xffffff')
  assert.deepEqual((await rpc(node.url, 'debug_traceBlock', [reencode(far)])).error, { code: -32000, message: 'block #16777214 not found' })
  const genesis = await rpcResult(node.url, 'debug_getRawBlock', ['0x0'])
  assert.deepEqual((await rpc(node.url, 'debug_traceBlock', [genesis])).error, { code: -32000, message: 'genesis is not traceable' })
  const garbage = await rpc(node.url, 'debug_traceBlock', ['0x1234'])
  assert.equal(garbage.error?.code, -32000)
  assert.match(garbage.error.message, /^could not decode block: /)
  assert.equal((await rpc(node.url, 'debug_traceBlock', ['1234'])).error?.code, -32602)
})

test('debug_traceCall: a call at a block, with the callTracer and the struct logger', async () => {
  const data = callerAbi.encodeFunctionData('callSet', [await storage.getAddress(), 3n])
  const request = { from: '0x00000000000000000000000000000000000000bb', to: await caller.getAddress(), data }
  const top = await rpcResult(node.url, 'debug_traceCall', [request, 'latest', { tracer: 'callTracer' }])
  assert.equal(top.type, 'CALL')
  assert.equal(top.from, '0x00000000000000000000000000000000000000bb')
  assert.equal(top.calls[0].input, storageAbi.encodeFunctionData('set', [3n]))
  const steps = await rpcResult(node.url, 'debug_traceCall', [{ ...request, gas: '0x30000' }, 'latest'])
  assert.equal(steps.failed, false)
  assert.ok(steps.structLogs.length > 50)
  // the call changed nothing
  assert.equal(BigInt(await rpcResult(node.url, 'eth_getStorageAt', [await storage.getAddress(), '0x0', 'latest'])), 7n)
})

test("debug_traceCall with txIndex: the state within the block before that transaction, overrides on top", { skip: !geth && 'anvil has no txIndex' }, async () => {
  const storageAddress = await storage.getAddress()
  const before = BigInt(await rpcResult(node.url, 'eth_getStorageAt', [storageAddress, '0x0', 'latest']))
  // two sets from one sender, in nonce order: in one block, or the first in an earlier one
  const nonce = await provider.getTransactionCount(wallet.address, 'pending')
  const to = await caller.getAddress()
  const setTo = (v, n) => wallet.sendTransaction({ to, data: callerAbi.encodeFunctionData('callSet', [storageAddress, v]), gasLimit: 300_000n, nonce: n })
  const [first, second] = await Promise.all([setTo(21n, nonce), setTo(22n, nonce + 1)])
  const [a, b] = [await first.wait(), await second.wait()]
  const block = `0x${b.blockNumber.toString(16)}`
  const read = { to: storageAddress, data: storageAbi.encodeFunctionData('value') }
  const valueAt = async (config) => BigInt((await rpcResult(node.url, 'debug_traceCall', [read, block, { tracer: 'callTracer', ...config }])).output)
  assert.equal(await valueAt({}), 22n, 'without txIndex: the state after the block')
  assert.equal(await valueAt({ txIndex: `0x${b.index.toString(16)}` }), 21n, 'before the second set')
  if (a.blockNumber === b.blockNumber) assert.equal(await valueAt({ txIndex: `0x${a.index.toString(16)}` }), before, 'before the first set')
  // state overrides apply on top of the replayed state
  const slot0 = `0x${'00'.repeat(32)}`
  const overridden = { [storageAddress]: { stateDiff: { [slot0]: `0x${(99n).toString(16).padStart(64, '0')}` } } }
  assert.equal(await valueAt({ txIndex: `0x${b.index.toString(16)}`, stateOverrides: overridden }), 99n)
  // the call runs in the block's context: NUMBER is the block's
  const numberReader = '0x00000000000000000000000000000000000000cc'
  const numberAt = await rpcResult(node.url, 'debug_traceCall', [{ to: numberReader }, block, {
    tracer: 'callTracer', txIndex: '0x0', stateOverrides: { [numberReader]: { code: '0x4360005260206000f3' } },
  }])
  assert.equal(BigInt(numberAt.output), BigInt(b.blockNumber))
  const count = (await rpcResult(node.url, 'eth_getBlockByNumber', [block, false])).transactions.length
  const outOfRange = await rpc(node.url, 'debug_traceCall', [read, block, { txIndex: `0x${count.toString(16)}` }])
  const blockHash = (await rpcResult(node.url, 'eth_getBlockByNumber', [block, false])).hash
  assert.deepEqual(outOfRange.error, { code: -32000, message: `transaction index ${count} out of range for block ${blockHash}` })
  const genesis = await rpc(node.url, 'debug_traceCall', [read, '0x0', { txIndex: '0x0' }])
  assert.deepEqual(genesis.error, { code: -32000, message: 'no transaction in genesis' })
  const notHex = await rpc(node.url, 'debug_traceCall', [read, block, { txIndex: 1 }])
  assert.equal(notHex.error?.code, -32602)
})

test('a trace past the response limit answers -32003 as soon as it passes it; a smaller one fits', { skip: !geth && 'anvil has no such limit' }, async () => {
  const emitMany = (n) => ({ to: reverterAddress, data: new Interface(Reverter.abi).encodeFunctionData('emitMany', [n]), gas: '0x1000000' })
  const reverterAddress = await reverter.getAddress()
  const big = await rpc(node.url, 'debug_traceCall', [emitMany(400n), 'latest', { enableMemory: true }])
  assert.equal(big.error?.code, -32003)
  assert.match(big.error.message, /^response too large: the trace passed 2000000 bytes/)
  const small = await rpcResult(node.url, 'debug_traceCall', [emitMany(100n), 'latest', { disableStack: true }])
  assert.equal(small.failed, false)
  assert.ok(small.structLogs.length > 5_000, `${small.structLogs.length} steps`)
})

test('debug_getRawHeader, debug_getRawBlock, debug_getRawReceipts, debug_getRawTransaction: the consensus encodings', { skip: !geth && 'anvil serves its own subset' }, async () => {
  for (const receipt of [sent.callSet, sent.legacy, sent.tryFail]) {
    const number = `0x${receipt.blockNumber.toString(16)}`
    const block = await rpcResult(node.url, 'eth_getBlockByNumber', [number, false])
    const header = await rpcResult(node.url, 'debug_getRawHeader', [number])
    assert.equal(keccak256(header), block.hash)
    assert.equal(await rpcResult(node.url, 'debug_getRawHeader', [block.hash]), header)
    const raw = await rpcResult(node.url, 'debug_getRawBlock', [block.hash])
    assert.equal((raw.length - 2) / 2, Number(block.size))
    const [headerFields, txs, uncles, withdrawals] = RLP.decode(getBytes(raw))
    assert.equal(keccak256(RLP.encode(headerFields)), block.hash)
    assert.deepEqual([uncles, withdrawals], [[], []])
    // the transactions root over the block's transactions, and each one's hash
    const txTrie = await createMPT()
    const encoded = txs.map((tx) => (tx instanceof Uint8Array ? tx : RLP.encode(tx)))
    for (let i = 0; i < encoded.length; i++) await txTrie.put(RLP.encode(i), encoded[i])
    assert.equal(bytesToHex(txTrie.root()), block.transactionsRoot)
    assert.deepEqual(encoded.map((tx) => keccak256(tx)), block.transactions)
    // the receipts root over debug_getRawReceipts
    const receipts = await rpcResult(node.url, 'debug_getRawReceipts', [number])
    assert.equal(receipts.length, block.transactions.length)
    const receiptTrie = await createMPT()
    for (let i = 0; i < receipts.length; i++) await receiptTrie.put(RLP.encode(i), getBytes(receipts[i]))
    assert.equal(bytesToHex(receiptTrie.root()), block.receiptsRoot)
    for (const hash of block.transactions) {
      assert.equal(await rpcResult(node.url, 'debug_getRawTransaction', [hash]), await rpcResult(node.url, 'eth_getRawTransactionByHash', [hash]))
    }
  }
  // the legacy transaction is a list in the block, the typed ones byte strings
  assert.ok(Array.isArray(RLP.decode(getBytes(await rpcResult(node.url, 'debug_getRawBlock', [`0x${sent.legacy.blockNumber.toString(16)}`])))[1][0]))
  assert.equal(await rpcResult(node.url, 'debug_getRawTransaction', [`0x${'cd'.repeat(32)}`]), '0x')
  assert.deepEqual(await rpcResult(node.url, 'debug_getBadBlocks'), [])
  const missing = await rpc(node.url, 'debug_getRawBlock', ['0xffffff'])
  assert.deepEqual(missing.error, { code: -32000, message: 'header not found' })
})

test("errors: geth's words for what cannot be traced", { skip: !geth && 'anvil answers null or its own words' }, async () => {
  const unknown = await rpc(node.url, 'debug_traceTransaction', [`0x${'ab'.repeat(32)}`])
  assert.equal(unknown.error?.code, -32000)
  assert.match(unknown.error.message, /transaction not found/)
  const genesis = await rpc(node.url, 'debug_traceBlockByNumber', ['0x0'])
  assert.equal(genesis.error?.code, -32000)
  {
    assert.equal(genesis.error.message, 'genesis is not traceable')
    const js = await rpc(node.url, 'debug_traceTransaction', [sent.callSet.hash, { tracer: '{ result: function() { return 1 } }' }])
    assert.equal(js.error?.code, -32000)
    assert.match(js.error.message, /not supported/)
    const badTimeout = await rpc(node.url, 'debug_traceTransaction', [sent.callSet.hash, { timeout: '5 seconds' }])
    assert.equal(badTimeout.error?.code, -32000)
    assert.match(badTimeout.error.message, /^time: /)
    const badFlag = await rpc(node.url, 'debug_traceTransaction', [sent.callSet.hash, { disableStack: 'yes' }])
    assert.equal(badFlag.error?.code, -32602)
    const timedOut = await rpc(node.url, 'debug_traceTransaction', [sent.callSet.hash, { timeout: '1ns' }])
    assert.deepEqual(timedOut.error, { code: -32000, message: 'execution timeout' })
    // in a block, the transaction's entry carries the error (and the replay goes on)
    const number = `0x${sent.callSet.blockNumber.toString(16)}`
    const entries = await rpcResult(node.url, 'debug_traceBlockByNumber', [number, { timeout: '1ns', tracer: 'callTracer' }])
    assert.deepEqual(entries.find((e) => e.txHash === sent.callSet.hash), { txHash: sent.callSet.hash, error: 'execution timeout' })
    const readValue = async () => BigInt(await rpcResult(node.url, 'eth_call', [{ to: await storage.getAddress(), data: storageAbi.encodeFunctionData('value') }, 'latest']))
    const valueBefore = await readValue()
    // a set of another value, stopped in the middle
    const setOther = callerAbi.encodeFunctionData('callSet', [await storage.getAddress(), valueBefore + 1n])
    const callTimedOut = await rpc(node.url, 'debug_traceCall', [{ to: await caller.getAddress(), data: setOther }, 'latest', { timeout: '1ns' }])
    assert.deepEqual(callTimedOut.error, { code: -32000, message: 'execution timeout' })
    // the calls' state is untouched by the stopped trace
    assert.equal(await readValue(), valueBefore)
  }
})
