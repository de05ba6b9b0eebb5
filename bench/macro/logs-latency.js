// One client's eth_getLogs of thousands of token Transfer logs, one request at a time, Keel then anvil
// (--block-time 1, as the macro bench): what a dapp or an indexer waits for a query, where the macro
// bench's whole-chain row measures the rate of one query repeated by 8 connections (an answer Keel then
// has cached). Each node runs `prepare` and 640 token transfers, a few queries to compile the query path,
// then rounds of: 3,200 more token transfers (64 senders x 50), then
//  - the new blocks' first read: a query over exactly them, whose logs no query has read before;
//  - six queries not answered before, over blocks already read (each starts one block lower);
//  - the first of those again, six times (Keel answers it from its answer cache).
// Latency is the request to the last byte of the answer (node:http, the body kept as bytes); every
// answer's log count is checked against the transfers mined.
//
//   npm run build && node bench/macro/logs-latency.js [--rounds 3]

import http from 'node:http'
import { flagValue as opt } from '../lib/args.js'
import { post } from '../lib/json-rpc.js'
import { startAnvil, startKeel } from './nodes.js'
import { prepare, signTransfers, submitTransfers } from './scenarios.js'

const ROUNDS = Number(opt('--rounds', 3))
const PER_SENDER = 50
const hex = (n) => '0x' + n.toString(16)
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

async function measure(node) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  const send = (method, params) => post(node.url, JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }), { agent, timeoutMs: 30_000 })
  const headNumber = async () => Number(JSON.parse((await send('eth_blockNumber', [])).bytes).result)
  const ctx = await prepare(node, true)
  const mine = async (perSender) => {
    const run = await submitTransfers(node, ctx, 'erc20', await signTransfers(node, ctx, 'erc20', perSender))
    if (run.errors > 0) throw new Error(`${node.name}: ${run.errors} transfers failed`)
    return run.calls
  }
  /** One query: its latency, and its answer's logs counted once (the first time these criteria are asked). */
  const query = async (from, to, expected) => {
    const started = performance.now()
    const { bytes } = await send('eth_getLogs', [{ fromBlock: hex(from), toBlock: hex(to), address: ctx.token }])
    const ms = performance.now() - started
    if (expected !== undefined) {
      const answer = JSON.parse(bytes)
      if (answer.result?.length !== expected) throw new Error(`${node.name}: ${expected} logs expected, got ${answer.result?.length ?? JSON.stringify(answer.error)}`)
    }
    return ms
  }
  await mine(10)
  let head = await headNumber()
  // the query path's code compiled (over the blocks of the run above)
  for (let i = 0; i < 30; i++) await query(i % 3, head)
  const firstReads = []
  const notAnswered = []
  const again = []
  let logs = 0
  for (let round = 0; round < ROUNDS; round++) {
    const from = head + 1
    logs = await mine(PER_SENDER)
    head = await headNumber()
    firstReads.push(await query(from, head))
    await query(from, head, logs) // counted apart from the timed read (parsing 2 MB takes longer than the query)
    for (let lower = 1; lower <= 6; lower++) notAnswered.push(await query(from - lower, head))
    for (let i = 0; i < 6; i++) again.push(await query(from - 1, head))
  }
  agent.destroy()
  return { logs, firstReads, notAnswered: median(notAnswered), again: median(again) }
}

const rows = []
for (const start of [startKeel, startAnvil]) {
  const node = await start()
  try {
    rows.push({ node: node.name, ...(await measure(node)) })
  } finally {
    await node.stop()
  }
}
const [keel, anvil] = rows
console.table(rows.map((r) => ({
  node: r.node,
  'logs an answer': r.logs,
  'first read of new blocks, ms (each round)': r.firstReads.map((ms) => ms.toFixed(1)).join(' / '),
  'a query not answered before, ms (median)': r.notAnswered.toFixed(1),
  'the same query again, ms (median)': r.again.toFixed(1),
})))
console.log(`anvil/Keel: first read ${(median(anvil.firstReads) / median(keel.firstReads)).toFixed(2)}, a query not answered before ${(anvil.notAnswered / keel.notAnswered).toFixed(2)}, the same query again ${(anvil.again / keel.again).toFixed(2)} (higher is Keel faster)`)
