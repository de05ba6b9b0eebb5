// A fresh call engine's first 3,000 unique token balanceOf calls (a call worker's first moments, before V8
// has optimised the call path), with and without the workers' idle warm-up (src/exec/warm-up.ts) first.
// Each round is a new process; the two kinds alternate. Not part of `npm run bench`:
//   node bench/micro/cold-calls.js [rounds]

import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { hexToBytes } from '@ethereumjs/util'
import { Interface } from 'ethers'
import { ExecEngine } from '../../dist/exec/engine.js'
import { IDLE_WARM_UP_CALLS, warmUpOnce, warmUpWhileIdle } from '../../dist/exec/warm-up.js'
import { compile } from '../../test/helpers/contracts.js'
import { deploy, openTempChain } from '../lib/temp-chain.js'

const CALLS = 3000

async function child(warmUpCalls) {
  const { Token } = compile()
  const abi = new Interface(Token.abi)
  const chain = await openTempChain()
  try {
    const token = await deploy(chain, Token.bytecode)
    const engine = new ExecEngine(chain.common, chain.level, { gasCap: 50_000_000n, timeoutMs: 5000 }, { syncReads: true })
    const block = chain.headExecBlock()
    const data = Array.from({ length: CALLS }, (_, i) => hexToBytes(abi.encodeFunctionData('balanceOf', [`0x${(0x10000 + i).toString(16).padStart(40, '0')}`])))
    // what a worker does before it reports ready, then (or not) what it does while idle
    await warmUpOnce(engine, block)
    let t = performance.now()
    await warmUpWhileIdle(engine, block, async () => true, warmUpCalls)
    const warmUpMs = performance.now() - t
    const split = []
    t = performance.now()
    for (let i = 0; i < CALLS; i++) {
      const r = await engine.run({ kind: 'call', block, args: { to: token, data: data[i] } })
      if (!r.ok) throw new Error(JSON.stringify(r.error))
      if (i === 999 || i === CALLS - 1) split.push(performance.now() - t)
    }
    console.log(JSON.stringify({ warmUpMs, first: split[0], rest: split[1] - split[0] }))
  } finally {
    await chain.close()
  }
}

if (process.argv[2] === '--child') {
  await child(Number(process.argv[3]))
} else {
  const rounds = Number(process.argv[2] ?? 4)
  const sums = new Map()
  for (let r = 0; r < rounds; r++) {
    for (const calls of [0, IDLE_WARM_UP_CALLS]) {
      const out = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', String(calls)], { encoding: 'utf8' })
      if (out.status !== 0) throw new Error(out.stderr)
      const m = JSON.parse(out.stdout.trim().split('\n').pop())
      const s = sums.get(calls) ?? { first: 0, rest: 0, warmUp: 0 }
      s.first += m.first
      s.rest += m.rest
      s.warmUp += m.warmUpMs
      sums.set(calls, s)
      console.log(`round ${r + 1}, ${String(calls).padStart(4)} warm-up calls (${m.warmUpMs.toFixed(0)} ms): first 1,000 calls ${m.first.toFixed(0)} ms, next 2,000 ${m.rest.toFixed(0)} ms`)
    }
  }
  for (const [calls, s] of sums) {
    console.log(`mean, ${String(calls).padStart(4)} warm-up calls: first 1,000 ${(s.first / rounds).toFixed(0)} ms, next 2,000 ${(s.rest / rounds).toFixed(0)} ms, all 3,000 ${((s.first + s.rest) / rounds).toFixed(0)} ms (warm-up ${(s.warmUp / rounds).toFixed(0)} ms)`)
  }
}
