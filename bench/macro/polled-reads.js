// The reads wallets and dapps poll (per block, or before every send), Keel against anvil side by side as in
// the macro bench: each method runs on Keel and right after on anvil, same load generator (autocannon, 32
// connections), after both nodes mined the same native and ERC20 transfers. Prints req/s, server CPU per
// call and Keel/anvil. Not part of `npm run bench` (which keeps to the scenarios and CI's 3 minutes).
//
//   npm run build && node bench/macro/polled-reads.js               # 3 s per method and node
//   node bench/macro/polled-reads.js --seconds 5 --only 'feeHistory|pending'

import { parseArgs } from 'node:util'
import { cpuMicros, startAnvil, startKeel } from './nodes.js'
import { toQuantity } from 'ethers'
import { balanceOfData, cannon, prepare, req, rpc, tokenAbi, transfers } from './scenarios.js'

const { values: opts } = parseArgs({ options: { seconds: { type: 'string', default: '3' }, only: { type: 'string' } } })
const seconds = Number(opts.seconds)
const only = opts.only === undefined ? undefined : new RegExp(opts.only)

const holderOf = (ctx) => ctx.senders[0].address

/** [name, autocannon request options] for one node's chain (ctx from prepare + transfers). */
function methods(ctx) {
  const holder = holderOf(ctx)
  return [
    ['eth_getBlockByNumber latest (hashes)', { body: req('eth_getBlockByNumber', ['latest', false]) }],
    ['eth_feeHistory 20 blocks at latest, 2 percentiles', { body: req('eth_feeHistory', ['0x14', 'latest', [25, 75]]) }],
    ['eth_gasPrice', { body: req('eth_gasPrice', []) }],
    ['eth_maxPriorityFeePerGas', { body: req('eth_maxPriorityFeePerGas', []) }],
    ["eth_getTransactionCount at 'pending'", { body: req('eth_getTransactionCount', [holder, 'pending']) }],
    ['eth_getCode of the token', { body: req('eth_getCode', [ctx.token, 'latest']) }],
    ['eth_getStorageAt of the token', { body: req('eth_getStorageAt', [ctx.token, '0x0', 'latest']) }],
    ['eth_getTransactionByHash (mined transfers)', { bodies: ctx.mined.hashes.map((h) => req('eth_getTransactionByHash', [h])) }],
    ['eth_getBlockReceipts latest', { body: req('eth_getBlockReceipts', ['latest']) }],
    ['net_version', { body: req('net_version', []) }],
    ['eth_estimateGas of a plain transfer', { body: req('eth_estimateGas', [{ from: holder, to: ctx.senders[1].address, value: '0x1' }]) }],
    ["eth_getBalance at 'pending'", { body: req('eth_getBalance', [holder, 'pending']) }],
    ["eth_call balanceOf at 'pending'", { body: req('eth_call', [{ to: ctx.token, data: balanceOfData(holder) }, 'pending']) }],
    ['eth_getLogs of the token, 10 blocks to latest', { body: req('eth_getLogs', [{ fromBlock: toQuantity(Math.max(0, ctx.lastMined - 9)), toBlock: 'latest', address: ctx.token }]) }],
    ['eth_getBlockByNumber latest (full transactions)', { body: req('eth_getBlockByNumber', ['latest', true]) }],
    // a wallet polls its sent transaction's receipt until it is mined: null until then
    ['eth_getTransactionReceipt of an unknown hash', { body: req('eth_getTransactionReceipt', [`0x${'ab'.repeat(32)}`]) }],
    ['eth_getTransactionByHash of a pooled transaction (nonce gap)', { body: req('eth_getTransactionByHash', [ctx.gapped]) }],
    ['eth_getTransactionReceipt of a pooled transaction (nonce gap)', { body: req('eth_getTransactionReceipt', [ctx.gapped]) }],
    ['eth_getBlockByHash (blocks of the transfers)', { bodies: ctx.minedBlockHashes.map((h) => req('eth_getBlockByHash', [h, false])) }],
    // ethers' and web3.js's HTTP providers poll filters for new blocks and contract events
    ['eth_getFilterChanges of a block filter', { body: req('eth_getFilterChanges', [ctx.blockFilter]) }],
    ['eth_getFilterChanges of a log filter (token)', { body: req('eth_getFilterChanges', [ctx.logFilter]) }],
    ['eth_getBlockTransactionCountByNumber latest', { body: req('eth_getBlockTransactionCountByNumber', ['latest']) }],
    ['eth_getTransactionByBlockNumberAndIndex', { bodies: [...ctx.mined.blocks].map((b) => req('eth_getTransactionByBlockNumberAndIndex', [b, '0x0'])) }],
    ['eth_syncing', { body: req('eth_syncing', []) }],
    ['web3_clientVersion', { body: req('web3_clientVersion', []) }],
    ['eth_createAccessList of balanceOf', { body: req('eth_createAccessList', [{ from: holder, to: ctx.token, data: balanceOfData(holder) }, 'latest']) }],
    // distinct amounts: none answered from Keel's result cache
    ['eth_createAccessList of a token transfer (unique)', { bodies: Array.from({ length: 50_000 }, (_, i) => req('eth_createAccessList', [{ from: holder, to: ctx.token, data: tokenAbi.encodeFunctionData('transfer', [ctx.senders[1].address, BigInt(i + 1)]) }, 'latest'])) }],
    ['eth_getProof of the token, one slot', { body: req('eth_getProof', [ctx.token, [`0x${'0'.repeat(64)}`], 'latest']) }],
  ]
}

const nodes = [await startKeel(), await startAnvil()]
try {
  const contexts = []
  for (const node of nodes) {
    const ctx = await prepare(node, true)
    await transfers(node, ctx, 'native', 10)
    await transfers(node, ctx, 'erc20', 10)
    ctx.lastMined = Math.max(...[...ctx.mined.blocks].map(Number))
    ctx.minedBlockHashes = []
    for (const b of ctx.mined.blocks) ctx.minedBlockHashes.push((await rpc(node.url, 'eth_getBlockByNumber', [b, false])).hash)
    // a transaction that stays in the pool: its sender's nonce before it is never used
    const last = ctx.senders.at(-1)
    const nonce = Number(await rpc(node.url, 'eth_getTransactionCount', [last.address, 'pending'])) + 1
    ctx.gapped = await rpc(node.url, 'eth_sendRawTransaction', [await last.signTransaction({ ...ctx.fees, nonce, to: holderOf(ctx), value: 1n, gasLimit: 21_000n })])
    ctx.blockFilter = await rpc(node.url, 'eth_newBlockFilter', [])
    ctx.logFilter = await rpc(node.url, 'eth_newFilter', [{ address: ctx.token }])
    contexts.push(ctx)
  }
  const rows = []
  const perNode = contexts.map(methods)
  const names = perNode[0].map(([name]) => name)
  for (let m = 0; m < names.length; m++) {
    if (only !== undefined && !only.test(names[m])) continue
    const measured = []
    for (let i = 0; i < nodes.length; i++) {
      const [, request] = perNode[i][m]
      const cpu0 = cpuMicros(nodes[i].pid)
      const r = await cannon(nodes[i].url, { ...request, duration: seconds })
      measured.push({ rate: r.value, cpu: (cpuMicros(nodes[i].pid) - cpu0) / r.calls, errors: r.errors })
      await new Promise((resolve) => setTimeout(resolve, 300))
    }
    const [k, a] = measured
    rows.push({
      method: names[m],
      keel: `${k.rate} req/s`,
      anvil: `${a.rate} req/s`,
      'keel/anvil': Number((k.rate / a.rate).toFixed(2)),
      'CPU µs/call keel': Number(k.cpu.toFixed(1)),
      'CPU µs/call anvil': Number(a.cpu.toFixed(1)),
      'errors keel/anvil': `${k.errors}/${a.errors}`,
    })
  }
  console.table(rows)
  console.log(`blocks: keel ${Number(await rpc(nodes[0].url, 'eth_blockNumber'))}, anvil ${Number(await rpc(nodes[1].url, 'eth_blockNumber'))}`)
} finally {
  for (const node of nodes.reverse()) await node.stop()
}
