// CPU per call of the rate limiter deciding a cheap read (cost 1): local buckets against the buckets
// shared in Redis (a redis-server on loopback, started here). Clients: 1,000 addresses at 100/s, burst
// 200, each sending its calls well within its budget in rounds, so every call is admitted and the shared
// limiter leases 20 tokens (a tenth of the burst) per round trip. CPU = this process's user + system time.
// node bench/micro/ratelimit.js [--calls N] [--clients N --rate R] (with --clients 1 --rate 1e9: the lease path alone)

import { startRedis } from '../../test/helpers/redis.js'
import { RateLimiter } from '../../dist/rpc/ratelimit.js'
import { SharedRateLimiter } from '../../dist/rpc/shared-ratelimit.js'
import { RedisBucketStore } from '../../dist/shared/redis-buckets.js'

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`)
  return i < 0 ? fallback : Number(process.argv[i + 1])
}
const CALLS = arg('calls', 400_000)
const CLIENTS = arg('clients', 1000)
// --rate: per client; the default keeps 1,000 clients just within budget at one round of calls per 10 ms
const RATE = arg('rate', 100)
const policy = { rate: RATE, burst: 2 * RATE }
const subjects = Array.from({ length: CLIENTS }, (_, i) => ({ clientIp: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` }))

/** Calls in rounds of one call per client; a round a client never exceeds its burst before its bucket refills. */
async function run(limiter, calls) {
  let refused = 0
  let trips = 0
  limiter.on?.({ roundTrip: () => trips++ })
  const cpu = process.cpuUsage()
  const started = performance.now()
  // at most RATE calls per client per second: a round (one call per client) takes >= 1/RATE s
  let roundStarted = performance.now()
  for (let i = 0; i < calls; i++) {
    let wait = limiter.take(subjects[i % CLIENTS], 1)
    if (wait instanceof Promise) wait = await wait
    if (wait !== 0) refused++
    if (i % CLIENTS === CLIENTS - 1) {
      const left = (1000 / RATE) * 1.05 - (performance.now() - roundStarted)
      if (left > 0) await new Promise((r) => setTimeout(r, left))
      roundStarted = performance.now()
    }
  }
  const used = process.cpuUsage(cpu)
  return { cpuUsPerCall: (used.user + used.system) / calls, wallS: (performance.now() - started) / 1000, refused, trips }
}

const redis = await startRedis()
try {
  const local = await run(new RateLimiter({ policy }), CALLS)
  const shared = new SharedRateLimiter({ policy, store: new RedisBucketStore(redis.url), nodes: 1 })
  await shared.start()
  const viaRedis = await run(shared, CALLS)
  await shared.close()
  const fmt = (r) => `${r.cpuUsPerCall.toFixed(3)} us CPU/call, ${r.trips} round trips, ${r.refused} refused, ${r.wallS.toFixed(1)} s`
  console.log(`rate limiter, ${CALLS} cheap reads from ${CLIENTS} clients (${RATE}/s, burst ${2 * RATE} each):`)
  console.log(`  local      ${fmt(local)}`)
  console.log(`  Redis      ${fmt(viaRedis)}`)
  console.log(`  difference ${(viaRedis.cpuUsPerCall - local.cpuUsPerCall).toFixed(3)} us CPU per call`)
} finally {
  await redis.close()
}
