// The ots_ namespace (and erigon_getHeaderByNumber) against Erigon's shapes and semantics, as
// /work/shared/reference/explorer.md sets them out, on a chain Keel builds here (explorer-chain.js):
// JSON numbers where Erigon has them, block pages counted from the end, address history newest first
// with exclusive bounds and the last block drained, internal operations without the top frame, flat
// pre-order traces with CREATE2 and SELFDESTRUCT entries, revert data, creators of inner creations,
// transactions by sender and nonce; and what a browser and Blockscout need of the transport (CORS
// preflight, batches of 100 and 500).

import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { AbiCoder, Interface, id } from 'ethers'
import { compile } from '../helpers/contracts.js'
import { startNode } from '../helpers/node.js'
import { rawPost, rpc, rpcResult } from '../helpers/rpc.js'
import { BENEFICIARY, HISTORY, RELAY_SINK, buildExplorerChain, keelSeal } from './explorer-chain.js'

let node
let chain
const call = (method, params) => rpcResult(node.url, method, params)

before(async () => {
  node = await startNode({ blockTime: 1 })
  chain = await buildExplorerChain(node.url, keelSeal(node.url))
})

after(async () => {
  await node?.stop()
})

test('the probe: ots_getApiLevel is the number 8, erigon_getHeaderByNumber takes "latest" and JSON numbers', async () => {
  assert.equal(await call('ots_getApiLevel', []), 8)
  const latest = await call('erigon_getHeaderByNumber', ['latest'])
  for (const field of ['parentHash', 'number', 'timestamp', 'nonce', 'difficulty', 'gasLimit', 'gasUsed', 'miner', 'extraData']) assert.ok(field in latest, field)
  assert.equal(latest.transactions, undefined)
  const byNumber = await call('erigon_getHeaderByNumber', [chain.bigBlock.block])
  assert.equal(byNumber.number, `0x${chain.bigBlock.block.toString(16)}`)
  assert.deepEqual(await call('erigon_getHeaderByNumber', [`0x${chain.bigBlock.block.toString(16)}`]), byNumber)
  const missing = await rpc(node.url, 'erigon_getHeaderByNumber', [1_000_000])
  assert.equal(missing.error.message, 'block header not found: 1000000')
})

test('ots_getBlockDetails: no transactions, transactionCount a number, logsBloom null, fees of the block', async () => {
  const n = chain.calls.block
  const details = await call('ots_getBlockDetails', [n])
  const block = await call('eth_getBlockByNumber', [`0x${n.toString(16)}`, true])
  assert.deepEqual(Object.keys(details).sort(), ['block', 'issuance', 'totalFees'])
  // what the UI's formatter requires of a block, and reads besides (size, sha3Uncles, stateRoot)
  for (const field of ['parentHash', 'number', 'timestamp', 'nonce', 'difficulty', 'gasLimit', 'gasUsed', 'miner', 'extraData', 'size', 'sha3Uncles', 'stateRoot']) assert.ok(details.block[field] !== undefined, field)
  assert.equal(details.block.transactions, undefined)
  assert.equal(details.block.transactionCount, 6)
  assert.equal(details.block.logsBloom, null)
  assert.equal(details.block.hash, block.hash)
  assert.equal(details.block.size, block.size)
  assert.deepEqual(details.issuance, { blockReward: '0x0', uncleReward: '0x0', issuance: '0x0' })
  let fees = 0n
  for (const tx of block.transactions) {
    const receipt = await call('eth_getTransactionReceipt', [tx.hash])
    fees += BigInt(receipt.gasUsed) * BigInt(receipt.effectiveGasPrice)
  }
  assert.equal(details.totalFees, `0x${fees.toString(16)}`)
  assert.deepEqual(await call('ots_getBlockDetailsByHash', [block.hash]), details)
  assert.deepEqual(await call('ots_getBlockDetails', [`0x${n.toString(16)}`]), details)
  assert.equal(await call('ots_getBlockDetails', [1_000_000]), null)
  assert.equal(await call('ots_getBlockDetailsByHash', [`0x${'ab'.repeat(32)}`]), null)
})

test('ots_getBlockTransactions: pages from the end of the block, the total count, inputs cut to the selector, receipts without logs', async () => {
  const { block, hashes } = chain.bigBlock
  assert.equal(hashes.length, 30)
  const page0 = await call('ots_getBlockTransactions', [block, 0, 25])
  assert.equal(page0.fullblock.transactionCount, 30)
  assert.equal(page0.fullblock.logsBloom, null)
  // page 0: the last 25, in block order (indices 5..29); page 1: the first 5
  assert.deepEqual(page0.fullblock.transactions.map((t) => t.hash), hashes.slice(5))
  assert.deepEqual(page0.fullblock.transactions.map((t) => Number(t.transactionIndex)), Array.from({ length: 25 }, (_, i) => i + 5))
  assert.deepEqual(page0.receipts.map((r) => r.transactionHash), hashes.slice(5))
  for (const r of page0.receipts) {
    assert.equal(r.logs, null)
    assert.equal(r.logsBloom, null)
    assert.equal(r.status, '0x1')
  }
  const page1 = await call('ots_getBlockTransactions', [block, 1, 25])
  assert.equal(page1.fullblock.transactionCount, 30)
  assert.deepEqual(page1.fullblock.transactions.map((t) => t.hash), hashes.slice(0, 5))
  const page2 = await call('ots_getBlockTransactions', [block, 2, 25])
  assert.deepEqual(page2.fullblock.transactions, [])
  // Erigon's fixture arithmetic: [n, 0, 2] is the last two
  const lastTwo = await call('ots_getBlockTransactions', [`0x${block.toString(16)}`, '0x0', '0x2'])
  assert.deepEqual(lastTwo.fullblock.transactions.map((t) => t.hash), hashes.slice(28))
  // the UI's redirect for /block/N/tx/IDX: page floor((count - 1 - idx) / 25) holds idx
  for (const idx of [0, 4, 5, 29]) {
    const page = await call('ots_getBlockTransactions', [block, Math.floor((30 - 1 - idx) / 25), 25])
    assert.ok(page.fullblock.transactions.some((t) => Number(t.transactionIndex) === idx), `index ${idx}`)
  }
  // the token transfer's input is cut to its 4-byte selector, every other field as eth_getTransactionByHash has it
  const calls = await call('ots_getBlockTransactions', [chain.calls.block, 0, 25])
  const transfer = calls.fullblock.transactions.find((t) => t.hash === chain.tx.tokenTransfer)
  const full = await call('eth_getTransactionByHash', [chain.tx.tokenTransfer])
  assert.equal(transfer.input, id('transfer(address,uint256)').slice(0, 10))
  assert.deepEqual({ ...transfer, input: full.input }, full)
  // receipts as eth_getTransactionReceipt's, without logs
  for (const r of calls.receipts) {
    const expected = await call('eth_getTransactionReceipt', [r.transactionHash])
    assert.deepEqual(r, { ...expected, logs: null, logsBloom: null })
  }
  assert.equal(await call('ots_getBlockTransactions', [1_000_000, 0, 25]), null)
})

test('ots_searchTransactionsBefore: newest first, strictly before the block, the last block drained, firstPage/lastPage as Erigon', async () => {
  const newestFirst = [...chain.history].reverse()
  const first = await call('ots_searchTransactionsBefore', [HISTORY, 0, 25])
  assert.equal(first.firstPage, true)
  assert.equal(first.lastPage, false)
  // 8 + 8 + 8 from the three newest blocks, then the fourth drained: 32
  assert.deepEqual(first.txs.map((t) => t.hash), newestFirst.slice(0, 32))
  assert.deepEqual(first.receipts.map((r) => r.transactionHash), newestFirst.slice(0, 32))
  for (const r of first.receipts) {
    assert.equal(typeof r.timestamp, 'number')
    assert.ok(Array.isArray(r.logs))
    assert.match(r.logsBloom, /^0x[0-9a-f]{512}$/)
  }
  const block = await call('eth_getBlockByNumber', [first.receipts[0].blockNumber, false])
  assert.equal(first.receipts[0].timestamp, Number(block.timestamp))
  // what Otterscan's formatter requires of every transaction and receipt (reference §1c)
  for (const t of first.txs) for (const field of ['hash', 'type', 'from', 'gasPrice', 'gas', 'value', 'nonce', 'input', 'v', 'r', 's']) assert.ok(t[field] !== undefined, field)
  for (const r of first.receipts) {
    for (const field of ['from', 'transactionIndex', 'gasUsed', 'blockHash', 'transactionHash', 'blockNumber', 'cumulativeGasUsed', 'type']) assert.ok(r[field] !== undefined, field)
  }
  const oldest = first.receipts[first.receipts.length - 1]
  const second = await call('ots_searchTransactionsBefore', [HISTORY, Number(oldest.blockNumber), 25])
  assert.equal(second.firstPage, false)
  assert.equal(second.lastPage, true)
  // the 30 of the big block, all of them: a block is never split
  assert.deepEqual(second.txs.map((t) => t.hash), newestFirst.slice(32))
  const none = await call('ots_searchTransactionsBefore', [HISTORY, chain.bigBlock.block, 25])
  assert.deepEqual(none, { txs: [], receipts: [], firstPage: false, lastPage: true })
})

test('ots_searchTransactionsAfter: strictly after the block, still newest first; firstPage/lastPage as Erigon', async () => {
  const first = await call('ots_searchTransactionsAfter', [HISTORY, 0, 25])
  assert.equal(first.lastPage, true)
  assert.equal(first.firstPage, false)
  // the big block, drained, newest first
  assert.deepEqual(first.txs.map((t) => t.hash), [...chain.bigBlock.hashes].reverse())
  const next = await call('ots_searchTransactionsAfter', [HISTORY, chain.bigBlock.block, 25])
  assert.equal(next.firstPage, true)
  assert.equal(next.lastPage, false)
  assert.deepEqual(next.txs.map((t) => t.hash), chain.later.flatMap((g) => g.hashes).reverse())
})

test('address history by Erigon\'s rule: inner call frames, created contracts, selfdestruct beneficiaries', async () => {
  const hashesOf = async (address) => (await call('ots_searchTransactionsBefore', [address, 0, 25])).txs.map((t) => t.hash)
  // the relay's sink only receives value three calls deep
  assert.deepEqual(await hashesOf(RELAY_SINK), [chain.tx.relayed])
  // the beneficiary of a selfdestruct, and the child created and destroyed in that transaction
  assert.deepEqual(await hashesOf(BENEFICIARY), [chain.tx.makeAndKill])
  assert.deepEqual(await hashesOf(chain.killed), [chain.tx.makeAndKill])
  assert.deepEqual(await hashesOf(chain.kept), [chain.tx.make])
  // a receipt of the history is eth_getTransactionReceipt's, with the block's timestamp (its log's
  // logIndex counts the logs of the block's earlier transactions)
  const { receipts: [made] } = await call('ots_searchTransactionsBefore', [chain.kept, 0, 25])
  const { timestamp, ...receipt } = made
  const expected = await call('eth_getTransactionReceipt', [chain.tx.make])
  assert.deepEqual(receipt, expected)
  const position = chain.calls.hashes.indexOf(chain.tx.make)
  const earlierLogs = chain.calls.receipts.slice(0, position).reduce((n, r) => n + r.logs.length, 0)
  assert.equal(expected.logs[0].logIndex, `0x${earlierLogs.toString(16)}`)
  assert.equal(timestamp, Number((await call('eth_getBlockByNumber', [expected.blockNumber, false])).timestamp))
  // the token's recipient appears only as an argument, not as a frame: Erigon's rule does not match it
  assert.deepEqual(await hashesOf(chain.token), [chain.tx.tokenTransfer, chain.deploys.hashes[0]])
  // a reverted transaction is still the sender's and the callee's
  const relayHistory = await hashesOf(chain.relay)
  for (const h of [chain.tx.relayed, chain.tx.revertReason, chain.tx.revertCustom, chain.deploys.hashes[2]]) assert.ok(relayHistory.includes(h), h)
})

test('ots_getInternalOperations: numbers for types, the top frame left out', async () => {
  const relayed = await call('ots_getInternalOperations', [chain.tx.relayed])
  // 80 wei: 40 passed to the relay itself, 20, 10, and the last 10 to the sink
  assert.deepEqual(relayed, [
    { type: 0, from: chain.relay, to: chain.relay, value: '0x28' },
    { type: 0, from: chain.relay, to: chain.relay, value: '0x14' },
    { type: 0, from: chain.relay, to: chain.relay, value: '0xa' },
    { type: 0, from: chain.relay, to: RELAY_SINK, value: '0xa' },
  ])
  const killed = await call('ots_getInternalOperations', [chain.tx.makeAndKill])
  assert.deepEqual(killed, [
    { type: 3, from: chain.factory, to: chain.killed, value: '0x3e8' },
    { type: 1, from: chain.killed, to: BENEFICIARY, value: '0x3e8' },
  ])
  assert.deepEqual(await call('ots_getInternalOperations', [chain.history[0]]), [])
})

test('ots_traceTransaction: flat pre-order, depth numbers, CREATE2 and SELFDESTRUCT entries, value null for static and delegate calls', async () => {
  const { Factory, Child } = compile()
  const trace = await call('ots_traceTransaction', [chain.tx.makeAndKill])
  assert.deepEqual(trace.map((e) => [e.type, e.depth, e.from, e.to]), [
    ['CALL', 0, chain.alice, chain.factory],
    ['CREATE2', 1, chain.factory, chain.killed],
    ['CALL', 1, chain.factory, chain.killed],
    ['SELFDESTRUCT', 2, chain.killed, BENEFICIARY],
  ])
  assert.equal(trace[0].value, '0x3e8')
  assert.equal(trace[0].input, new Interface(Factory.abi).encodeFunctionData('makeAndKill', [`0x${'02'.repeat(32)}`, BENEFICIARY]))
  assert.equal(trace[1].input, Child.bytecode)
  assert.equal(trace[1].output, Child.deployedBytecode)
  assert.equal(trace[2].value, '0x0')
  assert.equal(trace[3].value, '0x3e8')
  const relayed = await call('ots_traceTransaction', [chain.tx.relayed])
  assert.deepEqual(relayed.map((e) => e.depth), [0, 1, 2, 3, 4])
  assert.ok(relayed.every((e) => typeof e.value === 'string'))
})

test('ots_getTransactionError: the revert data (reason or custom error), "0x" without a revert', async () => {
  const reason = await call('ots_getTransactionError', [chain.tx.revertReason])
  assert.equal(reason, `0x08c379a0${AbiCoder.defaultAbiCoder().encode(['string'], ['relay says no']).slice(2)}`)
  const custom = await call('ots_getTransactionError', [chain.tx.revertCustom])
  const { Relay } = compile()
  assert.equal(custom, new Interface(Relay.abi).encodeErrorResult('Refused', [7, 'custom']))
  assert.equal(await call('ots_getTransactionError', [chain.tx.relayed]), '0x')
  assert.equal(await call('ots_getTransactionError', [chain.history[0]]), '0x')
})

test('ots_hasCode: at the block asked for, as a number, hex, tag or hash', async () => {
  const deployed = chain.deploys.block
  assert.equal(await call('ots_hasCode', [chain.token, 'latest']), true)
  assert.equal(await call('ots_hasCode', [chain.token, deployed]), true)
  assert.equal(await call('ots_hasCode', [chain.token, deployed - 1]), false)
  assert.equal(await call('ots_hasCode', [chain.token, `0x${(deployed - 1).toString(16)}`]), false)
  const block = await call('eth_getBlockByNumber', [`0x${deployed.toString(16)}`, false])
  assert.equal(await call('ots_hasCode', [chain.token, block.hash]), true)
  assert.equal(await call('ots_hasCode', [chain.alice, 'latest']), false)
  // destroyed in the transaction that made it (EIP-6780)
  assert.equal(await call('ots_hasCode', [chain.killed, 'latest']), false)
})

test('ots_getTransactionBySenderAndNonce: the mined transaction\'s hash, null past the last', async () => {
  assert.equal(await call('ots_getTransactionBySenderAndNonce', [chain.deployer, 1]), chain.deploys.hashes[1])
  assert.equal(await call('ots_getTransactionBySenderAndNonce', [chain.alice, 0]), chain.tx.make)
  assert.equal(await call('ots_getTransactionBySenderAndNonce', [chain.alice, '0x4']), chain.tx.revertCustom)
  assert.equal(await call('ots_getTransactionBySenderAndNonce', [chain.alice, 5]), null)
})

test('ots_getContractCreator: the deploying account, the factory for an inner creation, null without code', async () => {
  assert.deepEqual(await call('ots_getContractCreator', [chain.token]), { hash: chain.deploys.hashes[0], creator: chain.deployer })
  assert.deepEqual(await call('ots_getContractCreator', [chain.kept]), { hash: chain.tx.make, creator: chain.factory })
  assert.equal(await call('ots_getContractCreator', [chain.killed]), null)
  assert.equal(await call('ots_getContractCreator', [chain.alice]), null)
})

test('trace_replayTransaction stateDiff (the State tab): OpenEthereum\'s shape from the prestate diff', async () => {
  const { Child } = compile()
  const transfer = await call('trace_replayTransaction', [chain.tx.tokenTransfer, ['stateDiff']])
  assert.equal(transfer.output, `0x${'0'.repeat(63)}1`)
  assert.equal(transfer.trace, null)
  assert.equal(transfer.vmTrace, null)
  const sender = transfer.stateDiff[chain.deployer]
  assert.deepEqual(sender.nonce, { '*': { from: '0x3', to: '0x4' } })
  assert.ok(BigInt(sender.balance['*'].to) < BigInt(sender.balance['*'].from), 'the fee was paid')
  assert.equal(sender.code, '=')
  const token = transfer.stateDiff[chain.token]
  assert.deepEqual([token.balance, token.nonce, token.code], ['=', '=', '='])
  // two balances moved: the recipient's slot from zero
  const slots = Object.values(token.storage)
  assert.equal(slots.length, 2)
  assert.ok(slots.some((d) => d['*'].from === `0x${'0'.repeat(64)}` && BigInt(d['*'].to) === 5n * 10n ** 18n))
  // a contract the factory made: created ("+"), and the factory's nonce moved
  const made = await call('trace_replayTransaction', [chain.tx.make, ['stateDiff']])
  assert.deepEqual(made.stateDiff[chain.kept], { balance: { '+': '0x0' }, nonce: { '+': '0x1' }, code: { '+': Child.deployedBytecode }, storage: {} })
  assert.deepEqual(made.stateDiff[chain.factory].nonce, { '*': { from: '0x1', to: '0x2' } })
  // what Keel does not serve is refused, not answered empty
  const vm = await rpc(node.url, 'trace_replayTransaction', [chain.tx.make, ['vmTrace']])
  assert.equal(vm.error.code, -32602)
})

test('methods Keel does not serve answer geth\'s wording, which ethers maps to "unsupported"', async () => {
  const res = await rpc(node.url, 'ots2_getAllContractsList', [0, 25])
  assert.deepEqual(res.error, { code: -32601, message: 'the method ots2_getAllContractsList does not exist/is not available' })
  const modules = await call('rpc_modules', [])
  assert.equal(modules.ots, '1.0')
  assert.equal(modules.erigon, '1.0')
})

test('CORS preflight, and batches of 100 (Otterscan) and 500 (Blockscout)', async () => {
  const preflight = await fetch(node.url, {
    method: 'OPTIONS',
    headers: { Origin: 'http://explorer.example', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type' },
  })
  assert.ok(preflight.status === 204 || preflight.status === 200, `status ${preflight.status}`)
  assert.equal(preflight.headers.get('access-control-allow-origin'), '*')
  assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /content-type/i)
  assert.match(preflight.headers.get('access-control-allow-methods') ?? '', /POST/)
  for (const size of [100, 500]) {
    const body = Array.from({ length: size }, (_, i) => ({ jsonrpc: '2.0', id: i, method: i % 2 === 0 ? 'ots_getBlockDetails' : 'ots_hasCode', params: i % 2 === 0 ? [chain.bigBlock.block] : [chain.token, 'latest'] }))
    const { status, json, headers } = await rawPost(node.url, body, { Origin: 'http://explorer.example' })
    assert.equal(status, 200)
    assert.equal(json.length, size)
    assert.ok(json.every((r) => r.error === undefined), `a call of the batch of ${size} failed`)
    assert.equal(json[0].result.block.transactionCount, 30)
    assert.equal(json[1].result, true)
    assert.equal(headers.get('access-control-allow-origin'), '*')
  }
})

test('Blockscout\'s geth-variant calls: batched receipts, callTracer with a timeout and onlyTopCall, by block, txpool_content, historical balances', async () => {
  // receipts of a block's transactions in one batch, as its receipts fetcher asks
  const body = chain.bigBlock.hashes.map((h, i) => ({ jsonrpc: '2.0', id: i, method: 'eth_getTransactionReceipt', params: [h] }))
  const { json } = await rawPost(node.url, body)
  assert.deepEqual(json.map((r) => r.result.transactionHash), chain.bigBlock.hashes)
  // internal transactions: callTracer with Blockscout's timeout, the frames its parser reads
  const trace = await call('debug_traceTransaction', [chain.tx.makeAndKill, { tracer: 'callTracer', timeout: '5s' }])
  assert.equal(trace.type, 'CALL')
  assert.deepEqual(trace.calls.map((c) => c.type), ['CREATE2', 'CALL'])
  assert.equal(trace.calls[0].to, chain.killed)
  assert.deepEqual(trace.calls[1].calls.map((c) => [c.type, c.to, c.value]), [['SELFDESTRUCT', BENEFICIARY, '0x3e8']])
  for (const field of ['from', 'gas', 'gasUsed', 'input', 'value']) assert.ok(field in trace, field)
  // the revert reason: the top call only
  const top = await call('debug_traceTransaction', [chain.tx.revertReason, { tracer: 'callTracer', tracerConfig: { onlyTopCall: true } }])
  assert.equal(top.error, 'execution reverted')
  assert.equal(top.revertReason, 'relay says no')
  assert.equal(top.calls, undefined)
  // ETHEREUM_JSONRPC_GETH_TRACE_BY_BLOCK: [{txHash, result}] per block
  const byBlock = await call('debug_traceBlockByNumber', [`0x${chain.calls.block.toString(16)}`, { tracer: 'callTracer', timeout: '5s' }])
  assert.deepEqual(byBlock.map((t) => t.txHash), chain.calls.hashes)
  assert.ok(byBlock.every((t) => t.result.type === 'CALL'))
  // pending transactions, and a balance at an old block (archive)
  const pool = await call('txpool_content', [])
  assert.deepEqual(Object.keys(pool).sort(), ['pending', 'queued'])
  const before = await call('eth_getBalance', [HISTORY, `0x${(chain.bigBlock.block - 1).toString(16)}`])
  const afterBig = await call('eth_getBalance', [HISTORY, `0x${chain.bigBlock.block.toString(16)}`])
  assert.equal(before, '0x0')
  assert.equal(BigInt(afterBig), BigInt((30 * 31) / 2))
})
