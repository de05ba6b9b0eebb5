// With a block time, the producer builds the next slot's block as transactions arrive and seals it at
// its slot (src/chain/block-order.ts): a long transaction sent early in a slot has run by the time the
// slot comes, so its block is announced about one block time after the one before, not one block time
// plus its execution; and blocks still keep to their slots, one a block time, under a stream of
// submissions.

import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { Wallet } from 'ethers'
import { CHAIN_ID, DEV_ADDRESSES, DEV_KEYS, startNode } from '../helpers/node.js'
import { rpcResult, sleep, waitForReceipt } from '../helpers/rpc.js'

const GWEI = 10n ** 9n
// init code returning JUMPDEST PUSH1 32 PUSH1 0 KECCAK256 POP PUSH1 0 JUMP: hashes until its gas runs out
const LOOPER_INIT = '0x6a5b6020600020505b600056600052600b6015f3'
// about 0.5 s of that loop on the test host (16M gas took ~0.8 s: test/e2e/long-tx-intake.test.js)
const HEAVY_GAS = 10_000_000n
const fees = { type: 2, chainId: CHAIN_ID, maxFeePerGas: 10n * GWEI, maxPriorityFeePerGas: GWEI }

let node
let looper
before(async () => {
  node = await startNode({ blockTime: 1 })
  const deployer = new Wallet(DEV_KEYS[0])
  const raw = await deployer.signTransaction({ ...fees, nonce: await nonceOf(deployer), data: LOOPER_INIT, gasLimit: 200_000n })
  looper = (await waitForReceipt(node.url, await rpcResult(node.url, 'eth_sendRawTransaction', [raw]))).contractAddress
})
after(async () => {
  await node?.stop()
})

const nonceOf = async (wallet) => Number(BigInt(await rpcResult(node.url, 'eth_getTransactionCount', [wallet.address, 'pending'])))
const head = async () => BigInt(await rpcResult(node.url, 'eth_blockNumber', []))

/** Polls for the block after `n` every 5 ms; resolves to when it was first seen (performance.now()). */
async function nextHeadAfter(n, timeoutMs = 10_000) {
  const deadline = performance.now() + timeoutMs
  while (performance.now() < deadline) {
    if ((await head()) > n) return performance.now()
    await sleep(5)
  }
  throw new Error(`no block after ${n} within ${timeoutMs} ms`)
}

test('a long transaction sent early in a slot has run when the slot comes: its block is not late by its run time', async () => {
  const sender = new Wallet(DEV_KEYS[1])
  const raw = await sender.signTransaction({ ...fees, nonce: await nonceOf(sender), to: looper, gasLimit: HEAVY_GAS })
  // right after a head: the next slot is about a block time away
  const before = await head()
  const seenAt = await nextHeadAfter(before)
  const n = await head()
  const hash = await rpcResult(node.url, 'eth_sendRawTransaction', [raw])
  const nextAt = await nextHeadAfter(n)
  const receipt = await waitForReceipt(node.url, hash)
  assert.equal(BigInt(receipt.blockNumber), n + 1n, 'mined in the slot it was sent in')
  assert.equal(BigInt(receipt.gasUsed), HEAVY_GAS, 'the loop ran until its gas ran out')
  // built at the slot, the block would come a block time plus the loop's ~0.5 s after the one before
  const gap = nextAt - seenAt
  assert.ok(gap < 1_300, `block ${n + 1n} came ${Math.round(gap)} ms after block ${n}`)
})

test('under a stream of submissions blocks keep to their slots: one a block time, timestamps one second apart', async () => {
  const senders = DEV_KEYS.slice(2, 6).map((key) => new Wallet(key))
  const nonces = await Promise.all(senders.map(nonceOf))
  const first = await head()
  const seen = new Map()
  const until = performance.now() + 4_500
  const watch = (async () => {
    while (performance.now() < until + 1_500) {
      const n = await head()
      if (!seen.has(n)) seen.set(n, performance.now())
      await sleep(5)
    }
  })()
  const hashes = []
  // each sender one transfer every ~20 ms: transactions arrive all through every slot
  await Promise.all(
    senders.map(async (wallet, i) => {
      while (performance.now() < until) {
        const raw = await wallet.signTransaction({ ...fees, nonce: nonces[i]++, to: DEV_ADDRESSES[9], value: 1n, gasLimit: 21_000n })
        hashes.push(await rpcResult(node.url, 'eth_sendRawTransaction', [raw]))
        await sleep(20)
      }
    }),
  )
  await watch
  for (const hash of hashes) assert.equal((await waitForReceipt(node.url, hash)).status, '0x1')
  const numbers = [...seen.keys()].filter((n) => n > first).sort((a, b) => (a < b ? -1 : 1))
  assert.ok(numbers.length >= 4, `${numbers.length} blocks in 6 s`)
  let withTxs = 0
  for (let i = 1; i < numbers.length; i++) {
    const [a, b] = [numbers[i - 1], numbers[i]]
    if (b !== a + 1n) continue
    const gap = seen.get(b) - seen.get(a)
    assert.ok(gap > 700, `block ${b} came ${Math.round(gap)} ms after block ${a}`)
    const [ha, hb] = await Promise.all([a, b].map((n) => rpcResult(node.url, 'eth_getBlockByNumber', [`0x${n.toString(16)}`, false])))
    assert.equal(BigInt(hb.timestamp) - BigInt(ha.timestamp), 1n, `timestamps of blocks ${a} and ${b}`)
    if (hb.transactions.length > 0) withTxs++
  }
  assert.ok(withTxs >= 3, `${withTxs} blocks with transfers`)
})
