// A full disk under load: the data folder on a small tmpfs is filled by transactions carrying 100 kB of
// random calldata. The node must stay up, stop sealing, refuse submissions with a server error (never
// acknowledging one it did not journal), keep serving reads, filters and subscriptions, fail /ready
// with the reason, say so once in its log and in a metric, and resume by itself once the tmpfs grows.
// After a restart every block and every acknowledged transaction is as the clients were told.
// Needs root (mount -t tmpfs); skipped with the reason where mounting is not permitted.

import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { createCustomCommon, Mainnet } from '@ethereumjs/common'
import { createFeeMarket1559Tx } from '@ethereumjs/tx'
import { bytesToHex, hexToBytes } from '@ethereumjs/util'
import { Wallet } from 'ethers'
import { CHAIN_ID, DEV_KEYS, startNode } from '../helpers/node.js'
import { scrape, value } from '../helpers/prom.js'
import { rpc, rpcBatch, rpcResult, sleep } from '../helpers/rpc.js'
import { RawWsClient } from '../helpers/ws.js'

const GWEI = 1_000_000_000n
const MiB = 1024 * 1024
const SENDERS = 4
const CALLDATA_BYTES = 100_000
// EIP-7623's floor: 10 gas per token, 4 tokens per non-zero byte
const GAS_LIMIT = 21_000n + 40n * BigInt(CALLDATA_BYTES) + 100_000n
const FILL_LIMIT_MS = 60_000
const RESUME_LIMIT_MS = 45_000

const hex = (n) => `0x${BigInt(n).toString(16)}`

/** Mounts a tmpfs of `mib` MiB under a new temp folder, or says why it cannot. */
function mountTmpfs(mib) {
  const base = mkdtempSync(join(tmpdir(), 'keel-full-disk-'))
  const mnt = join(base, 'mnt')
  mkdirSync(mnt)
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${mib}m`, 'tmpfs', mnt], { stdio: 'pipe' })
  } catch (err) {
    rmSync(base, { recursive: true, force: true })
    return { skip: `cannot mount a tmpfs here (needs root): ${String(err.stderr || err.message).trim()}` }
  }
  let mounted = true
  return {
    mnt,
    grow: (size) => execFileSync('mount', ['-o', `remount,size=${size}m`, mnt], { stdio: 'pipe' }),
    cleanup() {
      if (mounted) execFileSync('umount', ['-l', mnt], { stdio: 'pipe' })
      mounted = false
      rmSync(base, { recursive: true, force: true })
    },
  }
}

const cleanups = []
after(async () => {
  for (const fn of cleanups.reverse()) await fn()
})

async function ready(url) {
  const res = await fetch(`${url}/ready`)
  return { status: res.status, body: await res.json() }
}

const common = createCustomCommon({ chainId: CHAIN_ID }, Mainnet)

/**
 * Signs transfers of 1 wei carrying random calldata, nonce by nonce. With @ethereumjs/tx (~20 ms a
 * transaction here): ethers serializes 100 kB of calldata through hex strings, ~145 ms a transaction,
 * which made the client, not the node, set how fast the disk filled.
 */
function senderOf(key, chainNonce) {
  const wallet = new Wallet(key)
  const privateKey = hexToBytes(key)
  let nonce = chainNonce
  return {
    address: wallet.address,
    get nonce() {
      return nonce
    },
    async next() {
      const tx = createFeeMarket1559Tx(
        {
          chainId: BigInt(CHAIN_ID),
          nonce,
          to: wallet.address.toLowerCase().replace(/..$/, '00'),
          value: 1n,
          gasLimit: GAS_LIMIT,
          maxFeePerGas: 50n * GWEI,
          maxPriorityFeePerGas: GWEI,
          data: randomBytes(CALLDATA_BYTES),
        },
        { common },
      )
      return bytesToHex(tx.sign(privateKey).serialize())
    },
    advance() {
      nonce++
    },
  }
}

/** The receipts of `hashes`, polled until every one is mined or `ms` have passed (then with nulls left). */
async function receiptsWithin(url, hashes, ms) {
  const deadline = Date.now() + ms
  for (;;) {
    const receipts = await rpcBatch(url, hashes.map((h) => ['eth_getTransactionReceipt', [h]]))
    if (receipts.every((r) => r !== null) || Date.now() > deadline) return receipts
    await sleep(500)
  }
}

test('a full disk stops sealing and submissions, keeps reads, and resumes when space returns', { timeout: 240_000 }, async (t) => {
  const fs = mountTmpfs(160)
  if (fs.skip !== undefined) return t.skip(fs.skip)
  cleanups.push(() => fs.cleanup())
  const dataDir = join(fs.mnt, 'data')
  let node = await startNode({ dataDir, blockTime: 0.25, args: ['--min-free-disk', '96', '--rate-limit', '0'] })
  cleanups.push(() => node.stop())

  // a subscriber and a polling filter from before the disk fills
  const ws = await RawWsClient.connect(node.wsUrl)
  cleanups.push(() => ws.close())
  const sub = (await ws.request('eth_subscribe', ['newHeads'])).result
  assert.match(sub, /^0x/)
  const filter = await rpcResult(node.url, 'eth_newBlockFilter')

  // Fill: each sender submits until the node refuses it a few times.
  const senders = DEV_KEYS.slice(0, SENDERS).map((key) => senderOf(key, 0n))
  const acknowledged = [] // hashes eth_sendRawTransaction returned
  const refusals = []
  const fillStartedAt = Date.now()
  const fillUntil = fillStartedAt + FILL_LIMIT_MS
  await Promise.all(
    senders.map(async (sender) => {
      let refused = 0
      while (refused < 3 && Date.now() < fillUntil) {
        const raw = await sender.next()
        const answer = await rpc(node.url, 'eth_sendRawTransaction', [raw])
        if (answer.error === undefined) {
          acknowledged.push(answer.result)
          sender.advance()
        } else {
          refused++
          refusals.push(answer.error)
          await sleep(100)
        }
      }
    }),
  )
  t.diagnostic(`${acknowledged.length} transactions acknowledged before the disk filled, in ${Date.now() - fillStartedAt} ms; ${refusals.length} refused`)
  assert.ok(refusals.length >= SENDERS * 3, `the disk did not fill within ${FILL_LIMIT_MS} ms (${acknowledged.length} acknowledged)`)
  assert.ok(acknowledged.length > 50, `only ${acknowledged.length} transactions acknowledged before the disk filled`)
  for (const error of refusals) {
    assert.equal(error.code, -32603, `refusal code: ${JSON.stringify(error)}`)
    assert.match(error.message, /^transaction not accepted: the node cannot write its database \((disk full|a database write failed)/)
  }

  // Stopped: the process is up, the head does not move, /ready says why, the metric says so.
  assert.equal(node.proc.exitCode, null, 'the node exited on a full disk')
  const stoppedAt = BigInt(await rpcResult(node.url, 'eth_blockNumber'))
  await sleep(1_500)
  assert.equal(BigInt(await rpcResult(node.url, 'eth_blockNumber')), stoppedAt, 'a block was sealed while the disk is full')
  const notReady = await ready(node.url)
  assert.equal(notReady.status, 503)
  assert.match(notReady.body.reason, /^database cannot be written: disk full: [\d.]+ MiB free on .*--min-free-disk keeps 96 MiB$/)
  const metrics = await scrape(node.metricsUrl)
  assert.equal(value(metrics, 'keel_storage_writable'), 0)
  assert.equal(value(metrics, 'keel_storage_write_stops_total'), 1)

  // Reads, filters and subscriptions keep working.
  const head = await rpcResult(node.url, 'eth_getBlockByNumber', [hex(stoppedAt), false])
  assert.equal(BigInt(head.number), stoppedAt)
  const someTx = await rpcResult(node.url, 'eth_getTransactionByHash', [acknowledged[0]])
  assert.equal(someTx.hash, acknowledged[0])
  const balance = await rpcResult(node.url, 'eth_getBalance', [senders[0].address, 'latest'])
  assert.ok(BigInt(balance) > 0n)
  assert.ok(Array.isArray(await rpcResult(node.url, 'eth_getFilterChanges', [filter])))
  assert.equal((await ws.request('eth_blockNumber')).result, hex(stoppedAt))
  assert.ok(ws.notifications(sub).length > 0, 'the subscriber saw no head before the disk filled')
  // a pool query still answers: what is pooled (acknowledged, unsealed) stays there
  const status = await rpcResult(node.url, 'txpool_status')
  assert.match(status.pending, /^0x/)

  // Once in the log, however many retries ran (the backoff retried at 1 s and 3 s by now).
  await sleep(2_000)
  const said = (node.stdout() + node.stderr()).match(/database cannot be written/g) ?? []
  assert.equal(said.length, 1, `the log said it ${said.length} times`)

  // Space returns: sealing resumes by itself, the pooled transactions are mined, new ones accepted.
  fs.grow(480)
  const resumeBy = Date.now() + RESUME_LIMIT_MS
  while ((await ready(node.url)).status !== 200 && Date.now() < resumeBy) await sleep(250)
  assert.equal((await ready(node.url)).status, 200, `not ready ${RESUME_LIMIT_MS} ms after the disk grew: ${JSON.stringify((await ready(node.url)).body)}`)
  assert.match(node.stdout() + node.stderr(), /database writable again/)
  assert.equal(value(await scrape(node.metricsUrl), 'keel_storage_writable'), 1)
  for (const sender of senders) {
    const answer = await rpc(node.url, 'eth_sendRawTransaction', [await sender.next()])
    assert.equal(answer.error, undefined, `refused after the disk grew: ${JSON.stringify(answer.error)}`)
    acknowledged.push(answer.result)
    sender.advance()
  }

  // Every acknowledged transaction is mined (bounded wait), each sender's nonce is what it sent.
  const receipts = await receiptsWithin(node.url, acknowledged, 60_000)
  const missing = acknowledged.filter((_, i) => receipts[i] === null)
  assert.deepEqual(missing, [], `${missing.length} acknowledged transactions were never mined`)
  for (const r of receipts) assert.equal(r.status, '0x1')

  // What the clients were told, then a restart on the same folder.
  const told = await chainAsTold(node.url, senders)
  node = await node.restart()
  const later = await chainAsTold(node.url, senders, told.head)
  assert.deepEqual(later.hashes, told.hashes, 'a block differs after the restart')
  assert.deepEqual(later.accounts, told.accounts, 'an account differs after the restart')
  const again = await rpcBatch(node.url, acknowledged.map((h) => ['eth_getTransactionReceipt', [h]]))
  again.forEach((r, i) => {
    assert.ok(r !== null, `acknowledged ${acknowledged[i]} is gone after the restart`)
    assert.equal(r.blockHash, receipts[i].blockHash)
    assert.equal(r.transactionIndex, receipts[i].transactionIndex)
  })
  t.diagnostic(`head ${told.head} before and after the restart; ${acknowledged.length} acknowledged transactions mined`)
})

/** Every block's hash up to the head (or `upTo`), each sender's nonce and balance there. */
async function chainAsTold(url, senders, upTo) {
  const head = upTo ?? BigInt(await rpcResult(url, 'eth_blockNumber'))
  const numbers = Array.from({ length: Number(head) + 1 }, (_, n) => n)
  const hashes = []
  for (let i = 0; i < numbers.length; i += 200) {
    const blocks = await rpcBatch(url, numbers.slice(i, i + 200).map((n) => ['eth_getBlockByNumber', [hex(n), false]]))
    for (const b of blocks) hashes.push(b.hash)
  }
  const accounts = await rpcBatch(url, senders.flatMap((s) => [['eth_getTransactionCount', [s.address, hex(head)]], ['eth_getBalance', [s.address, hex(head)]]]))
  return { head, hashes, accounts }
}

test('a write LevelDB itself fails (no free-space margin) degrades the node; a restart after space returns loses nothing acknowledged', { timeout: 240_000 }, async (t) => {
  const fs = mountTmpfs(64)
  if (fs.skip !== undefined) return t.skip(fs.skip)
  cleanups.push(() => fs.cleanup())
  const dataDir = join(fs.mnt, 'data')
  let node = await startNode({ dataDir, blockTime: 0.25, args: ['--min-free-disk', '0', '--rate-limit', '0'] })
  cleanups.push(() => node.stop())

  const senders = DEV_KEYS.slice(0, SENDERS).map((key) => senderOf(key, 0n))
  const acknowledged = []
  const refusals = []
  const fillStartedAt = Date.now()
  const fillUntil = fillStartedAt + FILL_LIMIT_MS
  await Promise.all(
    senders.map(async (sender) => {
      let refused = 0
      while (refused < 3 && Date.now() < fillUntil) {
        const answer = await rpc(node.url, 'eth_sendRawTransaction', [await sender.next()])
        if (answer.error === undefined) {
          acknowledged.push(answer.result)
          sender.advance()
        } else {
          refused++
          refusals.push(answer.error)
          await sleep(100)
        }
      }
    }),
  )
  t.diagnostic(`${acknowledged.length} acknowledged in ${Date.now() - fillStartedAt} ms, ${refusals.length} refused; first refusal: ${refusals[0]?.message}`)
  assert.ok(refusals.length >= SENDERS * 3, `the disk did not fill within ${FILL_LIMIT_MS} ms`)
  for (const error of refusals) {
    assert.equal(error.code, -32603)
    assert.match(error.message, /^transaction not accepted: the node cannot write its database \(a database write failed: .*No space left on device/)
  }
  assert.equal(node.proc.exitCode, null, 'the node exited on a failed write')
  const notReady = await ready(node.url)
  assert.equal(notReady.status, 503)
  assert.match(notReady.body.reason, /^database cannot be written: a database write failed: .*No space left on device/)
  const head = BigInt(await rpcResult(node.url, 'eth_blockNumber'))
  assert.equal((await rpcResult(node.url, 'eth_getBlockByNumber', [hex(head), false])).number, hex(head))
  // what the clients saw mined before the restart
  const seen = await rpcBatch(node.url, acknowledged.map((h) => ['eth_getTransactionReceipt', [h]]))
  const told = await chainAsTold(node.url, senders)

  // Space returns. A failed write LevelDB did not keep (a log write) lets the retry resume; after a failed
  // background write (a compaction) LevelDB refuses every write until the database is opened again, and
  // /ready says a restart is needed. Either way, a restart then loses nothing acknowledged.
  fs.grow(480)
  const decidedBy = Date.now() + 40_000
  let state = await ready(node.url)
  while (state.status !== 200 && !/until the node restarts/.test(state.body.reason) && Date.now() < decidedBy) {
    await sleep(500)
    state = await ready(node.url)
  }
  assert.ok(state.status === 200 || /free space is back but LevelDB keeps refusing writes until the node restarts$/.test(state.body.reason), `after the disk grew: ${JSON.stringify(state)}`)
  t.diagnostic(`after the disk grew: ${state.status === 200 ? 'resumed by itself' : state.body.reason}`)
  node = await node.restart()
  const later = await chainAsTold(node.url, senders, told.head)
  assert.deepEqual(later.hashes, told.hashes, 'a block the clients saw differs after the restart')
  const receipts = await receiptsWithin(node.url, acknowledged, 60_000)
  const missing = acknowledged.filter((_, i) => receipts[i] === null)
  assert.deepEqual(missing, [], `${missing.length} acknowledged transactions were lost`)
  seen.forEach((r, i) => {
    if (r !== null) assert.equal(receipts[i].blockHash, r.blockHash, `the receipt of ${acknowledged[i]} moved`)
  })
  const finalHead = BigInt(await rpcResult(node.url, 'eth_blockNumber'))
  const nonces = await rpcBatch(node.url, senders.map((s) => ['eth_getTransactionCount', [s.address, hex(finalHead)]]))
  senders.forEach((s, i) => assert.equal(BigInt(nonces[i]), s.nonce, `nonce of ${s.address}`))
  assert.equal((await ready(node.url)).status, 200)
})
