// 'latest' stays warm through the real pool: after a block that changes a contract's storage, calls at
// the new head are answered from what the worker read at the parent plus the block's state diff, without
// a single trie node read from LevelDB (keel_call_trie_node_reads_total stays flat).

import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { ContractFactory, Interface, JsonRpcProvider, Wallet } from 'ethers'
import { compile } from '../helpers/contracts.js'
import { CHAIN_ID, DEV_KEYS, startNode } from '../helpers/node.js'
import { scrape, value } from '../helpers/prom.js'
import { rpcResult } from '../helpers/rpc.js'

const { Token } = compile()
const iface = new Interface(Token.abi)
const holders = Array.from({ length: 8 }, (_, i) => `0x${(0x3a000 + i).toString(16).padStart(40, '0')}`)
let node
let provider
let token

before(async () => {
  // one worker, so that the calls before the block warmed the same worker that answers after it
  node = await startNode({ blockTime: 0, args: ['--call-workers', '1'] })
  provider = new JsonRpcProvider(node.url, CHAIN_ID, { staticNetwork: true, pollingInterval: 50, cacheTimeout: -1 })
  const deployer = new Wallet(DEV_KEYS[0], provider)
  token = await (await new ContractFactory(Token.abi, Token.bytecode, deployer).deploy()).waitForDeployment()
  for (let i = 0; i < holders.length; i++) await (await token.transfer(holders[i], 100n + BigInt(i))).wait()
})

after(async () => {
  provider?.destroy()
  await node?.stop()
})

const trieNodeReads = async () => value(await scrape(node.metricsUrl), 'keel_call_trie_node_reads_total')

async function balances() {
  const to = await token.getAddress()
  const out = []
  for (const holder of holders) {
    out.push(BigInt(await rpcResult(node.url, 'eth_call', [{ to, data: iface.encodeFunctionData('balanceOf', [holder]) }, 'latest'])))
  }
  return out
}

test('calls at a new head read no trie node after a block that changed the contract\'s storage', async () => {
  const readsAtStart = await trieNodeReads()
  const before = await balances()
  assert.deepEqual(before, holders.map((_, i) => 100n + BigInt(i)))
  assert.ok((await trieNodeReads()) > readsAtStart, 'the first calls at a root do read the trie (the counter counts)')

  await (await token.transfer(holders[3], 5n)).wait()
  // the diff travels to the worker on its own channel right after the block: give an idle worker a moment
  await new Promise((resolve) => setTimeout(resolve, 300))

  const readsBefore = await trieNodeReads()
  const afterBlock = await balances()
  assert.equal(afterBlock[3], before[3] + 5n, 'the new head answers with the block applied')
  assert.deepEqual(afterBlock.filter((_, i) => i !== 3), before.filter((_, i) => i !== 3))
  assert.equal((await trieNodeReads()) - readsBefore, 0, 'calls at the new head walked the trie: the block\'s state diff did not reach the worker')
})

test('calls at the head see what the last blocks changed: balances after plain transfers, storage after token transfers', async () => {
  const to = await token.getAddress()
  const sender = new Wallet(DEV_KEYS[1], provider)
  const recipient = Wallet.createRandom().address
  // BALANCE(CALLDATALOAD(0)) returned as a word, run from a state override
  const probe = '0x000000000000000000000000000000000000ba1a'
  const balanceOfCode = '0x6000353160005260206000f3'
  const callBalance = async (who) =>
    BigInt(await rpcResult(node.url, 'eth_call', [{ to: probe, data: `0x${who.slice(2).padStart(64, '0')}` }, 'latest', { [probe]: { code: balanceOfCode } }]))
  for (let round = 1; round <= 3; round++) {
    await (await sender.sendTransaction({ to: recipient, value: 1000n * BigInt(round) })).wait()
    await (await token.transfer(holders[round], 1n)).wait()
    await new Promise((resolve) => setTimeout(resolve, 100))
    for (const who of [recipient, sender.address]) {
      assert.equal(await callBalance(who), BigInt(await rpcResult(node.url, 'eth_getBalance', [who, 'latest'])), `round ${round}: balance of ${who}`)
    }
    const held = BigInt(await rpcResult(node.url, 'eth_call', [{ to, data: iface.encodeFunctionData('balanceOf', [holders[round]]) }, 'latest']))
    // 100 + i at the start, 5 more for holder 3 in the test before, 1 more now
    assert.equal(held, 100n + BigInt(round) + (round === 3 ? 5n : 0n) + 1n, `round ${round}: token balance`)
  }
  assert.equal(await callBalance(recipient), 6000n)
})
