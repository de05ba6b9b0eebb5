// How full a block gets, as geth's miner fills it: a transaction goes in while the gas left in the block
// covers its gas limit, and the block is charged the gas it used. Transactions that ask for more gas
// than they use (wallets add headroom to estimates) must not leave blocks part empty; a transaction
// whose gas limit the gas left cannot cover waits for the next block, and so do its sender's later ones.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { hexToBytes } from '@ethereumjs/util'
import { Interface } from 'ethers'
import { compile } from '../helpers/contracts.js'
import { deploy, openTempChain } from '../../bench/lib/temp-chain.js'

const GWEI = 10n ** 9n
const tip = (gwei) => ({ maxFeePerGas: 50n * GWEI, maxPriorityFeePerGas: gwei * GWEI })

async function submitAll(chain, raws) {
  const hashes = []
  for (const raw of raws) hashes.push((await chain.submit(raw)).hash)
  return hashes
}

test('value transfers: the block is charged the gas used, not the gas limits', async () => {
  const chain = await openTempChain({ gasLimit: 100_000n })
  try {
    const [a, b, c] = chain.dev
    const to = hexToBytes(`0x${'0e'.repeat(20)}`)
    const hashes = await submitAll(chain, [
      // a's three transfers first (best tip), one after the other: 63,000 gas used, 37,000 left
      chain.sign(a.key, { to, value: 1n, gasLimit: 30_000n, ...tip(3n) }),
      chain.sign(a.key, { to, value: 1n, gasLimit: 30_000n, ...tip(3n) }),
      chain.sign(a.key, { to, value: 1n, gasLimit: 30_000n, ...tip(3n) }),
      // fits in the 37,000 left (by gas limits, 90,000 of 100,000 would already be taken)
      chain.sign(b.key, { to, value: 1n, gasLimit: 30_000n, ...tip(2n) }),
      // 16,000 left: waits for the next block
      chain.sign(c.key, { to, value: 1n, gasLimit: 50_000n, ...tip(1n) }),
    ])
    const first = await chain.sealBlock()
    assert.deepEqual(first.txHashes, hashes.slice(0, 4))
    assert.equal(chain.head.gasUsed, 84_000n)
    const second = await chain.sealBlock()
    assert.deepEqual(second.txHashes, hashes.slice(4))
    assert.equal(chain.head.gasUsed, 21_000n)
  } finally {
    await chain.close()
  }
})

test('contract calls: a sender whose next call does not fit keeps its nonce order', async () => {
  const { Token } = compile()
  const abi = new Interface(Token.abi)
  const chain = await openTempChain({ gasLimit: 5_000_000n })
  try {
    const token = hexToBytes(await deploy(chain, Token.bytecode))
    const [a, b] = chain.dev
    const transfer = (key, n, gasLimit, gwei) =>
      chain.sign(key, { to: token, data: hexToBytes(abi.encodeFunctionData('transfer', [`0x${(0xd00 + n).toString(16).padStart(40, '0')}`, 1n])), gasLimit, ...tip(gwei) })
    const hashes = await submitAll(chain, [
      // a transfer to a new holder uses ~52,000 gas: all four fit (by gas limits only three would)
      transfer(a.key, 1, 1_500_000n, 3n),
      transfer(a.key, 2, 1_500_000n, 3n),
      transfer(a.key, 3, 1_500_000n, 3n),
      transfer(a.key, 4, 1_500_000n, 3n),
      // more than the gas left: waits for the next block, and a's later transfer with it
      transfer(a.key, 5, 4_900_000n, 3n),
      transfer(a.key, 6, 60_000n, 3n),
      transfer(b.key, 7, 60_000n, 1n),
    ])
    const first = await chain.sealBlock()
    assert.deepEqual(first.txHashes, [...hashes.slice(0, 4), hashes[6]])
    assert.ok(chain.head.gasUsed > 5n * 40_000n && chain.head.gasUsed < 5n * 60_000n, `gas used ${chain.head.gasUsed}`)
    const second = await chain.sealBlock()
    assert.deepEqual(second.txHashes, hashes.slice(4, 6))
  } finally {
    await chain.close()
  }
})
