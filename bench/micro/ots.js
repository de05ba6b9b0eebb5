// What Otterscan's heaviest pages cost Keel: ots_searchTransactionsBefore of an address with 100,000
// transactions (10,000 with --quick), its first page and a page in the middle of its history;
// ots_getBlockTransactions (first and last page of 25) of a block of 5,000 transfers; ots_getBlockDetails
// of that block; trace_replayTransaction's stateDiff of its last transfer. The chain is built in process (the real Producer, so the indexes are the producer's),
// then a node is started on it and each request is timed one at a time over HTTP on loopback:
// median and p99 of the round trip, the first answer (cold caches) shown apart, once the node's warm-ups
// after start are over.
//
//   node bench/micro/ots.js [--quick]      (after npm run build)

import { spawn } from 'node:child_process'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { hexToBytes } from '@ethereumjs/util'
import { benchKeys, openTempChain } from '../lib/temp-chain.js'
import { cpuMicros } from '../macro/nodes.js'

const HISTORY = '0x00000000000000000000000000000000000a11ce'
const PER_HISTORY_BLOCK = 25
const BIG_BLOCK = 5_000
const repoRoot = fileURLToPath(new URL('../..', import.meta.url))

export async function run({ quick }) {
  const historyTxs = quick ? 10_000 : 100_000
  const senders = benchKeys(250, 49)
  const chain = await openTempChain({ funded: senders, gasLimit: 200_000_000n })
  let node
  try {
    const buildStart = performance.now()
    let s = 0
    const historyBlocks = []
    for (let b = 0; b < historyTxs / PER_HISTORY_BLOCK; b++) {
      for (let i = 0; i < PER_HISTORY_BLOCK; i++) await chain.submit(chain.sign(senders[s++ % senders.length], { to: hexToBytes(HISTORY), value: 1n, gasLimit: 21_000n }))
      historyBlocks.push(Number((await chain.sealBlock()).head.number))
    }
    for (let i = 0; i < BIG_BLOCK; i++) {
      const to = hexToBytes(`0x${(0x200000 + i).toString(16).padStart(40, '0')}`)
      await chain.submit(chain.sign(senders[i % senders.length], { to, value: 1n, gasLimit: 21_000n }))
    }
    const big = await chain.sealBlock()
    if (big.txHashes.length !== BIG_BLOCK) throw new Error(`the big block holds ${big.txHashes.length} transactions`)
    const bigBlock = Number(big.head.number)
    const buildSeconds = (performance.now() - buildStart) / 1000
    await chain.close({ keepData: true })

    node = await startKeel(chain.dir)
    // the node's warm-ups after start (intake, producer, call workers) would run into the first cases
    await settle(node.pid)
    const middle = historyBlocks[Math.floor(historyBlocks.length / 2)]
    const rounds = quick ? 50 : 200
    const cases = [
      [`ots_searchTransactionsBefore, first page (address with ${historyTxs.toLocaleString('en')} txs)`, 'ots_searchTransactionsBefore', [HISTORY, 0, 25], (r) => r.txs.length === 25],
      ['ots_searchTransactionsBefore, a page in the middle of its history', 'ots_searchTransactionsBefore', [HISTORY, middle, 25], (r) => r.txs.length === 25],
      ['ots_searchTransactionsAfter, a page in the middle of its history', 'ots_searchTransactionsAfter', [HISTORY, middle, 25], (r) => r.txs.length === 25],
      [`ots_getBlockTransactions, page 0 of a ${BIG_BLOCK.toLocaleString('en')}-tx block`, 'ots_getBlockTransactions', [bigBlock, 0, 25], (r) => r.fullblock.transactionCount === BIG_BLOCK],
      [`ots_getBlockTransactions, last page of a ${BIG_BLOCK.toLocaleString('en')}-tx block`, 'ots_getBlockTransactions', [bigBlock, BIG_BLOCK / 25 - 1, 25], (r) => r.fullblock.transactions.length === 25],
      [`ots_getBlockDetails of the ${BIG_BLOCK.toLocaleString('en')}-tx block`, 'ots_getBlockDetails', [bigBlock], (r) => r.block.transactionCount === BIG_BLOCK],
      // the State tab: the block's last transfer runs again after the 4,999 before it
      [`trace_replayTransaction stateDiff, the last transfer of the ${BIG_BLOCK.toLocaleString('en')}-tx block`, 'trace_replayTransaction', [big.txHashes[BIG_BLOCK - 1], ['stateDiff']], (r) => Object.keys(r.stateDiff).length === 3],
    ]
    const rows = []
    for (const [name, method, params, check] of cases) {
      const times = []
      let first
      for (let i = 0; i < rounds; i++) {
        const t = performance.now()
        const result = await call(node.url, method, params)
        const ms = performance.now() - t
        if (!check(result)) throw new Error(`${name}: unexpected answer`)
        if (i === 0) first = ms
        else times.push(ms)
      }
      times.sort((a, b) => a - b)
      rows.push({
        name,
        'first ms': Number(first.toFixed(2)),
        'median ms': Number(times[Math.floor(times.length / 2)].toFixed(2)),
        'p99 ms': Number(times[Math.min(times.length - 1, Math.floor(times.length * 0.99))].toFixed(2)),
        rounds,
      })
    }
    rows.push({ name: `(chain built in process: ${historyTxs + BIG_BLOCK} transactions in ${historyBlocks.length + 1} blocks, ${buildSeconds.toFixed(0)} s)` })
    return rows
  } finally {
    await node?.stop()
    rmSync(chain.dir, { recursive: true, force: true })
  }
}

/** Waits (up to 30 s) until the node spends under 20 ms of CPU in 200 ms. */
async function settle(pid) {
  for (let i = 0; i < 150; i++) {
    const before = cpuMicros(pid)
    await new Promise((resolve) => setTimeout(resolve, 200))
    if (cpuMicros(pid) - before < 20_000) return
  }
}

async function call(url, method, params) {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) })
  const body = await res.json()
  if (body.error !== undefined) throw new Error(`${method}: ${body.error.message}`)
  return body.result
}

/** A Keel node on the chain in `dataDir` (its genesis is in the database), on a free loopback port. */
function startKeel(dataDir) {
  const proc = spawn(process.execPath, [join(repoRoot, 'bin', 'keel.js'), 'start', '--data-dir', dataDir, '--host', '127.0.0.1', '--port', '0', '--metrics-port', '0', '--rate-limit', '0'], { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`keel did not start in 60 s:\n${out}`)), 60_000)
    const onData = (chunk) => {
      out += chunk
      const m = /^keel: listening on (http:\/\/[\d.]+:\d+)\s*$/m.exec(out)
      if (m === null) return
      clearTimeout(timer)
      resolve({
        url: m[1],
        pid: proc.pid,
        stop: () => new Promise((done) => {
          if (proc.exitCode !== null) return done()
          proc.once('exit', () => done())
          proc.kill('SIGTERM')
        }),
      })
    }
    proc.stdout.on('data', onData)
    proc.stderr.on('data', onData)
    proc.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`keel exited with ${code}:\n${out}`))
    })
  })
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const rows = await run({ quick: process.argv.includes('--quick') })
  console.table(rows)
}
