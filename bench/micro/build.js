// Block building per 500 txs: the real Producer (lean builder, one LevelDB batch per block) on a temp
// LevelDB. Timed: seal() = build + state root + tx/receipt tries + commit. Not timed: signing, intake.

import { hexToBytes } from '@ethereumjs/util'
import { Interface } from 'ethers'
import { compile } from '../../test/helpers/contracts.js'
import { benchKeys, deploy, fundTokenHolders, openTempChain } from '../lib/temp-chain.js'

const PER_BLOCK = 500

export async function run({ quick }) {
  const blocks = quick ? 3 : 8
  const senders = benchKeys(PER_BLOCK, 7)
  const chain = await openTempChain({ funded: senders })
  const { Token } = compile()
  const abi = new Interface(Token.abi)
  const token = await deploy(chain, Token.bytecode)
  await fundTokenHolders(chain, token, abi, senders) // not timed
  const rows = []
  for (const kind of ['native', 'erc20']) {
    const times = []
    for (let b = 0; b < blocks; b++) {
      for (let s = 0; s < PER_BLOCK; s++) {
        const recipient = hexToBytes(`0x${(0x100000 + b * PER_BLOCK + s).toString(16).padStart(40, '0')}`)
        const fields = kind === 'native'
          ? { to: recipient, value: 1n, gasLimit: 21_000n }
          : { to: hexToBytes(token), data: hexToBytes(abi.encodeFunctionData('transfer', [`0x${Buffer.from(recipient).toString('hex')}`, 1n])), gasLimit: 80_000n }
        await chain.submit(chain.sign(senders[s], fields))
      }
      const t = performance.now()
      const event = await chain.sealBlock()
      times.push(performance.now() - t)
      if (event.txHashes.length !== PER_BLOCK) throw new Error(`${kind}: block held ${event.txHashes.length} txs, not ${PER_BLOCK}`)
    }
    times.sort((a, b) => a - b)
    const median = times[Math.floor(times.length / 2)]
    rows.push({ name: `build+commit block of ${PER_BLOCK} ${kind} transfers`, 'ms (median)': Number(median.toFixed(1)), 'tx/s': Math.round((PER_BLOCK / median) * 1000), blocks })
  }
  await chain.close()
  return rows
}
