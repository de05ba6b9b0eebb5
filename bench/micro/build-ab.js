// A/B of bench/micro/build.js between built trees (git worktrees, each after `npm run build`): alternating
// rounds, each tree's own build.js run() in a child process with the tree as its folder, so that one tree's
// JIT and heap never carry into another's. Prints every round's medians: wall time to build and commit a
// block (build.js's figure) and the process CPU of it (Producer.seal wrapped in the child: the CPU of every
// thread of the process, LevelDB's and the GC's included, during the seal), which a shared host disturbs less.
//
//   node bench/micro/build-ab.js ROUNDS name=/path/to/tree name=/path/to/tree ...    (not part of `npm run bench`)

import { execFileSync } from 'node:child_process'
import { loadavg } from 'node:os'

const BLOCKS = 8 // build.js's blocks of each kind without --quick, native first

const child = (tree) => `
const { Producer } = await import('${tree}/dist/chain/producer.js')
const seal = Producer.prototype.seal
const cpu = []
Producer.prototype.seal = async function () {
  const c0 = process.cpuUsage()
  try { return await seal.call(this) } finally { const c = process.cpuUsage(c0); cpu.push((c.user + c.system) / 1000) }
}
const rows = await (await import('${tree}/bench/micro/build.js')).run({ quick: false })
const med = (a) => [...a].sort((x, y) => x - y)[a.length >> 1]
const timed = cpu.slice(-2 * ${BLOCKS})
console.log(JSON.stringify({ wall: rows.map((r) => r['ms (median)']), cpu: [med(timed.slice(0, ${BLOCKS})), med(timed.slice(${BLOCKS}))] }))
`

const [rounds, ...specs] = process.argv.slice(2)
const trees = specs.map((s) => s.split('='))
if (!(Number(rounds) > 0) || trees.length < 2 || trees.some((t) => t.length !== 2)) {
  console.error('usage: node bench/micro/build-ab.js ROUNDS name=/path/to/tree name=/path/to/tree ...')
  process.exit(2)
}
for (let r = 0; r < Number(rounds); r++) {
  // each round starts with the next tree, so that none always runs first
  for (let i = 0; i < trees.length; i++) {
    const [name, tree] = trees[(i + r) % trees.length]
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', child(tree)], { cwd: tree, encoding: 'utf8', maxBuffer: 1 << 24, timeout: 600_000 })
    const { wall, cpu } = JSON.parse(out.trim().split('\n').at(-1))
    console.log(JSON.stringify({ round: r, name, 'native ms': wall[0], 'erc20 ms': wall[1], 'native cpu ms': Number(cpu[0].toFixed(1)), 'erc20 cpu ms': Number(cpu[1].toFixed(1)), load: Number(loadavg()[0].toFixed(1)) }))
  }
}
