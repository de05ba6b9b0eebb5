// eth_getLogs over a long chain, through a real node over HTTP: 100,000 blocks (10,000 with --quick)
// holding three token transfers. The inverted address/topic index (A/T keys, src/chain/store/schema.ts)
// names the blocks to read, so a query over the whole chain with few matches reads those blocks and
// not the ones between them; a query naming no address or topic reads the blooms, which only blocks
// with logs have.
// Each request of a row starts one block later than its last (the node keeps answers by range, and a
// repeat would be answered from that cache), and every answer's log count is checked.
// Large answers: a second chain of 17 blocks holds 3,201 token Transfer logs (the mint, then 16 blocks of
// 200 transfers); the whole-chain query by the token's address answers all of them (~2 MB), each request
// with a new id. Its time is the server's and the transfer's: the client reads the bytes and checks their
// length (the answer's log count is checked once, parsed), not parsing 2 MB each time.

import { Bench } from 'tinybench'
import { hexToBytes } from '@ethereumjs/util'
import { Interface, id, zeroPadValue } from 'ethers'
import { compile } from '../../test/helpers/contracts.js'
import { deploy, fundTokenHolders, openTempChain } from '../lib/temp-chain.js'
import { startKeel } from '../macro/nodes.js'
import { rpc } from '../macro/scenarios.js'
import { row } from './rpc.js'

const TRANSFER = id('Transfer(address,address,uint256)')

/** A chain of `length` blocks: the token deployed in block 1, a transfer to recipients[k] in blocks at[k]. */
async function buildChain(length, at, recipients) {
  const { Token } = compile()
  const abi = new Interface(Token.abi)
  const chain = await openTempChain()
  const token = await deploy(chain, Token.bytecode)
  for (let n = 2; n <= length; n++) {
    const k = at.indexOf(n)
    if (k >= 0) {
      await chain.submit(chain.sign(chain.dev[0].key, { to: hexToBytes(token), data: hexToBytes(abi.encodeFunctionData('transfer', [recipients[k], 1n])), gasLimit: 80_000n }))
    }
    await chain.sealBlock()
  }
  await chain.close({ keepData: true })
  return { dir: chain.dir, token }
}

const BULK_BLOCKS = 16
const BULK_PER_BLOCK = 200

/** A chain of the token's deploy (its mint logs a Transfer) and BULK_BLOCKS blocks of BULK_PER_BLOCK transfers. */
async function buildBulkChain() {
  const { Token } = compile()
  const abi = new Interface(Token.abi)
  const chain = await openTempChain()
  const token = await deploy(chain, Token.bytecode)
  const recipients = Array.from({ length: BULK_BLOCKS * BULK_PER_BLOCK }, (_, i) => `0x${(0xc00000 + i).toString(16).padStart(40, '0')}`)
  await fundTokenHolders(chain, token, abi, recipients, { amount: 1n, perBlock: BULK_PER_BLOCK })
  await chain.close({ keepData: true })
  return { dir: chain.dir, token, logs: 1 + BULK_BLOCKS * BULK_PER_BLOCK }
}

/** eth_getLogs answers of 3,201 logs: a query the node has not answered before, and the same one again. */
async function largeAnswers(time) {
  const { dir, token, logs } = await buildBulkChain()
  const node = await startKeel({ dataDir: dir })
  try {
    // ids of one length, so that every answer has the same size
    let id = 1_000_000
    const body = (addresses) => JSON.stringify({ jsonrpc: '2.0', id: id++, method: 'eth_getLogs', params: [{ fromBlock: '0x0', toBlock: 'latest', address: addresses }] })
    const post = async (text) => (await fetch(node.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: text })).arrayBuffer()
    const first = JSON.parse(Buffer.from(await post(body([token]))).toString())
    if (first.result?.length !== logs) throw new Error(`expected ${logs} logs, got ${first.result?.length ?? JSON.stringify(first.error)}`)
    const bytes = (await post(body([token]))).byteLength
    const query = async (addresses) => {
      const got = (await post(body(addresses))).byteLength
      if (got !== bytes) throw new Error(`expected the ${bytes}-byte answer, got ${got} bytes`)
    }
    let other = 0
    const bench = new Bench({ time })
    bench
      // a second address that never logged makes each query new to the node's answer cache: the logs are matched and joined each time
      .add(`eth_getLogs whole chain, token address: ${logs} logs in ${BULK_BLOCKS + 1} blocks (${(bytes / 2 ** 20).toFixed(1)} MiB), a new query each`, () => query([token, `0x${(0xdead0000 + other++).toString(16).padStart(40, '0')}`]))
      // as clients that number their requests (ethers, viem): the answer is the cached one, the id a new one
      .add(`eth_getLogs whole chain, token address: ${logs} logs, the same query again with a new id (answer cache)`, () => query([token]))
    await bench.run()
    return bench.tasks.map(row)
  } finally {
    await node.stop()
  }
}

export async function run({ time, quick }) {
  const length = quick ? 10_000 : 100_000
  const at = [Math.floor(length / 4), Math.floor(length / 2), length - 10]
  const recipients = at.map((_, k) => `0x${(0xbeef00 + k).toString(16).padStart(40, '0')}`)
  const builtAt = performance.now()
  const { dir, token } = await buildChain(length, at, recipients)
  const buildSeconds = (performance.now() - builtAt) / 1000
  // the default range limit (--logs-max-block-range 10,000) would refuse a query over the whole chain
  const node = await startKeel({ dataDir: dir, args: ['--logs-max-block-range', String(length * 2)] })
  let rows
  try {
    // Each row's start moves through blocks 2..at[0]-1, so every range holds all the transfers however
    // many iterations the row runs; a start comes round again after at[0]-2 queries, long out of the
    // answer cache (512 entries).
    const querier = (criteria, expected) => {
      let from = 2
      return async () => {
        const logs = await rpc(node.url, 'eth_getLogs', [{ fromBlock: `0x${from.toString(16)}`, toBlock: 'latest', ...criteria }])
        from = from + 1 < at[0] ? from + 1 : 2
        if (logs.length !== expected) throw new Error(`expected ${expected} logs, got ${logs.length}`)
      }
    }
    const bench = new Bench({ time })
    bench
      .add(`eth_getLogs ${length} blocks, token address: 3 matches (index)`, querier({ address: token }, 3))
      .add(`eth_getLogs ${length} blocks, Transfer to one recipient: 1 match (index)`, querier({ topics: [TRANSFER, null, zeroPadValue(recipients[1], 32)] }, 1))
      .add(`eth_getLogs ${length} blocks, an address without logs: 0 matches (index)`, querier({ address: `0x${'ab'.repeat(20)}` }, 0))
      .add(`eth_getLogs ${length} blocks, no address or topic: 3 matches (blooms)`, querier({}, 3))
    await bench.run()
    rows = bench.tasks.map(row)
    rows.push({ name: `(the chain of ${length} blocks was built in ${buildSeconds.toFixed(1)} s)` })
  } finally {
    await node.stop()
  }
  return [...rows, ...(await largeAnswers(time))]
}

// node bench/micro/logs.js [--quick] [--large-only]: this file alone (--large-only: just the 3,201-log answers)
if (import.meta.url === `file://${process.argv[1]}`) {
  const quick = process.argv.includes('--quick')
  const time = quick ? 300 : 2000
  console.table(process.argv.includes('--large-only') ? await largeAnswers(time) : await run({ time, quick }))
}
