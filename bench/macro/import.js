// keel import's speed: a chain of native transfers and ERC20 transfers built in process (the real
// producer), exported with `keel export`, then imported into a fresh data folder with `keel import`
// (every block executed and checked). Prints blocks/s, transactions/s and gas/s of the import itself
// (the command's own timer: reading, executing, checking and writing, without the process start).
//
//   node bench/macro/import.js [--quick] [--blocks N] [--txs-per-block M]

import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { hexToBytes } from '@ethereumjs/util'
import { Interface } from 'ethers'
import { benchKeys, deploy, fundTokenHolders, openTempChain } from '../lib/temp-chain.js'
import { compile } from '../../test/helpers/contracts.js'

const args = process.argv.slice(2)
const arg = (name, fallback) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? Number(args[i + 1]) : fallback
}
const quick = args.includes('--quick')
const BLOCKS = arg('blocks', quick ? 50 : 300)
const PER_BLOCK = arg('txs-per-block', 100)
const keel = join(import.meta.dirname, '..', '..', 'bin', 'keel.js')

const { Token } = compile()
const senders = benchKeys(PER_BLOCK, 48)
const chain = await openTempChain({ funded: senders, plainTransfers: false })
const work = mkdtempSync(join(tmpdir(), 'keel-bench-import-'))
try {
  const token = await deploy(chain, Token.bytecode)
  // every sender gets tokens, so that half of each block is ERC20 transfers
  const erc20 = new Interface(Token.abi)
  await fundTokenHolders(chain, token, erc20, senders, { perBlock: senders.length })
  for (let b = 0; b < BLOCKS; b++) {
    for (let i = 0; i < senders.length; i++) {
      const to = `0x${(b * PER_BLOCK + i + 1).toString(16).padStart(40, '0')}`
      const raw = i % 2 === 0
        ? chain.sign(senders[i], { to: hexToBytes(to), value: 1n, gasLimit: 21_000n })
        : chain.sign(senders[i], { to: hexToBytes(token), data: hexToBytes(erc20.encodeFunctionData('transfer', [to, 1n])) })
      await chain.submit(raw)
    }
    await chain.sealBlock()
  }
  const genesisFile = join(work, 'genesis.json')
  writeFileSync(genesisFile, JSON.stringify(chain.genesis))
  const dataDir = chain.dir
  await chain.close({ keepData: true })
  const file = join(work, 'chain.rlp')
  execFileSync(process.execPath, [keel, 'export', file, '--data-dir', dataDir])
  const out = execFileSync(process.execPath, [keel, 'import', file, '--genesis', genesisFile, '--data-dir', join(work, 'imported')], { encoding: 'utf8' })
  const m = /imported (\d+) blocks .*?, (\d+) transactions, (\d+) gas in ([\d.]+) s/.exec(out)
  if (m === null) throw new Error(`unexpected output: ${out}`)
  const [blocks, txs, gas, secs] = [Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4])]
  console.log(`keel import: ${blocks} blocks, ${txs} transactions (${PER_BLOCK} per block: half native, half ERC20), ${(gas / 1e6).toFixed(1)} Mgas in ${secs} s`)
  console.log(`  ${(blocks / secs).toFixed(1)} blocks/s, ${(txs / secs).toFixed(0)} tx/s, ${(gas / secs / 1e6).toFixed(1)} Mgas/s`)
  rmSync(dataDir, { recursive: true, force: true })
} finally {
  rmSync(work, { recursive: true, force: true })
}
