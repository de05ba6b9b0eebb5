// What survives a restart: a graceful one (SIGTERM), a crash (SIGKILL mid-stream), and a
// not-yet-mined transaction across a graceful restart (the pool is persisted on shutdown).

import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { Wallet } from 'ethers'
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

test('kill -9 in the middle of a transaction stream leaves a consistent chain that keeps going', async (t) => {
  let node = await start({ blockTime: 1 })
  const url = node.url
  const senders = DEV_KEYS.slice(4, 8).map((key) => new Wallet(key))
  const recipients = senders.map(() => Wallet.createRandom().address)
  const fees = await feesOf(url)
  const sent = []
  const seenReceipts = new Map()
  let killed = false

  const streams = senders.map(async (sender, s) => {
    for (let nonce = 0; !killed && nonce < 2000; nonce++) {
      const raw = await signTransfer(sender, nonce, recipients[s], 1n, fees)
      try {
        sent.push(await rpcResult(url, 'eth_sendRawTransaction', [raw]))
      } catch {
        return // the node is gone
      }
      await sleep(10)
    }
  })
  const watcher = (async () => {
    let next = 1n
    while (!killed) {
      try {
        const head = BigInt(await rpcResult(url, 'eth_blockNumber'))
        for (; next <= head; next++) {
          for (const receipt of await rpcResult(url, 'eth_getBlockReceipts', [hex(next)])) {
            seenReceipts.set(receipt.transactionHash, receipt)
          }
        }
      } catch {
        return
      }
      await sleep(100)
    }
  })()

  await sleep(3000)
  killed = true
  await node.kill9()
  await Promise.all([...streams, watcher])
  assert.ok(sent.length > 20, `only ${sent.length} transactions were accepted before the kill`)
  assert.ok(seenReceipts.size > 0, 'no receipt was seen before the kill')

  node = await restart(node)
  assert.equal(node.previousExit.signal, 'SIGKILL')

  const latest = await rpcResult(node.url, 'eth_getBlockByNumber', ['latest', false])
  const head = BigInt(latest.number)
  for (const receipt of await receiptsOf(node.url, latest.transactions)) {
    assert.ok(receipt, 'the head block holds a transaction without a receipt')
    assert.equal(receipt.blockHash, latest.hash)
  }

  // The chain links up, and the state at the head is exactly what its blocks did.
  const blocks = await blocksUpTo(node.url, head, true)
  t.diagnostic(`${sent.length} txs accepted and ${seenReceipts.size} receipts seen before the kill; head ${head} after restart`)
  const included = new Map(senders.map((sender) => [sender.address.toLowerCase(), 0n]))
  for (let n = 1; n < blocks.length; n++) {
    assert.equal(blocks[n].parentHash, blocks[n - 1].hash, `block ${n} does not link to block ${n - 1}`)
    for (const tx of blocks[n].transactions) {
      if (included.has(tx.from.toLowerCase())) included.set(tx.from.toLowerCase(), included.get(tx.from.toLowerCase()) + 1n)
    }
  }
  const nonces = await rpcBatch(node.url, senders.map((sender) => ['eth_getTransactionCount', [sender.address, hex(head)]]))
  const balances = await rpcBatch(node.url, recipients.map((address) => ['eth_getBalance', [address, hex(head)]]))
  senders.forEach((sender, s) => {
    const count = included.get(sender.address.toLowerCase())
    assert.equal(BigInt(nonces[s]), count, `nonce of ${sender.address} at the head vs its included txs`)
    assert.equal(BigInt(balances[s]), count, `balance of recipient ${s} at the head vs the transfers included`)
  })

  // Nothing whose receipt was served before the crash is gone or moved.
  const seen = [...seenReceipts.values()]
  const again = await receiptsOf(node.url, seen.map((receipt) => receipt.transactionHash))
  again.forEach((receipt, i) => {
    assert.ok(receipt, `receipt of ${seen[i].transactionHash} (block ${BigInt(seen[i].blockNumber)}) lost in the crash`)
    assert.equal(receipt.blockHash, seen[i].blockHash)
    assert.equal(receipt.blockNumber, seen[i].blockNumber)
  })

  // And the node still takes and mines transactions.
  const after = await Promise.all(
    senders.map(async (sender) => {
      const nonce = Number(BigInt(await rpcResult(node.url, 'eth_getTransactionCount', [sender.address, 'pending'])))
      const raw = await signTransfer(sender, nonce, DEV_ADDRESSES[9], 7n, await feesOf(node.url))
      return rpcResult(node.url, 'eth_sendRawTransaction', [raw])
    }),
  )
  for (const hash of after) assert.equal((await waitForReceipt(node.url, hash, 30_000)).status, '0x1')
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
