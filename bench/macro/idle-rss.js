// Idle memory of a node on a long chain: the real producer builds N blocks (default 100,000; one plain
// transfer to a new account every 10th block, the rest empty, as a quiet private chain looks) on a temp
// LevelDB, then Keel is started on that folder as `keel` launches it (bench/lib/keel-launch.js) and left
// alone: its RSS and each thread's V8 heap are read after SETTLE_S seconds. A node on an empty chain is
// measured the same way beside it, so the difference is what the chain's length costs at rest.
//
//   npm run build && node bench/macro/idle-rss.js [--blocks N] [--quick]     (--quick: 5,000 blocks)

import { readFileSync } from 'node:fs'
import { hexToBytes } from '@ethereumjs/util'
import { parsePrometheusText, samples } from '../../test/helpers/prom.js'
import { freePort } from '../lib/free-port.js'
import { openTempChain } from '../lib/temp-chain.js'
import { startKeel } from './nodes.js'

const argv = process.argv.slice(2)
const quick = argv.includes('--quick')
const BLOCKS = argv.includes('--blocks') ? Number(argv[argv.indexOf('--blocks') + 1]) : quick ? 5_000 : 100_000
const TRANSFER_EVERY = 10
const SETTLE_S = 30
const MiB = 2 ** 20

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const statusKiB = (pid, field) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1])

async function rpc(url, method, params = []) {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) })
  const json = await res.json()
  if (json.error !== undefined) throw new Error(`${method}: ${JSON.stringify(json.error)}`)
  return json.result
}

async function buildChain() {
  const chain = await openTempChain()
  const started = performance.now()
  for (let b = 1; b <= BLOCKS; b++) {
    if (b % TRANSFER_EVERY === 0) {
      const to = hexToBytes(`0x${(0x300000 + b).toString(16).padStart(40, '0')}`)
      await chain.submit(chain.sign(chain.dev[1].key, { to, value: 1n, gasLimit: 21_000n }))
    }
    await chain.sealBlock()
  }
  const seconds = (performance.now() - started) / 1000
  await chain.close({ keepData: true })
  return { dir: chain.dir, seconds }
}

/** Starts Keel on `dataDir` (a fresh folder when undefined), leaves it idle, reads its memory. */
async function idleMemory(dataDir, expectBlocks) {
  const metricsPort = await freePort()
  const node = await startKeel({ dataDir, args: ['--metrics-port', String(metricsPort)] })
  try {
    const head = Number(await rpc(node.url, 'eth_blockNumber'))
    if (head < expectBlocks) throw new Error(`the node's head is ${head}, expected at least ${expectBlocks}`)
    await sleep(SETTLE_S * 1000)
    const families = parsePrometheusText(await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text())
    const byThread = (name) => Object.fromEntries(samples(families, name).map((s) => [s.labels.thread, Math.round(s.value / MiB)]))
    return {
      head,
      rssMiB: Math.round(statusKiB(node.pid, 'VmRSS') / 1024),
      anonMiB: Math.round(statusKiB(node.pid, 'RssAnon') / 1024),
      heapUsedMiB: byThread('keel_thread_heap_used_bytes'),
      heapTotalMiB: byThread('keel_thread_heap_total_bytes'),
      externalMiB: byThread('keel_thread_external_bytes'),
    }
  } finally {
    await node.stop()
  }
}

const { dir, seconds } = await buildChain()
console.log(`built ${BLOCKS} blocks (${BLOCKS / TRANSFER_EVERY} transfers) in ${seconds.toFixed(0)} s`)
const rows = []
for (const [name, dataDir, blocks] of [['empty chain', undefined, 0], [`${BLOCKS.toLocaleString('en-US')} blocks`, dir, BLOCKS]]) {
  const m = await idleMemory(dataDir, blocks)
  const threads = (o) => Object.entries(o).map(([t, v]) => `${t} ${v}`).join(', ')
  rows.push({ chain: name, head: m.head, 'RSS MiB': m.rssMiB, 'anon MiB': m.anonMiB, 'heap used MiB': threads(m.heapUsedMiB), 'heap total MiB': threads(m.heapTotalMiB), 'external MiB': threads(m.externalMiB) })
}
console.table(rows)
