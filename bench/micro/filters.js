// Polls per second of eth_getFilterChanges' store: filters in this node's memory against filters shared
// in Redis (a redis-server on loopback, started here). 1,000 block filters polled in turn by 64 pollers
// at once (as many clients polling one node), each poll finding one new block (the cursor moves: the
// script's write path); and pending-transaction filters each finding 10 new hashes. CPU = this process's
// user + system time (Redis's own CPU is not counted). The JSON answer and the block reads are the same
// for both stores and not part of this figure. "changes" counts what the polls handed out: hashes
// appended while other polls are in flight reach those filters on their next poll, so the last round
// leaves some behind.
// node bench/micro/filters.js [--polls N]

import { startRedis } from '../../test/helpers/redis.js'
import { LocalFilters } from '../../dist/rpc/filters.js'
import { SharedFilters } from '../../dist/rpc/shared-filters.js'
import { RedisFilterStore } from '../../dist/shared/redis-filters.js'

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`)
  return i < 0 ? fallback : Number(process.argv[i + 1])
}
const POLLS = arg('polls', 100_000)
const FILTERS = 1000
const POLLERS = 64

/** POLLS polls by POLLERS concurrent pollers over FILTERS filters of `type`; head grows by one per round of filters. */
async function run(store, type) {
  const ids = []
  for (let i = 0; i < FILTERS; i++) ids.push(await store.install({ type }, 0n))
  let next = 0
  let changes = 0
  const cpu = process.cpuUsage()
  const started = performance.now()
  const poller = async () => {
    for (let i = next++; i < POLLS; i = next++) {
      if (type === 'pendingTransactions' && i % FILTERS === 0) {
        store.onPendingTransactions(Array.from({ length: 10 }, (_, j) => `0x${(i + j).toString(16).padStart(64, '0')}`))
        // the shared store appends the hashes on the next turn of the event loop
        await new Promise((r) => setImmediate(r))
      }
      const polled = await store.poll(ids[i % FILTERS], BigInt(Math.floor(i / FILTERS) + 1))
      if (polled === undefined) throw new Error('filter not found')
      changes += polled.type === 'pendingTransactions' ? polled.hashes.length : Number(polled.upTo - polled.after)
    }
  }
  await Promise.all(Array.from({ length: POLLERS }, poller))
  const used = process.cpuUsage(cpu)
  const seconds = (performance.now() - started) / 1000
  return { pollsPerSecond: POLLS / seconds, cpuUsPerPoll: (used.user + used.system) / POLLS, changes }
}

const redis = await startRedis()
try {
  const fmt = (r) => `${Math.round(r.pollsPerSecond).toLocaleString('en-US').padStart(9)} polls/s, ${r.cpuUsPerPoll.toFixed(2)} us CPU/poll, ${r.changes} changes`
  console.log(`filter polls, ${POLLS} polls over ${FILTERS} filters by ${POLLERS} concurrent pollers:`)
  for (const type of ['blocks', 'pendingTransactions']) {
    const local = new LocalFilters(300_000)
    const l = await run(local, type)
    await local.close()
    const store = new RedisFilterStore(redis.url, 24589, 1000)
    await store.connect(1000)
    const shared = new SharedFilters({ store, local: new LocalFilters(300_000), timeoutMs: 300_000, publishPending: true })
    const s = await run(shared, type)
    await shared.close()
    console.log(`  ${type.padEnd(20)} local ${fmt(l)}`)
    console.log(`  ${''.padEnd(20)} Redis ${fmt(s)}`)
  }
} finally {
  await redis.close()
}
