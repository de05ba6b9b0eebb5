// How long the producer's event loop is held at a time while it seals a block of ERC20 transfers: every
// eth_sendRawTransaction and pool query that arrives meanwhile waits for the stretch to end. The real
// Producer in this process (bench/lib/temp-chain.js, nothing else running on its event loop), N funded
// senders each sending one token transfer to a new holder a block; an immediate re-queued after each
// turn of the event loop times the gaps between turns. A build takes a turn every 2 ms, so its gaps are
// ~2 ms plus collections; what is left of the seal (state root, tries, commit) shows as longer ones.
//
//   npm run build && node bench/micro/seal-stretches.js [--txs 2000] [--blocks 4] [TREE ...]
//
// With TREEs (built git worktrees), each runs in its own process, in turn, for an A/B. Prints per tree the
// median over the timed blocks (the first is a warm-up) of: the seal's wall time, its longest stretch, the
// second longest, and the time in stretches over 5 ms. Not part of `npm run bench`.

import { execFileSync } from 'node:child_process'
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { flagValue as opt } from '../lib/args.js'

const TXS = Number(opt('--txs', 2000))
const BLOCKS = Number(opt('--blocks', 4))

/** Seals BLOCKS + 1 blocks of TXS token transfers; returns each timed block's figures. */
export async function measure(txs = TXS, blocks = BLOCKS) {
  const { hexToBytes } = await import('@ethereumjs/util')
  const { Interface } = await import('ethers')
  const { compile } = await import('../../test/helpers/contracts.js')
  const { benchKeys, deploy, fundTokenHolders, openTempChain } = await import('../lib/temp-chain.js')
  const senders = benchKeys(txs, 7)
  const chain = await openTempChain({ funded: senders })
  const { Token } = compile()
  const abi = new Interface(Token.abi)
  const tokenAddress = await deploy(chain, Token.bytecode)
  const token = hexToBytes(tokenAddress)
  const transfer = (to, amount) => hexToBytes(abi.encodeFunctionData('transfer', [to, amount]))
  await fundTokenHolders(chain, tokenAddress, abi, senders)
  // the gaps between turns of the event loop, while `on`
  let on = false
  let last = 0
  let gaps = []
  const tick = () => {
    if (!on) return
    const now = performance.now()
    gaps.push(now - last)
    last = now
    setImmediate(tick)
  }
  const rows = []
  for (let b = 0; b <= blocks; b++) {
    for (let s = 0; s < txs; s++) {
      const recipient = `0x${(0x100000 + b * txs + s).toString(16).padStart(40, '0')}`
      await chain.submit(chain.sign(senders[s], { to: token, data: transfer(recipient, 1n), gasLimit: 80_000n }))
    }
    gaps = []
    on = true
    last = performance.now()
    setImmediate(tick)
    const started = performance.now()
    const event = await chain.sealBlock()
    const sealMs = performance.now() - started
    on = false
    if (event.txHashes.length !== txs) throw new Error(`the block held ${event.txHashes.length} transfers, not ${txs}`)
    gaps.sort((x, y) => y - x)
    if (b > 0) rows.push({ sealMs, longest: gaps[0], second: gaps[1], over5: gaps.filter((g) => g > 5).reduce((a, g) => a + g, 0) })
  }
  await chain.close()
  return rows
}

const median = (values) => [...values].sort((x, y) => x - y)[values.length >> 1]

function summary(rows) {
  const f = (k) => Number(median(rows.map((r) => r[k])).toFixed(1))
  return { 'seal ms': f('sealMs'), 'longest stretch ms': f('longest'), 'second longest ms': f('second'), 'ms in stretches > 5 ms': f('over5'), blocks: rows.length }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const trees = process.argv.slice(2).filter((a, i, all) => !a.startsWith('--') && !all[i - 1]?.startsWith('--'))
  if (trees.length === 0) {
    console.table([summary(await measure())])
  } else {
    const out = []
    for (const tree of trees) {
      const script = resolve(tree, 'bench/micro/seal-stretches.js')
      const code = `const { measure } = await import(${JSON.stringify(script)}); console.log(JSON.stringify(await measure(${TXS}, ${BLOCKS})))`
      const json = execFileSync(process.execPath, ['--input-type=module', '-e', code], { cwd: tree, encoding: 'utf8', maxBuffer: 1 << 24, timeout: 900_000 })
      out.push({ tree, ...summary(JSON.parse(json.trim().split('\n').at(-1))) })
    }
    console.table(out)
  }
}
