// 'latest' stays warm: a reader given each block's state diff answers at the new head from what it
// read at the parent (no trie node read), and agrees with a reader that walks the trie.

import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { Address, hexToBytes } from '@ethereumjs/util'
import { Interface } from 'ethers'
import { ExecEngine } from '../../dist/exec/engine.js'
import { StateReader } from '../../dist/exec/state-reader.js'
import { compile } from '../helpers/contracts.js'
import { benchKeys, deploy, openTempChain } from '../../bench/lib/temp-chain.js'

const LIMITS = { gasCap: 50_000_000n, timeoutMs: 5000 }
const HOLDERS = 40
const holder = (i) => `0x${(0xd1ff00 + i).toString(16).padStart(40, '0')}`

let chain, token, abi, senders

before(async () => {
  senders = benchKeys(4, 99)
  chain = await openTempChain({ funded: senders })
  const { Token } = compile()
  abi = new Interface(Token.abi)
  token = await deploy(chain, Token.bytecode)
  for (let i = 0; i < HOLDERS; i++) {
    await chain.submit(chain.sign(chain.dev[0].key, { to: hexToBytes(token), data: hexToBytes(abi.encodeFunctionData('transfer', [holder(i), BigInt(1000 + i)])) }))
  }
  await chain.sealBlock()
})

after(async () => {
  await chain?.close()
})

const balanceCall = (block, who) => ({ kind: 'call', block, args: { to: token, data: hexToBytes(abi.encodeFunctionData('balanceOf', [who])) } })

async function balancesAt(engine, block, who) {
  const out = []
  for (const w of who) {
    const r = await engine.run(balanceCall(block, w))
    assert.equal(r.ok, true, JSON.stringify(r.error))
    out.push(BigInt(r.returnData))
  }
  return out
}

test('calls at a new head read no trie node when the diff of the block arrived, and agree with a cold engine', async () => {
  const warm = new ExecEngine(chain.common, chain.level, LIMITS)
  const everyone = [...Array.from({ length: HOLDERS }, (_, i) => holder(i)), chain.dev[0].address, holder(999)]
  await balancesAt(warm, chain.headExecBlock(), everyone)

  // a block that changes some slots, zeroes one (deleted from the trie) and creates one
  const moves = [
    [chain.dev[0].key, holder(3), 5n],
    [chain.dev[0].key, holder(999), 7n],
  ]
  for (const [key, to, amount] of moves) {
    await chain.submit(chain.sign(key, { to: hexToBytes(token), data: hexToBytes(abi.encodeFunctionData('transfer', [to, amount])) }))
  }
  const event = await chain.sealBlock()
  assert.ok(event.stateDiff !== undefined)
  assert.ok(event.stateDiff.storage.some((s) => s.address === token.slice(2).toLowerCase()))
  warm.applyStateDiff(event.stateDiff)

  const head = chain.headExecBlock()
  const readsBefore = warm.trieNodeReads
  const got = await balancesAt(warm, head, everyone)
  assert.equal(warm.trieNodeReads - readsBefore, 0, 'trie nodes were read at the new head despite the diff')

  const cold = new ExecEngine(chain.common, chain.level, LIMITS)
  assert.deepEqual(got, await balancesAt(cold, head, everyone))
  assert.ok(cold.trieNodeReads > 0)
  assert.equal(got[3], 1003n + 5n)
  assert.equal(got[everyone.length - 1], 7n)
})

test('accounts at a new head come from the diff: balances, nonces, created and untouched accounts', async () => {
  const reader = new StateReader(chain.common, chain.level)
  const fresh = `0x${'be'.repeat(20)}`
  const watched = [chain.dev[0].address, chain.dev[1].address, fresh, token]
  const at = async (r, root) => {
    const sm = await r.at(root)
    return Promise.all(watched.map(async (a) => {
      const acc = await sm.getAccount(new Address(hexToBytes(a)))
      return acc === undefined ? null : [acc.nonce, acc.balance]
    }))
  }
  await at(reader, chain.head.stateRoot)
  await chain.submit(chain.sign(senders[0], { to: hexToBytes(fresh), value: 12345n, gasLimit: 21_000n }))
  await chain.submit(chain.sign(chain.dev[1].key, { to: hexToBytes(chain.dev[0].address), value: 1n, gasLimit: 21_000n }))
  const event = await chain.sealBlock()
  reader.applyDiff(event.stateDiff)
  const before = reader.trieDb.fetches
  const warm = await at(reader, chain.head.stateRoot)
  assert.equal(reader.trieDb.fetches - before, 0)
  const cold = await at(new StateReader(chain.common, chain.level), chain.head.stateRoot)
  assert.deepEqual(warm, cold)
  assert.deepEqual(warm[2], [0n, 12345n])
})
