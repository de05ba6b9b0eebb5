// The load generator's CPU a JSON-RPC round trip with each of its clients for one-at-a-time callers:
// node:http over kept-alive connections (`post` of lib/json-rpc.js) and lib/lean-http.js (`rpc`), 64
// callers each sending eth_getTransactionReceipt of unknown hashes, alternated rounds after a warm-up.
//
//   node bench/macro/client-cost.js [keel|anvil] [--rounds 4] [--per-caller 200]

import { flagValue as opt } from '../lib/args.js'
import { post, resultOf, rpc } from '../lib/json-rpc.js'
import { startAnvil, startKeel } from './nodes.js'

const ROUNDS = Number(opt('--rounds', 4))
const PER_CALLER = Number(opt('--per-caller', 200))
const CALLERS = 64

async function nodeHttpRpc(url, method, params) {
  const { status, bytes } = await post(url, JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }))
  return resultOf(method, status, bytes)
}

const clients = { 'node:http': nodeHttpRpc, 'lean-http': rpc }

async function round(url, name) {
  const call = clients[name]
  const cpu = process.cpuUsage()
  const started = performance.now()
  await Promise.all(Array.from({ length: CALLERS }, async (_, c) => {
    for (let k = 0; k < PER_CALLER; k++) {
      const hash = `0x${(c * PER_CALLER + k + 1).toString(16).padStart(64, '0')}`
      if ((await call(url, 'eth_getTransactionReceipt', [hash])) !== null) throw new Error('a receipt for an unknown hash')
    }
  }))
  const used = process.cpuUsage(cpu)
  const n = CALLERS * PER_CALLER
  return { cpuUs: (used.user + used.system) / n, rate: n / ((performance.now() - started) / 1000) }
}

const node = process.argv[2] === 'anvil' ? await startAnvil() : await startKeel()
try {
  for (const name of Object.keys(clients)) await round(node.url, name)
  const rows = []
  for (let r = 0; r < ROUNDS; r++) {
    for (const name of r % 2 === 0 ? ['node:http', 'lean-http'] : ['lean-http', 'node:http']) {
      const { cpuUs, rate } = await round(node.url, name)
      rows.push({ node: node.name, round: r + 1, client: name, 'load generator CPU µs a call': cpuUs.toFixed(1), 'calls/s': Math.round(rate) })
    }
  }
  console.table(rows)
} finally {
  await node.stop()
}
