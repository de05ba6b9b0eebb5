// eth_call in the engine a worker runs (ExecEngine directly, one thread), and through the pool:
// one piscina task per call vs. calls coalesced into one task.

import { Bench } from 'tinybench'
import { hexToBytes } from '@ethereumjs/util'
import { Interface } from 'ethers'
import { ExecEngine } from '../../dist/exec/engine.js'
import { ExecPool } from '../../dist/exec/pool.js'
import { compile } from '../../test/helpers/contracts.js'
import { deploy, fundTokenHolders, openTempChain } from '../lib/temp-chain.js'
import { row } from './rpc.js'

const HOLDERS = 2000

export async function run({ time, quick }) {
  const { Token } = compile()
  const abi = new Interface(Token.abi)
  const chain = await openTempChain()
  const token = await deploy(chain, Token.bytecode)
  // spread the token over many holders so balanceOf walks a real storage trie
  const holders = Array.from({ length: quick ? 500 : HOLDERS }, (_, i) => `0x${(0x1000 + i).toString(16).padStart(40, '0')}`)
  await fundTokenHolders(chain, token, abi, holders, { amount: 1000n, perBlock: 250 })
  const block = chain.headExecBlock()
  const calls = holders.map((h) => ({ kind: 'call', block, args: { to: token, data: hexToBytes(abi.encodeFunctionData('balanceOf', [h])) } }))
  const estimate = { kind: 'estimateGas', block, args: { from: chain.dev[0].address, to: token, data: hexToBytes(abi.encodeFunctionData('transfer', [holders[0], 1n])) } }
  const limits = { gasCap: 50_000_000n, timeoutMs: 5000 }

  const warm = new ExecEngine(chain.common, chain.level, limits)
  let i = 0
  // cold: a new reader per call = no read cache, no node cache (every lookup goes to LevelDB)
  const coldEngine = () => new ExecEngine(chain.common, chain.level, limits)
  const bench = new Bench({ time })
  bench
    .add('engine: balanceOf, warm read caches (same root)', async () => {
      const r = await warm.run(calls[i++ % calls.length])
      if (!r.ok) throw new Error(r.error.message)
    })
    .add('engine: balanceOf, cold (new engine per call: LevelDB reads)', async () => {
      const r = await coldEngine().run(calls[i++ % calls.length])
      if (!r.ok) throw new Error(r.error.message)
    })
    .add('engine: eth_estimateGas ERC20 transfer (warm)', async () => {
      const r = await warm.run(estimate)
      if (!r.ok) throw new Error(r.error.message)
    })
  await bench.run()
  const rows = bench.tasks.map(row)

  // the pool: 2000 calls submitted at once, vs. awaited one by one (one piscina task each)
  const pool = new ExecPool({ dataDir: chain.dir, genesis: chain.genesis, limits }, { workers: 1 })
  await Promise.all(calls.slice(0, 50).map((c) => pool.run(c)))
  const n = quick ? 1000 : 4000
  let t = performance.now()
  for (let k = 0; k < n / 4; k++) await pool.run(calls[k % calls.length])
  const sequential = (n / 4) / ((performance.now() - t) / 1000)
  const tasksBefore = pool.stats.piscinaTasks
  t = performance.now()
  const results = await Promise.all(Array.from({ length: n }, (_, k) => pool.run(calls[k % calls.length])))
  const together = n / ((performance.now() - t) / 1000)
  const used = pool.stats.piscinaTasks - tasksBefore
  await pool.close()
  rows.push({ name: 'pool (1 worker): balanceOf awaited one by one (1 piscina task each)', 'µs (median)': Number((1e6 / sequential).toFixed(1)), 'ops/s': Math.round(sequential) })
  rows.push({ name: `pool (1 worker): ${n} balanceOf submitted together (${used} piscina tasks)`, 'µs (median)': Number((1e6 / together).toFixed(1)), 'ops/s': Math.round(together), errors: results.filter((r) => !r.ok).length })
  await chain.close()
  return rows
}
