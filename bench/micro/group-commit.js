// What the pool journal's group commit costs a submission: turns of 29 journal entries (a 33-byte key and
// a 300-byte value, the size of an ERC20 transfer's entry; 29 is what one submission message carried
// in `tx-costs.js`), each turn one LevelDB batch, written through GroupCommit (src/chain/store/group-commit.ts:
// a chained batch filled as entries come) and as an array batch of the turn's operations (`level.batch(ops)`,
// its form before), alternating, process CPU and wall time an entry (LevelDB's writer threads included).
//
//   node bench/micro/group-commit.js [--quick]       (not part of `npm run bench`)

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openChainLevel } from '../../dist/chain/store/level.js'
import { GroupCommit } from '../../dist/chain/store/group-commit.js'

const QUICK = process.argv.includes('--quick')
const TURNS = QUICK ? 300 : 1500
const PER_TURN = 29
const ROUNDS = QUICK ? 2 : 6

/** The array batch: a turn's operations kept, then handed to LevelDB at once. */
class ArrayBatchCommit {
  constructor(level) {
    this.level = level
    this.ops = []
    this.waiters = []
  }

  write(ops) {
    this.ops.push(...ops)
    const done = new Promise((resolve, reject) => this.waiters.push({ resolve, reject }))
    if (this.waiters.length === 1) setImmediate(() => this.flush())
    return done
  }

  flush() {
    const { ops, waiters } = this
    this.ops = []
    this.waiters = []
    this.level.batch(ops).then(() => waiters.forEach((w) => w.resolve()), (err) => waiters.forEach((w) => w.reject(err)))
  }
}

let seq = 0
async function round(level, Commit) {
  const journal = new Commit(level)
  const cpu = process.cpuUsage()
  const started = performance.now()
  for (let t = 0; t < TURNS; t++) {
    const writes = []
    for (let i = 0; i < PER_TURN; i++) {
      const key = new Uint8Array(33)
      key[0] = 0x70
      new DataView(key.buffer).setUint32(1, seq++)
      writes.push(journal.write([{ type: 'put', key, value: new Uint8Array(300).fill(i) }]))
    }
    await Promise.all(writes)
  }
  const used = process.cpuUsage(cpu)
  const entries = TURNS * PER_TURN
  return { cpu: (used.user + used.system) / entries, wall: ((performance.now() - started) * 1000) / entries }
}

const dir = mkdtempSync(join(tmpdir(), 'keel-group-commit-'))
const level = await openChainLevel(dir)
try {
  const ways = { 'GroupCommit (chained batch)': GroupCommit, 'array batch': ArrayBatchCommit }
  const results = Object.fromEntries(Object.keys(ways).map((name) => [name, []]))
  // a round of each to warm up, then alternating
  for (const Commit of Object.values(ways)) await round(level, Commit)
  for (let r = 0; r < ROUNDS; r++) {
    const names = r % 2 === 0 ? Object.keys(ways) : Object.keys(ways).reverse()
    for (const name of names) results[name].push(await round(level, ways[name]))
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
  console.table(Object.entries(results).map(([name, rs]) => ({
    way: name,
    'process CPU µs an entry (median)': median(rs.map((x) => x.cpu)).toFixed(2),
    'wall µs an entry (median)': median(rs.map((x) => x.wall)).toFixed(2),
    rounds: rs.map((x) => x.cpu.toFixed(2)).join(' '),
  })))
} finally {
  await level.close()
  rmSync(dir, { recursive: true, force: true })
}
