// keel db check's speed: builds a chain with the real Producer on a temp LevelDB (a token contract, each
// block holding token transfers with logs and plain transfers to new accounts, so the head state grows as
// the chain does), then times the walk (src/admin/db-check.ts) per phase and extrapolates the block walk
// to 100,000 blocks. The state walk grows with the head state, not with the chain's length.
//
//   node bench/micro/db-check.js [--quick] [--blocks N] [--txs-per-block N]

import { hexToBytes } from '@ethereumjs/util'
import { Interface } from 'ethers'
import { rmSync } from 'node:fs'
import { checkChain } from '../../dist/admin/db-check.js'
import { openChainLevel } from '../../dist/chain/store/level.js'
import { compile } from '../../test/helpers/contracts.js'
import { benchKeys, deploy, fundTokenHolders, openTempChain } from '../lib/temp-chain.js'
import { flagValue } from '../lib/args.js'

export async function run({ quick, blocks: wanted, txsPerBlock = 20 } = {}) {
  const blocks = wanted ?? (quick ? 500 : 5_000)
  const senders = benchKeys(txsPerBlock, 11)
  const chain = await openTempChain({ funded: senders })
  const { Token } = compile()
  const abi = new Interface(Token.abi)
  const tokenAddress = await deploy(chain, Token.bytecode)
  const token = hexToBytes(tokenAddress)
  await fundTokenHolders(chain, tokenAddress, abi, senders, { amount: 10n ** 24n })
  const buildStarted = performance.now()
  let recipient = 0x200000
  for (let b = 0; b < blocks; b++) {
    for (let s = 0; s < txsPerBlock; s++) {
      const to = `0x${(recipient++).toString(16).padStart(40, '0')}`
      const fields = s % 2 === 0
        ? { to: hexToBytes(to), value: 1n, gasLimit: 21_000n }
        : { to: token, data: hexToBytes(abi.encodeFunctionData('transfer', [to, 1n])), gasLimit: 80_000n }
      await chain.submit(chain.sign(senders[s], fields))
    }
    await chain.sealBlock()
  }
  const buildMs = performance.now() - buildStarted
  const dir = chain.dir
  const { keccak256 } = (await import('../../dist/evm/crypto.js')).fastCrypto()
  const common = chain.common
  await chain.close({ keepData: true })
  try {
    const level = await openChainLevel(`${dir}/chain`, { createIfMissing: false })
    const started = performance.now()
    const report = await checkChain(level, { keccak: keccak256, common })
    const totalMs = performance.now() - started
    await level.close()
    if (!report.ok) throw new Error(`the check found a problem in a sound chain: ${report.problem}`)
    const perBlockMs = report.ms.blocks / report.blocks
    return [{
      name: `db check, ${report.blocks} blocks of ${txsPerBlock} txs`,
      transactions: report.transactions,
      'blocks ms': report.ms.blocks,
      'blocks/s': Math.round(report.blocks / (report.ms.blocks / 1000)),
      'state nodes': report.stateNodes,
      accounts: report.accounts,
      'state ms': report.ms.state,
      'index entries': report.indexEntries,
      'indexes ms': report.ms.indexes,
      'total s': Number((totalMs / 1000).toFixed(1)),
      '100k blocks, block walk (s, extrapolated)': Number(((perBlockMs * 100_000) / 1000).toFixed(0)),
      'chain build s (not part of the check)': Number((buildMs / 1000).toFixed(0)),
    }]
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const argv = process.argv.slice(2)
  const opt = (name) => (flagValue(name) === undefined ? undefined : Number(flagValue(name)))
  const rows = await run({ quick: argv.includes('--quick'), blocks: opt('--blocks'), txsPerBlock: opt('--txs-per-block') })
  console.table(rows)
}
