import { test, before } from 'node:test'
import assert from 'node:assert/strict'
import { createFeeMarket1559Tx, createTx } from '@ethereumjs/tx'
import { bytesToHex, hexToBytes, privateToAddress, toChecksumAddress } from '@ethereumjs/util'
import { loadFastCrypto } from '../../dist/evm/crypto.js'
import { createChainCommon } from '../../dist/evm/common.js'
import { latestForkConfig } from '../../dist/evm/geth-genesis.js'
import { decodeRawTransaction } from '../../dist/chain/tx-intake.js'
import { effectiveTip } from '../../dist/chain/pooled-tx.js'
import { pendingRpcTransaction } from '../../dist/chain/tx-object.js'
import { TxPool } from '../../dist/chain/txpool.js'

const GWEI = 1_000_000_000n
const ETHER = 10n ** 18n
const RICH = 1000n * ETHER
const keys = [1, 2, 3, 4, 5].map((i) => hexToBytes('0x' + i.toString(16).padStart(2, '0').repeat(32)))
const addrs = keys.map((k) => bytesToHex(privateToAddress(k)))
const [A, B, C, D, E] = [0, 1, 2, 3, 4]
const recipient = '0x' + 'ab'.repeat(20)

let common
let ctx

before(async () => {
  const fc = await loadFastCrypto()
  common = createChainCommon({ config: latestForkConfig(24589), gasLimit: '0x1c9c380', alloc: {} }, fc.customCrypto)
  ctx = { common, chainId: 24589n, blockGasLimit: 30_000_000n, txGasCap: 1n << 24n, maxTxSize: 131072, txFeeCapWei: 0n, allowUnprotectedTxs: false }
})

/** A signed, intake-validated 1559 tx (or legacy with gasPrice) from sender index `who`. */
function mk(who, nonce, { maxFee = 2n * GWEI, tip = GWEI, gas = 21000n, value = 1n, to = recipient, legacy = false } = {}) {
  const tx = legacy
    ? createTx({ nonce, gasPrice: maxFee, gasLimit: gas, to, value }, { common }).sign(keys[who])
    : createFeeMarket1559Tx({ nonce, maxFeePerGas: maxFee, maxPriorityFeePerGas: tip, gasLimit: gas, to, value }, { common }).sign(keys[who])
  return decodeRawTransaction(bytesToHex(tx.serialize()), ctx)
}

/** A fake committed state. */
function reader(nonces = {}, balances = {}) {
  return {
    nonces,
    balances,
    async getNonce(addr) {
      return this.nonces[addr] ?? 0n
    },
    async getBalance(addr) {
      return this.balances[addr] ?? RICH
    },
  }
}

async function rejectsWith(promise, message) {
  await assert.rejects(promise, (err) => {
    assert.equal(err.code, -32000)
    assert.equal(err.message, message)
    return true
  })
}

const hashes = (list) => list.map((p) => p.hash)
/** txpool_content's transaction objects, as the producer answers them. */
const asRpc = (ptx) => pendingRpcTransaction(ptx, common)

test('contiguous nonces are pending, gapped ones queued, and filling the gap promotes', async () => {
  const pool = new TxPool()
  const r = reader()
  const t0 = mk(A, 0n)
  const t2 = mk(A, 2n)
  const t3 = mk(A, 3n)
  assert.equal((await pool.add(t0, r, GWEI)).status, 'pending')
  assert.equal((await pool.add(t2, r, GWEI)).status, 'queued')
  assert.equal((await pool.add(t3, r, GWEI)).status, 'queued')
  assert.deepEqual(pool.status(), { pending: 1, queued: 2 })
  assert.equal(pool.pendingNonce(addrs[A], 0n), 1n)
  assert.deepEqual(hashes(pool.selectForBlock(GWEI, 30_000_000n)), [t0.hash])

  const t1 = mk(A, 1n)
  const res = await pool.add(t1, r, GWEI)
  assert.equal(res.status, 'pending')
  assert.deepEqual(hashes(res.promoted), [t2.hash, t3.hash])
  assert.deepEqual(pool.status(), { pending: 4, queued: 0 })
  assert.equal(pool.pendingNonce(addrs[A], 0n), 4n)
  assert.equal(pool.pendingNonce(addrs[B], 9n), 9n)
  assert.deepEqual(hashes(pool.selectForBlock(GWEI, 30_000_000n)), [t0.hash, t1.hash, t2.hash, t3.hash])
  assert.deepEqual(pool.pendingHashes(), [t0.hash, t1.hash, t2.hash, t3.hash])
  assert.equal(pool.size, 4)
  assert.equal(pool.get(t2.hash.toUpperCase().replace('0X', '0x')), t2)
})

test('already known', async () => {
  const pool = new TxPool()
  const t = mk(A, 0n)
  await pool.add(t, reader(), GWEI)
  await rejectsWith(pool.add(t, reader(), GWEI), 'already known')
  // two concurrent submissions of the same tx: exactly one wins
  const pool2 = new TxPool()
  const results = await Promise.allSettled([pool2.add(t, reader(), GWEI), pool2.add(t, reader(), GWEI)])
  assert.equal(results.filter((x) => x.status === 'fulfilled').length, 1)
  assert.equal(results.find((x) => x.status === 'rejected').reason.message, 'already known')
  assert.equal(pool2.size, 1)
})

test('nonce too low', async () => {
  const pool = new TxPool()
  await rejectsWith(pool.add(mk(A, 3n), reader({ [addrs[A]]: 5n }), GWEI), 'nonce too low: next nonce 5, tx nonce 3')
})

test('insufficient funds for one tx and for the pending sum', async () => {
  const pool = new TxPool()
  const t0 = mk(A, 0n, { value: 5n }) // cost 21000 * 2 gwei + 5 = 42000000000005
  const cost = 21000n * 2n * GWEI + 5n
  await rejectsWith(
    pool.add(t0, reader({}, { [addrs[A]]: 1000n }), GWEI),
    `insufficient funds for gas * price + value: balance 1000, tx cost ${cost}, overshot ${cost - 1000n}`,
  )
  const balance = cost + cost / 2n
  const r = reader({}, { [addrs[A]]: balance })
  await pool.add(t0, r, GWEI)
  await rejectsWith(
    pool.add(mk(A, 1n, { value: 5n }), r, GWEI),
    `insufficient funds for gas * price + value: balance ${balance}, queued cost ${cost}, tx cost ${cost}, overshot ${2n * cost - balance}`,
  )
  // replacing a pending tx counts only the bump against the pending sum
  const pool2 = new TxPool()
  const t1 = mk(A, 1n, { value: 5n })
  const roomy = 2n * cost + 1000n
  const r2 = reader({}, { [addrs[A]]: roomy })
  await pool2.add(t0, r2, GWEI)
  await pool2.add(t1, r2, GWEI)
  const bumped = mk(A, 1n, { maxFee: 4n * GWEI, tip: 2n * GWEI, value: 5n })
  const bump = bumped.cost - cost
  await rejectsWith(
    pool2.add(bumped, r2, GWEI),
    `insufficient funds for gas * price + value: balance ${roomy}, queued cost ${2n * cost}, tx bumped ${bump}, overshot ${2n * cost + bump - roomy}`,
  )
  r2.balances[addrs[A]] = 2n * cost + bump
  assert.equal((await pool2.add(bumped, r2, GWEI)).replaced, t1)
})

test('replacement needs +10% on both fee cap and tip', async () => {
  const pool = new TxPool()
  const r = reader()
  const old = mk(A, 0n, { maxFee: 1000n * GWEI, tip: 100n * GWEI })
  await pool.add(old, r, GWEI)
  await rejectsWith(pool.add(mk(A, 0n, { maxFee: 1090n * GWEI, tip: 109n * GWEI }), r, GWEI), 'replacement transaction underpriced')
  await rejectsWith(pool.add(mk(A, 0n, { maxFee: 1100n * GWEI, tip: 109n * GWEI }), r, GWEI), 'replacement transaction underpriced')
  await rejectsWith(pool.add(mk(A, 0n, { maxFee: 1090n * GWEI, tip: 110n * GWEI }), r, GWEI), 'replacement transaction underpriced')
  const repl = mk(A, 0n, { maxFee: 1100n * GWEI, tip: 110n * GWEI })
  const res = await pool.add(repl, r, GWEI)
  assert.equal(res.status, 'pending')
  assert.equal(res.replaced, old)
  assert.equal(pool.get(old.hash), undefined)
  assert.equal(pool.get(repl.hash), repl)
  assert.deepEqual(pool.status(), { pending: 1, queued: 0 })
  assert.deepEqual(hashes(pool.selectForBlock(GWEI, 30_000_000n)), [repl.hash])

  // a queued tx can be replaced too, and stays queued
  const q = mk(A, 5n, { maxFee: 10n * GWEI, tip: 10n * GWEI })
  await pool.add(q, r, GWEI)
  const q2 = mk(A, 5n, { maxFee: 11n * GWEI, tip: 11n * GWEI })
  assert.equal((await pool.add(q2, r, GWEI)).status, 'queued')
  assert.deepEqual(pool.status(), { pending: 1, queued: 1 })

  // legacy txs compare gasPrice as both fee cap and tip
  const l = mk(B, 0n, { legacy: true, maxFee: 100n })
  await pool.add(l, r, 0n)
  await rejectsWith(pool.add(mk(B, 0n, { legacy: true, maxFee: 109n }), r, 0n), 'replacement transaction underpriced')
  assert.equal((await pool.add(mk(B, 0n, { legacy: true, maxFee: 110n }), r, 0n)).replaced, l)
})

test('nonce too high beyond the queue window', async () => {
  const pool = new TxPool({ maxQueuedPerAccount: 4 })
  const r = reader({ [addrs[A]]: 2n })
  await rejectsWith(pool.add(mk(A, 7n), r, GWEI), 'nonce too high: tx nonce 7, gapped nonce 2')
  assert.equal((await pool.add(mk(A, 6n), r, GWEI)).status, 'queued')
  await pool.add(mk(A, 2n), r, GWEI)
  // the window moves with the pending nonce
  assert.equal((await pool.add(mk(A, 7n), r, GWEI)).status, 'queued')
  await rejectsWith(pool.add(mk(A, 8n), r, GWEI), 'nonce too high: tx nonce 8, gapped nonce 3')
})

test('account limit on pending txs', async () => {
  const pool = new TxPool({ maxPendingPerAccount: 2 })
  const r = reader()
  await pool.add(mk(A, 0n), r, GWEI)
  await pool.add(mk(A, 1n), r, GWEI)
  await rejectsWith(pool.add(mk(A, 2n), r, GWEI), 'account limit exceeded: pooled 2 txs')
})

test('block order: nonce order per sender, highest effective tip across senders', async () => {
  const pool = new TxPool()
  const r = reader()
  const baseFee = GWEI
  const a0 = mk(A, 0n, { maxFee: 10n * GWEI, tip: 1n * GWEI })
  const a1 = mk(A, 1n, { maxFee: 10n * GWEI, tip: 5n * GWEI })
  const b0 = mk(B, 0n, { maxFee: 10n * GWEI, tip: 3n * GWEI })
  const c0 = mk(C, 0n, { maxFee: 10n * GWEI, tip: 2n * GWEI })
  // a tip capped by the fee headroom: effective tip 0.5 gwei
  const d0 = mk(D, 0n, { maxFee: 1_500_000_000n, tip: 1_500_000_000n })
  const e0 = mk(E, 0n, { legacy: true, maxFee: 5n * GWEI }) // legacy: tip = 4 gwei at base fee 1 gwei
  for (const t of [a1, a0, b0, c0, d0, e0]) await pool.add(t, r, baseFee)
  assert.equal(effectiveTip(d0, baseFee), 500_000_000n)
  assert.equal(effectiveTip(e0, baseFee), 4n * GWEI)
  assert.deepEqual(hashes(pool.selectForBlock(baseFee, 30_000_000n)), hashes([e0, b0, c0, a0, a1, d0]))
})

test('block selection skips senders that cannot pay the base fee, and txs that do not fit', async () => {
  const pool = new TxPool()
  const r = reader()
  const a0 = mk(A, 0n, { maxFee: GWEI / 2n, tip: 1n })
  const a1 = mk(A, 1n, { maxFee: 10n * GWEI, tip: 5n * GWEI })
  const b0 = mk(B, 0n, { maxFee: 10n * GWEI, tip: 3n * GWEI, gas: 40000n })
  const c0 = mk(C, 0n, { maxFee: 10n * GWEI, tip: 2n * GWEI })
  const c1 = mk(C, 1n, { maxFee: 10n * GWEI, tip: 2n * GWEI })
  const d0 = mk(D, 0n, { maxFee: 10n * GWEI, tip: 1n * GWEI })
  // a tx below the base fee is still admitted: it waits
  for (const t of [a0, a1, b0, c0, c1, d0]) assert.equal((await pool.add(t, r, GWEI)).status, 'pending')
  // 50000 gas: b0 (40000, highest tip) first; the 10000 left fit nothing
  assert.deepEqual(hashes(pool.selectForBlock(GWEI, 50000n)), [b0.hash])
  // 65000 gas: b0, then c0 in the 25000 left
  assert.deepEqual(hashes(pool.selectForBlock(GWEI, 65000n)), [b0.hash, c0.hash])
  // b0 alone does not fit in 30000: skip it, continue with C and D
  assert.deepEqual(hashes(pool.selectForBlock(GWEI, 30000n)), [c0.hash])
  assert.deepEqual(hashes(pool.selectForBlock(GWEI, 100000n)), [b0.hash, c0.hash, c1.hash])
  // lower base fee: A becomes payable, with the lowest effective tip (1 wei)
  assert.deepEqual(hashes(pool.selectForBlock(GWEI / 4n, 30_000_000n)), hashes([b0, c0, c1, d0, a0, a1]))
  assert.equal(pool.size, 6)
})

test('onBlock removes included and dropped txs, stale nonces, promotes and demotes', async () => {
  const pool = new TxPool()
  const r = reader()
  const a = [0n, 1n, 2n, 4n].map((n) => mk(A, n))
  const b = [0n, 1n, 2n].map((n) => mk(B, n))
  const c = [0n, 1n].map((n) => mk(C, n))
  for (const t of [...a, ...b, ...c]) await pool.add(t, r, GWEI)
  assert.deepEqual(pool.status(), { pending: 8, queued: 1 })

  // block: A0, A1 included; B0 dropped (failed while building); C's nonce jumped to 2 elsewhere
  r.nonces[addrs[A]] = 2n
  r.nonces[addrs[C]] = 2n
  const removed = await pool.onBlock([a[0], a[1]], [b[0]], r, GWEI)
  assert.deepEqual(removed, [])
  assert.equal(pool.get(a[0].hash), undefined)
  assert.equal(pool.get(b[0].hash), undefined)
  // B0 gone leaves a gap: B1, B2 are queued now
  assert.deepEqual(pool.contentFrom(addrs[B], asRpc).pending, {})
  assert.deepEqual(Object.keys(pool.contentFrom(addrs[B], asRpc).queued), ['1', '2'])
  // C was not touched by the block, so its txs stay until a block touches C
  assert.deepEqual(pool.status(), { pending: 3, queued: 3 })

  // a block that touches C (C0 dropped) reconciles C with its state nonce 2: C1 is stale
  const removed2 = await pool.onBlock([], [c[0]], r, GWEI)
  assert.deepEqual(hashes(removed2), [c[1].hash])
  assert.equal(pool.get(c[1].hash), undefined)

  // A2 included, then A3 arrives: A4 is promoted
  r.nonces[addrs[A]] = 3n
  await pool.onBlock([a[2]], [], r, GWEI)
  assert.deepEqual(pool.status(), { pending: 0, queued: 3 })
  const a3 = mk(A, 3n)
  const res = await pool.add(a3, r, GWEI)
  assert.deepEqual(hashes(res.promoted), [a[3].hash])

  // B's state nonce reaches 1 and a block touches B: B1, B2 are promoted
  r.nonces[addrs[B]] = 1n
  await pool.onBlock([], [b[0]], r, GWEI)
  assert.deepEqual(Object.keys(pool.contentFrom(addrs[B], asRpc).pending), ['1', '2'])
  assert.deepEqual(pool.status(), { pending: 4, queued: 0 })
})

test('onBlock: senders whose txs were all included leave the pool and its counts without a state read', async () => {
  const pool = new TxPool()
  const r = reader()
  const a = [0n, 1n].map((n) => mk(A, n))
  const b = [0n, 1n, 2n].map((n) => mk(B, n))
  const d = [0n, 5n].map((n) => mk(D, n))
  for (const t of [...a, ...b, ...d]) await pool.add(t, r, GWEI)
  assert.deepEqual(pool.status(), { pending: 6, queued: 1 })
  let reads = 0
  const counting = { ...r, async getNonce(addr) { reads++; return r.getNonce(addr) } }
  // A fully included; B's first two included (its nonce is now 2, known from the block itself)
  await pool.onBlock([a[0], a[1], b[0], b[1], d[0]], [], counting, GWEI)
  assert.equal(reads, 0)
  assert.deepEqual(pool.status(), { pending: 1, queued: 1 })
  assert.deepEqual(Object.keys(pool.contentFrom(addrs[B], asRpc).pending), ['2'])
  assert.deepEqual(Object.keys(pool.contentFrom(addrs[D], asRpc).queued), ['5'])
  assert.deepEqual(pool.contentFrom(addrs[A], asRpc), { pending: {}, queued: {} })
})

test('add() notices a state nonce that moved past pooled txs', async () => {
  const pool = new TxPool()
  const r = reader()
  const t0 = mk(A, 0n)
  await pool.add(t0, r, GWEI)
  r.nonces[addrs[A]] = 1n
  const t1 = mk(A, 1n)
  assert.equal((await pool.add(t1, r, GWEI)).status, 'pending')
  assert.equal(pool.get(t0.hash), undefined)
  assert.deepEqual(pool.status(), { pending: 1, queued: 0 })
  assert.deepEqual(hashes((await pool.add(mk(A, 3n), r, GWEI)).removed), [])
  r.nonces[addrs[A]] = 2n
  const res = await pool.add(mk(A, 2n), r, GWEI)
  assert.deepEqual(hashes(res.removed), [t1.hash])
  assert.deepEqual(res.promoted.map((p) => p.nonce), [3n])
})

test('a full pool evicts the cheapest queued tx first, and never for a cheaper tx', async () => {
  const pool = new TxPool({ maxSlots: 3 })
  const r = reader()
  const p0 = mk(A, 0n, { maxFee: 10n * GWEI, tip: 2n * GWEI })
  const q1 = mk(B, 5n, { maxFee: 10n * GWEI, tip: 3n * GWEI })
  const q2 = mk(C, 5n, { maxFee: 10n * GWEI, tip: 4n * GWEI })
  for (const t of [p0, q1, q2]) await pool.add(t, r, GWEI)

  // cheaper than every queued tx: rejected
  await rejectsWith(pool.add(mk(D, 0n, { maxFee: 10n * GWEI, tip: 2n * GWEI }), r, GWEI), 'transaction underpriced')
  // pricier than the cheapest queued tx: that one goes
  const d0 = mk(D, 0n, { maxFee: 10n * GWEI, tip: 5n * GWEI })
  const res = await pool.add(d0, r, GWEI)
  assert.deepEqual(hashes(res.removed), [q1.hash])
  assert.equal(pool.get(q1.hash), undefined)
  assert.equal(pool.size, 3)
  // replacements do not need room
  assert.ok((await pool.add(mk(A, 0n, { maxFee: 11n * GWEI, tip: 3n * GWEI }), r, GWEI)).replaced)
})

test('evicting the only tx of the sender being admitted keeps the new tx indexed', async () => {
  const pool = new TxPool({ maxSlots: 2 })
  const r = reader()
  const p0 = mk(B, 0n, { maxFee: 10n * GWEI, tip: 9n * GWEI })
  const q5 = mk(A, 5n, { maxFee: 10n * GWEI, tip: 1n * GWEI })
  await pool.add(p0, r, GWEI)
  await pool.add(q5, r, GWEI)
  const q6 = mk(A, 6n, { maxFee: 10n * GWEI, tip: 2n * GWEI })
  const res = await pool.add(q6, r, GWEI)
  assert.deepEqual(hashes(res.removed), [q5.hash])
  assert.deepEqual(Object.keys(pool.contentFrom(addrs[A], asRpc).queued), ['6'])
  assert.deepEqual(pool.status(), { pending: 1, queued: 1 })
})

test('a full pool of pending txs evicts the cheapest sender tail only for a pricier pending tx', async () => {
  const pool = new TxPool({ maxSlots: 3 })
  const r = reader()
  const a0 = mk(A, 0n, { maxFee: 10n * GWEI, tip: 3n * GWEI })
  const a1 = mk(A, 1n, { maxFee: 10n * GWEI, tip: 1n * GWEI })
  const b0 = mk(B, 0n, { maxFee: 10n * GWEI, tip: 2n * GWEI })
  for (const t of [a0, a1, b0]) await pool.add(t, r, GWEI)
  // a queued tx cannot push out pending ones
  await rejectsWith(pool.add(mk(C, 3n, { maxFee: 100n * GWEI, tip: 50n * GWEI }), r, GWEI), 'txpool is full')
  // a pending tx cheaper than every tail is underpriced (tails: a1 at 1 gwei, b0 at 2 gwei)
  await rejectsWith(pool.add(mk(C, 0n, { maxFee: 10n * GWEI, tip: 1n * GWEI }), r, GWEI), 'transaction underpriced')
  const c0 = mk(C, 0n, { maxFee: 10n * GWEI, tip: 3n * GWEI })
  const res = await pool.add(c0, r, GWEI)
  assert.deepEqual(hashes(res.removed), [a1.hash])
  assert.deepEqual(pool.status(), { pending: 3, queued: 0 })
  assert.deepEqual(hashes(pool.selectForBlock(GWEI, 30_000_000n)), hashes([a0, c0, b0]))
})

test('queued txs expire after their lifetime; pending ones stay', async () => {
  let now = 1_000_000
  const pool = new TxPool({ lifetimeMs: 1000, now: () => now })
  const r = reader()
  const p = mk(A, 0n)
  const q = mk(A, 2n)
  p.arrivedAt = now
  q.arrivedAt = now
  await pool.add(p, r, GWEI)
  await pool.add(q, r, GWEI)
  now += 1000
  assert.deepEqual(pool.expireQueued(), [])
  now += 1
  assert.deepEqual(hashes(pool.expireQueued()), [q.hash])
  assert.deepEqual(pool.status(), { pending: 1, queued: 0 })
  // onBlock runs the expiry too
  const q3 = mk(B, 3n)
  q3.arrivedAt = now - 5000
  await pool.add(q3, r, GWEI)
  assert.deepEqual(hashes(await pool.onBlock([], [], r, GWEI)), [q3.hash])
})

test('txpool_content and txpool_inspect shapes', async () => {
  const pool = new TxPool()
  const r = reader()
  const p0 = mk(A, 0n, { value: 1n, maxFee: GWEI })
  const q2 = mk(A, 2n, { to: '', value: 0n, gas: 60000n })
  const l0 = mk(B, 0n, { legacy: true, maxFee: 3n * GWEI, value: 7n })
  for (const t of [p0, q2, l0]) await pool.add(t, r, GWEI)
  const keyA = toChecksumAddress(addrs[A])
  const keyB = toChecksumAddress(addrs[B])
  const to = toChecksumAddress(recipient)

  const inspect = pool.inspect()
  assert.deepEqual(inspect, {
    pending: {
      [keyA]: { 0: `${to}: 1 wei + 21000 gas × 1000000000 wei` },
      [keyB]: { 0: `${to}: 7 wei + 21000 gas × 3000000000 wei` },
    },
    queued: { [keyA]: { 2: 'contract creation: 0 wei + 60000 gas × 2000000000 wei' } },
  })

  const content = pool.content(asRpc)
  const tx = content.pending[keyA]['0']
  assert.equal(tx.hash, p0.hash)
  assert.equal(tx.from, addrs[A])
  assert.equal(tx.blockHash, null)
  assert.equal(tx.blockNumber, null)
  assert.equal(tx.transactionIndex, null)
  assert.equal(tx.nonce, '0x0')
  assert.equal(tx.gas, '0x5208')
  assert.equal(tx.gasPrice, '0x3b9aca00')
  assert.equal(tx.maxFeePerGas, '0x3b9aca00')
  assert.equal(tx.maxPriorityFeePerGas, '0x3b9aca00')
  assert.equal(tx.to, recipient)
  assert.equal(tx.type, '0x2')
  assert.equal(tx.chainId, '0x600d')
  assert.equal(tx.input, '0x')
  assert.deepEqual(tx.accessList, [])
  assert.ok(tx.yParity === '0x0' || tx.yParity === '0x1')
  assert.equal(content.queued[keyA]['2'].to, null)
  const legacy = content.pending[keyB]['0']
  assert.equal(legacy.type, '0x0')
  assert.equal(legacy.chainId, '0x600d')
  assert.equal(legacy.maxFeePerGas, undefined)
  assert.equal(legacy.yParity, undefined)
  // structured-clone safe (it crosses the producer thread boundary)
  assert.deepEqual(structuredClone(content), content)

  const from = pool.contentFrom(addrs[A].toUpperCase().replace('0X', '0x'), asRpc)
  assert.deepEqual(Object.keys(from.pending), ['0'])
  assert.deepEqual(Object.keys(from.queued), ['2'])
})

test('serialize() lists raw txs in sender/nonce order and restores the same pool', async () => {
  const pool = new TxPool()
  const r = reader()
  const txs = [mk(A, 1n), mk(B, 0n), mk(A, 0n), mk(A, 3n)]
  for (const t of txs) await pool.add(t, r, GWEI)
  const saved = pool.serialize()
  assert.equal(saved.length, 4)
  assert.deepEqual(saved.map(bytesToHex), [txs[2], txs[0], txs[3], txs[1]].map((t) => bytesToHex(t.raw)))
  assert.deepEqual(pool.all().map((p) => p.hash), hashes([txs[2], txs[0], txs[3], txs[1]]))

  const restored = new TxPool()
  for (const raw of saved) await restored.add(decodeRawTransaction(bytesToHex(raw), ctx), r, GWEI)
  assert.deepEqual(restored.status(), pool.status())
  assert.deepEqual(restored.status(), { pending: 3, queued: 1 })
})

test('remove() demotes the later txs of the sender', async () => {
  const pool = new TxPool()
  const r = reader()
  const t = [0n, 1n, 2n].map((n) => mk(A, n))
  for (const x of t) await pool.add(x, r, GWEI)
  assert.equal(pool.remove(t[1].hash), t[1])
  assert.deepEqual(pool.status(), { pending: 1, queued: 1 })
  assert.equal(pool.pendingNonce(addrs[A], 0n), 1n)
})

/** Every candidate an order gives now, each taken into the block. */
function takeAll(order) {
  const out = []
  for (let p = order.peek(); p !== undefined; p = order.peek()) {
    out.push(p.hash)
    order.shift()
  }
  return out
}

test('a block built ahead of its slot takes arrivals: a sender that ran out comes back, a new sender joins', async () => {
  const pool = new TxPool()
  const r = reader()
  const a0 = mk(A, 0n)
  await pool.add(a0, r, GWEI)
  const order = pool.orderForBlock(GWEI, Date.now() + 5_000)
  assert.deepEqual(takeAll(order), [a0.hash])
  const waiting = order.more()
  const a1 = mk(A, 1n)
  const b0 = mk(B, 0n)
  await pool.add(a1, r, GWEI)
  await pool.add(b0, r, GWEI)
  assert.equal(await waiting, true)
  assert.deepEqual(takeAll(order).sort(), [a1.hash, b0.hash].sort())
  // a gapped arrival is queued, not a candidate; once the gap is filled both come in nonce order
  const a3 = mk(A, 3n)
  await pool.add(a3, r, GWEI)
  assert.equal(order.peek(), undefined)
  const a2 = mk(A, 2n)
  await pool.add(a2, r, GWEI)
  assert.equal(await order.more(), true)
  assert.deepEqual(takeAll(order), [a2.hash, a3.hash])
  pool.built(order)
})

test('a block built ahead: a dropped sender stays out, and past the slot arrivals wait for the next block', async () => {
  const pool = new TxPool()
  const r = reader()
  const a0 = mk(A, 0n)
  const d0 = mk(D, 0n, { maxFee: 4n * GWEI, tip: 2n * GWEI })
  await pool.add(a0, r, GWEI)
  await pool.add(d0, r, GWEI)
  const slot = Date.now() + 300
  const order = pool.orderForBlock(GWEI, slot)
  // D pays the higher tip: first; A's transaction does not fit and A is dropped
  assert.equal(order.peek().hash, d0.hash)
  order.shift()
  assert.equal(order.peek().hash, a0.hash)
  order.pop()
  await pool.add(mk(A, 1n), r, GWEI)
  assert.equal(await order.more(), false, 'a dropped sender does not wake the block')
  assert.ok(Date.now() >= slot, 'more() waited for the slot')
  // past the slot: a new sender and a later nonce of a sender that ran out both wait
  await pool.add(mk(B, 0n), r, GWEI)
  await pool.add(mk(D, 1n, { maxFee: 4n * GWEI, tip: 2n * GWEI }), r, GWEI)
  assert.equal(order.peek(), undefined)
  assert.equal(await order.more(), false)
  pool.built(order)
  await pool.onBlock([d0], [], reader({ [addrs[D]]: 1n }), GWEI)
  const next = pool.orderForBlock(GWEI)
  assert.equal(takeAll(next).length, 4, 'the next block takes A0, A1, B0 and D1')
})

test('a block built ahead: a sender still walked when the slot passes leaves its later arrivals', async () => {
  const pool = new TxPool()
  const r = reader()
  const c0 = mk(C, 0n)
  await pool.add(c0, r, GWEI)
  const order = pool.orderForBlock(GWEI, Date.now() + 100)
  assert.equal(order.peek().hash, c0.hash)
  await order.deadline()
  await pool.add(mk(C, 1n), r, GWEI)
  order.shift()
  assert.equal(order.peek(), undefined, 'C1 arrived after the order was made and after the slot')
  pool.built(order)
})

test('deadline() holds a block until its slot, end() releases it; without a slot (automine) nothing waits', async () => {
  const pool = new TxPool()
  const r = reader()
  let t0 = Date.now()
  const order = pool.orderForBlock(GWEI, t0 + 250)
  await order.deadline()
  assert.ok(Date.now() - t0 >= 250)
  pool.built(order)

  t0 = Date.now()
  const long = pool.orderForBlock(GWEI, t0 + 60_000)
  setTimeout(() => long.end(), 50)
  await long.deadline()
  assert.ok(Date.now() - t0 < 5_000, 'end() cut the wait')
  assert.equal(await long.more(), false)
  pool.built(long)

  const a0 = mk(A, 0n)
  await pool.add(a0, r, GWEI)
  const now = pool.orderForBlock(GWEI)
  assert.deepEqual(takeAll(now), [a0.hash])
  await pool.add(mk(B, 0n), r, GWEI)
  t0 = Date.now()
  assert.equal(await now.more(), false)
  await now.deadline()
  assert.equal(now.peek(), undefined, 'an automine block takes only the senders it started with')
  assert.ok(Date.now() - t0 < 100)
})
