// What survives a restart: a graceful one (SIGTERM), crashes (rounds of SIGKILL at random moments under
// load from 24 senders), and not-yet-mined transactions across a graceful restart (the pool is persisted).

import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { Transaction, Wallet } from 'ethers'
import { CHAIN_ID, DEV_ADDRESSES, DEV_KEYS, startNode } from '../helpers/node.js'
import { rpc, rpcBatch, rpcResult, sleep, waitForReceipt } from '../helpers/rpc.js'

const GWEI = 1_000_000_000n

/** Every handle a test is still responsible for; after() stops whatever is left. */
const running = new Set()
after(async () => {
  for (const node of running) await node.stop()
})

async function start(options) {
  const node = await startNode(options)
  running.add(node)
  return node
}

async function restart(node, overrides) {
  running.delete(node)
  const next = await node.restart(overrides)
  running.add(next)
  return next
}

const hex = (n) => `0x${BigInt(n).toString(16)}`

async function feesOf(url) {
  const block = await rpcResult(url, 'eth_getBlockByNumber', ['latest', false])
  return { maxFeePerGas: BigInt(block.baseFeePerGas) * 2n + GWEI, maxPriorityFeePerGas: GWEI }
}

function signTransfer(wallet, nonce, to, value, fees) {
  return wallet.signTransaction({ type: 2, chainId: CHAIN_ID, nonce, to, value, gasLimit: 21000n, ...fees })
}

/** Blocks 0..head as returned by eth_getBlockByNumber (full transactions when `full`). */
async function blocksUpTo(url, head, full = false) {
  const calls = []
  for (let n = 0n; n <= BigInt(head); n++) calls.push(['eth_getBlockByNumber', [hex(n), full]])
  const blocks = []
  for (let i = 0; i < calls.length; i += 100) blocks.push(...(await rpcBatch(url, calls.slice(i, i + 100))))
  return blocks
}

async function receiptsOf(url, hashes) {
  const receipts = []
  for (let i = 0; i < hashes.length; i += 100) {
    receipts.push(...(await rpcBatch(url, hashes.slice(i, i + 100).map((hash) => ['eth_getTransactionReceipt', [hash]]))))
  }
  return receipts
}

test('a graceful restart keeps blocks, receipts and balances', async () => {
  let node = await start({ blockTime: 1 })
  const senders = DEV_KEYS.slice(0, 4).map((key) => new Wallet(key))
  const recipient = Wallet.createRandom().address
  const fees = await feesOf(node.url)
  const raws = []
  for (let nonce = 0; nonce < 5; nonce++) {
    for (const sender of senders) raws.push(await signTransfer(sender, nonce, recipient, 1000n + BigInt(nonce), fees))
  }
  const hashes = await Promise.all(raws.map((raw) => rpcResult(node.url, 'eth_sendRawTransaction', [raw])))
  const receipts = await Promise.all(hashes.map((hash) => waitForReceipt(node.url, hash)))
  for (const receipt of receipts) assert.equal(receipt.status, '0x1')

  const head = BigInt(await rpcResult(node.url, 'eth_blockNumber'))
  const blocks = await blocksUpTo(node.url, head)
  const watched = [recipient, ...senders.map((sender) => sender.address)]
  const balances = await rpcBatch(node.url, watched.map((address) => ['eth_getBalance', [address, hex(head)]]))
  assert.equal(BigInt(balances[0]), 4n * (1000n + 1001n + 1002n + 1003n + 1004n))

  node = await restart(node)
  assert.deepEqual(node.previousExit, { code: 0, signal: null }, 'SIGTERM must end the process with exit code 0')

  assert.ok(BigInt(await rpcResult(node.url, 'eth_blockNumber')) >= head)
  assert.deepEqual(
    (await blocksUpTo(node.url, head)).map((block) => block.hash),
    blocks.map((block) => block.hash),
  )
  const after = await receiptsOf(node.url, hashes)
  after.forEach((receipt, i) => {
    assert.ok(receipt, `receipt of ${hashes[i]} lost`)
    assert.equal(receipt.blockHash, receipts[i].blockHash)
    assert.equal(receipt.status, '0x1')
    assert.equal(receipt.gasUsed, receipts[i].gasUsed)
  })
  assert.deepEqual(await rpcBatch(node.url, watched.map((address) => ['eth_getBalance', [address, hex(head)]])), balances)
  assert.deepEqual(await rpcBatch(node.url, watched.map((address) => ['eth_getBalance', [address, 'latest']])), balances)
  assert.equal(await rpcResult(node.url, 'eth_getTransactionCount', [senders[0].address, 'latest']), '0x5')
})

// Chaos: ROUNDS rounds of kill -9 at a random moment while 24 senders submit transfers. After each
// restart every block and receipt a client saw and every acknowledged transaction is still there (mined
// in the same block, or pooled); at the end every acknowledged transfer is mined and each sender's nonce
// and each recipient's balance equal exactly the transfers mined.
const CHAOS_ROUNDS = 5
const CHAOS_SENDERS = 24

test(`chaos: ${CHAOS_ROUNDS} rounds of kill -9 at random moments while ${CHAOS_SENDERS} senders submit transfers`, { timeout: 150_000 }, async (t) => {
  const seed = Number(process.env.KEEL_CHAOS_SEED ?? Date.now() % 1_000_000)
  let state = seed
  const random = () => ((state = (state * 1103515245 + 12345) % 2147483648) / 2147483648)
  t.diagnostic(`seed ${seed} (KEEL_CHAOS_SEED=${seed} repeats the kill moments)`)

  let node = await start({ blockTime: 1 })
  // 24 fresh senders, funded from the dev accounts; each sends 1 wei per transfer to its own recipient
  const senders = Array.from({ length: CHAOS_SENDERS }, () => Wallet.createRandom())
  const recipients = senders.map(() => Wallet.createRandom().address)
  const funders = DEV_KEYS.slice(0, 4).map((key) => new Wallet(key))
  const funding = await Promise.all(
    senders.map(async (sender, i) => {
      const funder = funders[i % funders.length]
      const nonce = Number(BigInt(await rpcResult(node.url, 'eth_getTransactionCount', [funder.address, 'pending'])) + BigInt(Math.floor(i / funders.length)))
      return signTransfer(funder, nonce, sender.address, 10n ** 18n, { maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: GWEI })
    }),
  )
  for (const raw of funding) await rpcResult(node.url, 'eth_sendRawTransaction', [raw])
  for (const raw of funding) await waitForReceipt(node.url, Transaction.from(raw).hash, 30_000)

  const fees = { maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: GWEI }
  const acknowledged = new Map() // hash -> { sender, nonce }
  const nextNonce = senders.map(() => 0)
  const seenBlocks = new Map() // number -> hash
  const seenReceipts = new Map() // tx hash -> receipt
  let kills = 0

  for (let round = 0; round < CHAOS_ROUNDS; round++) {
    const url = node.url
    let stopped = false
    const inFlight = senders.map(() => undefined)
    const streams = senders.map(async (sender, s) => {
      for (let i = 0; !stopped && i < 5_000; i++) {
        const raw = await signTransfer(sender, nextNonce[s], recipients[s], 1n, fees)
        inFlight[s] = Transaction.from(raw).hash
        let answer
        try {
          answer = await rpc(url, 'eth_sendRawTransaction', [raw])
        } catch {
          return // the node is gone: this one may or may not have been journalled
        }
        assert.equal(answer.error, undefined, `sender ${s} nonce ${nextNonce[s]} refused: ${JSON.stringify(answer.error)}`)
        acknowledged.set(answer.result, { s, nonce: nextNonce[s] })
        inFlight[s] = undefined
        nextNonce[s]++
        await sleep(10)
      }
    })
    const watcher = (async () => {
      let next = BigInt(seenBlocks.size)
      while (!stopped) {
        try {
          const head = BigInt(await rpcResult(url, 'eth_blockNumber'))
          for (; next <= head; next++) {
            const [block, receipts] = await rpcBatch(url, [['eth_getBlockByNumber', [hex(next), false]], ['eth_getBlockReceipts', [hex(next)]]])
            seenBlocks.set(Number(next), block.hash)
            for (const receipt of receipts) seenReceipts.set(receipt.transactionHash, receipt)
          }
        } catch {
          return
        }
        await sleep(100)
      }
    })()

    await sleep(1_000 + Math.floor(random() * 2_500))
    await node.kill9()
    kills++
    stopped = true
    await Promise.all([...streams, watcher])

    node = await restart(node)
    assert.equal(node.previousExit.signal, 'SIGKILL')
    // every block a client saw is there, unchanged
    const numbers = [...seenBlocks.keys()]
    for (let i = 0; i < numbers.length; i += 200) {
      const blocks = await rpcBatch(node.url, numbers.slice(i, i + 200).map((n) => ['eth_getBlockByNumber', [hex(n), false]]))
      blocks.forEach((b, j) => assert.equal(b?.hash, seenBlocks.get(numbers[i + j]), `round ${round}: block ${numbers[i + j]} changed or vanished`))
    }
    // every receipt a client saw is there, in the same block
    const seen = [...seenReceipts.values()]
    const again = await receiptsOf(node.url, seen.map((r) => r.transactionHash))
    again.forEach((r, i) => {
      assert.ok(r, `round ${round}: the receipt of ${seen[i].transactionHash} (block ${BigInt(seen[i].blockNumber)}) was lost`)
      assert.equal(r.blockHash, seen[i].blockHash)
    })
    // every acknowledged transaction is mined or pooled
    const hashes = [...acknowledged.keys()]
    for (let i = 0; i < hashes.length; i += 200) {
      const txs = await rpcBatch(node.url, hashes.slice(i, i + 200).map((h) => ['eth_getTransactionByHash', [h]]))
      txs.forEach((tx, j) => assert.equal(tx?.hash, hashes[i + j], `round ${round}: acknowledged ${hashes[i + j]} was lost`))
    }
    // each sender goes on from its pending nonce: what it had acknowledged, plus the one in flight if it was journalled
    const pending = await rpcBatch(node.url, senders.map((sender) => ['eth_getTransactionCount', [sender.address, 'pending']]))
    pending.forEach((p, s) => {
      const n = Number(BigInt(p))
      assert.ok(n === nextNonce[s] || (n === nextNonce[s] + 1 && inFlight[s] !== undefined), `round ${round}: sender ${s} pending nonce ${n}, acknowledged up to ${nextNonce[s] - 1}`)
      nextNonce[s] = n
    })
  }

  // Everything acknowledged gets mined; then the state is exactly the mined transfers.
  const minedBy = Date.now() + 40_000
  for (;;) {
    const status = await rpcResult(node.url, 'txpool_status')
    if (BigInt(status.pending) === 0n && BigInt(status.queued) === 0n) break
    assert.ok(Date.now() < minedBy, `the pool still holds ${JSON.stringify(status)}`)
    await sleep(500)
  }
  const head = BigInt(await rpcResult(node.url, 'eth_blockNumber'))
  const blocks = await blocksUpTo(node.url, head, true)
  const mined = senders.map(() => 0n)
  const minedHashes = new Set()
  const index = new Map(senders.map((sender, s) => [sender.address.toLowerCase(), s]))
  for (let n = 1; n < blocks.length; n++) {
    assert.equal(blocks[n].parentHash, blocks[n - 1].hash, `block ${n} does not link to block ${n - 1}`)
    for (const tx of blocks[n].transactions) {
      const s = index.get(tx.from.toLowerCase())
      if (s === undefined) continue
      assert.equal(BigInt(tx.nonce), mined[s], `sender ${s}: nonce ${BigInt(tx.nonce)} mined out of order`)
      assert.ok(!minedHashes.has(tx.hash), `${tx.hash} mined twice`)
      minedHashes.add(tx.hash)
      mined[s]++
    }
  }
  for (const hash of acknowledged.keys()) assert.ok(minedHashes.has(hash), `acknowledged ${hash} was never mined`)
  const nonces = await rpcBatch(node.url, senders.map((sender) => ['eth_getTransactionCount', [sender.address, hex(head)]]))
  const balances = await rpcBatch(node.url, recipients.map((address) => ['eth_getBalance', [address, hex(head)]]))
  senders.forEach((_, s) => {
    assert.equal(BigInt(nonces[s]), mined[s], `nonce of sender ${s} vs its mined transfers`)
    assert.equal(BigInt(balances[s]), mined[s], `balance of recipient ${s} vs the transfers mined to it`)
  })
  t.diagnostic(`${kills} kills; ${acknowledged.size} transfers acknowledged, ${minedHashes.size} mined (the rest of the mined ones were in flight at a kill and journalled); ${seenReceipts.size} receipts and ${seenBlocks.size} blocks seen by the watcher; head ${head}`)
})

test('a transaction still in the pool survives a graceful restart and is mined afterwards', async () => {
  let node = await start({ blockTime: 30 })
  const sender = new Wallet(DEV_KEYS[8])
  const raw = await signTransfer(sender, 0, DEV_ADDRESSES[9], 4242n, await feesOf(node.url))
  const hash = await rpcResult(node.url, 'eth_sendRawTransaction', [raw])
  assert.equal(await rpcResult(node.url, 'eth_getTransactionReceipt', [hash]), null)
  const pooled = await rpcResult(node.url, 'txpool_content')
  const entry = Object.entries(pooled.pending).find(([address]) => address.toLowerCase() === sender.address.toLowerCase())
  assert.ok(entry?.[1]['0']?.hash === hash, `the tx is not pending before the restart: ${JSON.stringify(pooled)}`)

  node = await restart(node, { blockTime: 1 })
  const receipt = await rpcResult(node.url, 'eth_getTransactionReceipt', [hash])
  if (receipt === null) {
    const tx = await rpc(node.url, 'eth_getTransactionByHash', [hash])
    const content = await rpcResult(node.url, 'txpool_content')
    const inPool = Object.values(content.pending).some((byNonce) => Object.values(byNonce).some((item) => item.hash === hash))
    assert.ok(tx.result?.hash === hash || inPool, 'the pooled tx was lost in the restart')
  }
  const mined = await waitForReceipt(node.url, hash, 20_000)
  assert.equal(mined.status, '0x1')
  assert.equal(BigInt(await rpcResult(node.url, 'eth_getBalance', [DEV_ADDRESSES[9], mined.blockNumber])), 10_000n * 10n ** 18n + 4242n)
})

test("a sender's 150 pooled transactions all survive a graceful restart, whatever order the journal keeps them in", async () => {
  // the pool refuses a transaction more than 64 nonces (--txpool-max-queued-per-account) past what it
  // holds of the sender: restored in the journal's (hash) order, most of these would be
  let node = await start({ blockTime: 30 })
  const sender = new Wallet(DEV_KEYS[7])
  const fees = await feesOf(node.url)
  const hashes = []
  for (let nonce = 0; nonce < 150; nonce++) {
    hashes.push(await rpcResult(node.url, 'eth_sendRawTransaction', [await signTransfer(sender, nonce, DEV_ADDRESSES[6], 1n, fees)]))
  }
  const pendingOf = async () => {
    const content = await rpcResult(node.url, 'txpool_content')
    const entry = Object.entries(content.pending).find(([address]) => address.toLowerCase() === sender.address.toLowerCase())
    return Object.values(entry?.[1] ?? {}).map((tx) => tx.hash)
  }
  assert.equal((await pendingOf()).length, 150, 'all pending before the restart')

  node = await restart(node, { blockTime: 30 })
  assert.deepEqual(new Set(await pendingOf()), new Set(hashes), 'all pending after the restart')
  node = await restart(node, { blockTime: 1 })
  for (const hash of hashes) assert.equal((await waitForReceipt(node.url, hash, 30_000)).status, '0x1')
  assert.equal(BigInt(await rpcResult(node.url, 'eth_getTransactionCount', [sender.address, 'latest'])), 150n)
})
