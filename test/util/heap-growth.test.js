// --heap-growth-percent bounds how far an isolate's old generation grows past its live size before V8
// collects it. V8's own factor let this workload reach ~4.5x its live size; 50% keeps it under 2.5x.

import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { test } from 'node:test'

const WORKLOAD = `
import { getHeapSpaceStatistics } from 'node:v8'
const { applyHeapGrowthPercent } = await import(${JSON.stringify(new URL('../../dist/util/heap-growth.js', import.meta.url).href)})
applyHeapGrowthPercent(Number(process.argv[1]))
const oldSpace = () => getHeapSpaceStatistics().find((s) => s.space_name === 'old_space')
const live = []
for (let i = 0; i < 100_000; i++) live.push({ i, s: 'x'.repeat(40) + i })
const ring = new Array(64).fill(null)
let peak = 0
for (let round = 0; round < 1500; round++) {
  // each batch lives long enough to be promoted to the old generation, then dies
  ring[round % 64] = Array.from({ length: 2000 }, (_, k) => ({ k, round, s: 'y'.repeat(20) + k }))
  if (round % 20 === 0) peak = Math.max(peak, oldSpace().space_size)
}
gc()
console.log(JSON.stringify({ peak, live: oldSpace().space_used_size, kept: live.length + ring.length }))
`

function run(percent) {
  const out = execFileSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', WORKLOAD, String(percent)], { encoding: 'utf8' })
  return JSON.parse(out)
}

test('with 50% the old generation stays within 2.5x of its live size', () => {
  const { peak, live } = run(50)
  assert.ok(live > 30 * 2 ** 20, `live ${live}`)
  assert.ok(peak <= 2.5 * live, `peak ${peak} against live ${live}`)
})
