// What writing a block's batch costs, and the explorer indexes' part of it: the real Producer builds blocks of
// 500 native and of 500 ERC20 transfers on a temp LevelDB while their write batches are captured; each captured
// batch is then written to a second temp LevelDB as an array batch (`level.batch(ops)`) and through
// writeBatch (src/chain/store/write-batch.ts: the chained batch the producer uses), each with and without the
// index entries (I, N, C), alternating, median of the rounds.
//
//   node bench/micro/block-batch.js [--quick]       (not part of `npm run bench`)

import { hexToBytes } from '@ethereumjs/util'
import { Interface } from 'ethers'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openChainLevel } from '../../dist/chain/store/level.js'
import { Prefix } from '../../dist/chain/store/schema.js'
import { writeBatch } from '../../dist/chain/store/write-batch.js'
import { compile } from '../../test/helpers/contracts.js'
import { benchKeys, deploy, fundTokenHolders, openTempChain } from '../lib/temp-chain.js'

const PER_BLOCK = 500
const INDEX_PREFIXES = new Set([Prefix.appearance, Prefix.senderNonce, Prefix.creator])

/** Builds `blocks` blocks of `kind` transfers and returns each block's write batch. */
async function captureBlocks(kind, blocks) {
  const senders = benchKeys(PER_BLOCK, 7)
  const chain = await openTempChain({ funded: senders })
  try {
    const { Token } = compile()
    const abi = new Interface(Token.abi)
    const tokenAddress = await deploy(chain, Token.bytecode)
    const token = hexToBytes(tokenAddress)
    if (kind === 'erc20') await fundTokenHolders(chain, tokenAddress, abi, senders)
    // the producer's block write is the one chained batch of a seal (the pool journal's writes are array batches)
    const captured = []
    const chained = chain.level.batch.bind(chain.level)
    chain.level.batch = function (...args) {
      if (args.length > 0) return chained(...args)
      const batch = chained()
      const ops = []
      const put = batch.put.bind(batch)
      const del = batch.del.bind(batch)
      batch.put = (key, value) => (ops.push({ type: 'put', key, value }), put(key, value))
      batch.del = (key) => (ops.push({ type: 'del', key }), del(key))
      captured.push(ops)
      return batch
    }
    for (let b = 0; b < blocks; b++) {
      for (let s = 0; s < PER_BLOCK; s++) {
        const recipient = hexToBytes(`0x${(0x100000 + b * PER_BLOCK + s).toString(16).padStart(40, '0')}`)
        const fields = kind === 'native'
          ? { to: recipient, value: 1n, gasLimit: 21_000n }
          : { to: token, data: hexToBytes(abi.encodeFunctionData('transfer', [`0x${Buffer.from(recipient).toString('hex')}`, 1n])), gasLimit: 80_000n }
        await chain.submit(chain.sign(senders[s], fields))
      }
      const event = await chain.sealBlock()
      if (event.txHashes.length !== PER_BLOCK) throw new Error(`${kind}: block held ${event.txHashes.length} txs, not ${PER_BLOCK}`)
    }
    chain.level.batch = chained
    return captured.filter((ops) => ops.length > PER_BLOCK)
  } finally {
    await chain.close()
  }
}

export async function run({ quick }) {
  const rounds = quick ? 12 : 48
  const dir = mkdtempSync(join(tmpdir(), 'keel-block-batch-'))
  const level = await openChainLevel(join(dir, 'db'))
  const rows = []
  try {
    for (const kind of ['native', 'erc20']) {
      const batches = await captureBlocks(kind, 4)
      const ops = batches[batches.length - 1]
      const index = ops.filter((op) => INDEX_PREFIXES.has(op.key[0])).length
      const ways = {
        'array batch': (o) => level.batch(o),
        'array batch, no index entries': (o) => level.batch(o.filter((op) => !INDEX_PREFIXES.has(op.key[0]))),
        writeBatch: (o) => writeBatch(level, o),
        'writeBatch, no index entries': (o) => writeBatch(level, o.filter((op) => !INDEX_PREFIXES.has(op.key[0]))),
      }
      const times = Object.fromEntries(Object.keys(ways).map((w) => [w, []]))
      for (let r = 0; r < rounds; r++) {
        for (const [way, write] of Object.entries(ways)) {
          const o = batches[r % batches.length]
          const t = performance.now()
          await write(o)
          times[way].push(performance.now() - t)
        }
      }
      for (const [way, t] of Object.entries(times)) {
        t.sort((a, b) => a - b)
        rows.push({ name: `${kind} block: ${way}`, ops: way.includes('no index') ? ops.length - index : ops.length, 'ms (median)': Number(t[t.length >> 1].toFixed(2)), rounds })
      }
    }
  } finally {
    await level.close()
    rmSync(dir, { recursive: true, force: true })
  }
  return rows
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.table(await run({ quick: process.argv.includes('--quick') }))
}
