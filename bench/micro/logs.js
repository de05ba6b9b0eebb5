// eth_getLogs over a long chain, through a real node over HTTP: 100,000 blocks (10,000 with --quick)
// holding three token transfers. The inverted address/topic index (A/T keys, src/chain/store/schema.ts)
// names the blocks to read, so a query over the whole chain with few matches reads those blocks and
// not the ones between them; a query naming no address or topic reads the blooms, which only blocks
// with logs have.
// Each request starts one block later than the last (the node keeps answers by range, and a repeat
// would be answered from that cache), and every answer's log count is checked.

import { Bench } from 'tinybench'
import { hexToBytes } from '@ethereumjs/util'
import { Interface, id, zeroPadValue } from 'ethers'
import { compile } from '../../test/helpers/contracts.js'
import { deploy, openTempChain } from '../lib/temp-chain.js'
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

export async function run({ time, quick }) {
  const length = quick ? 10_000 : 100_000
  const at = [Math.floor(length / 4), Math.floor(length / 2), length - 10]
  const recipients = at.map((_, k) => `0x${(0xbeef00 + k).toString(16).padStart(40, '0')}`)
  const builtAt = performance.now()
  const { dir, token } = await buildChain(length, at, recipients)
  const buildSeconds = (performance.now() - builtAt) / 1000
  // the default range limit (--logs-max-block-range 10,000) would refuse a query over the whole chain
  const node = await startKeel({ dataDir: dir, args: ['--logs-max-block-range', String(length * 2)] })
  try {
    let from = 2
    const query = async (criteria, expected) => {
      const logs = await rpc(node.url, 'eth_getLogs', [{ fromBlock: `0x${(from++).toString(16)}`, toBlock: 'latest', ...criteria }])
      if (logs.length !== expected) throw new Error(`expected ${expected} logs, got ${logs.length}`)
    }
    const bench = new Bench({ time })
    bench
      .add(`eth_getLogs ${length} blocks, token address: 3 matches (index)`, () => query({ address: token }, 3))
      .add(`eth_getLogs ${length} blocks, Transfer to one recipient: 1 match (index)`, () => query({ topics: [TRANSFER, null, zeroPadValue(recipients[1], 32)] }, 1))
      .add(`eth_getLogs ${length} blocks, an address without logs: 0 matches (index)`, () => query({ address: `0x${'ab'.repeat(20)}` }, 0))
      .add(`eth_getLogs ${length} blocks, no address or topic: 3 matches (blooms)`, () => query({}, 3))
    await bench.run()
    const rows = bench.tasks.map(row)
    rows.push({ name: `(the chain of ${length} blocks was built in ${buildSeconds.toFixed(1)} s)` })
    return rows
  } finally {
    await node.stop()
  }
}
