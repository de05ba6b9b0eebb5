// What the first read of a block of thousands of transfers holds the main thread for: a node's JSON of a
// block is built at the first request for it and kept with the cached block, so the first
// eth_getBlockByNumber (hashes only), the first eth_getHeaderByNumber (a newHeads payload is the same
// text) and the first fee suggestion after the blocks (geth's oracle reads 20 blocks' tips) each pay for
// the whole block once, on the thread that serves every other request; so does the first with full
// transactions (what indexers ask for). 64 senders × 40 native, then ERC20, transfers (the macro bench's
// runs) on a fresh node; each block that holds them is read once cold, then again: the second read is the
// transport and this client's JSON parsing, the difference the node's building of the JSON.
//
//   npm run build && node bench/macro/block-reads.js

import { rpc } from '../lib/json-rpc.js'
import { startKeel } from './nodes.js'
import { prepare, signTransfers, submitTransfers } from './scenarios.js'

const timed = async (call) => {
  const started = performance.now()
  const result = await call()
  return { ms: Number((performance.now() - started).toFixed(2)), result }
}

const node = await startKeel()
try {
  const ctx = await prepare(node, true)
  const rows = []
  for (const kind of ['native', 'erc20']) {
    ctx.mined = { hashes: [], blocks: new Set() }
    const run = await submitTransfers(node, ctx, kind, await signTransfers(node, ctx, kind, 40))
    if (run.errors > 0) throw new Error(`${run.errors} ${kind} transfers failed`)
    for (const number of ctx.mined.blocks) {
      const block = await timed(() => rpc(node.url, 'eth_getBlockByNumber', [number, false]))
      const header = await timed(() => rpc(node.url, 'eth_getHeaderByNumber', [number]))
      const again = await timed(() => rpc(node.url, 'eth_getHeaderByNumber', [number]))
      const full = await timed(() => rpc(node.url, 'eth_getBlockByNumber', [number, true]))
      const fullAgain = await timed(() => rpc(node.url, 'eth_getBlockByNumber', [number, true]))
      rows.push({ kind, block: Number(number), transactions: block.result.transactions.length, 'block JSON, first (ms)': block.ms, 'header, first (ms)': header.ms, 'header, cached (ms)': again.ms, 'full block, first (ms)': full.ms, 'full block, cached (ms)': fullAgain.ms })
    }
  }
  console.table(rows)
  const fees = await timed(() => rpc(node.url, 'eth_maxPriorityFeePerGas', []))
  const feesAgain = await timed(() => rpc(node.url, 'eth_maxPriorityFeePerGas', []))
  console.log(`eth_maxPriorityFeePerGas over the last 20 blocks: first ${fees.ms} ms, then ${feesAgain.ms} ms (${fees.result})`)
} finally {
  await node.stop()
}
