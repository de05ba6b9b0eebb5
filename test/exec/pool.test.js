// The call pool: runaway calls are stopped and their worker recycled without hurting other calls,
// calls waiting together travel as one piscina task, the queue is bounded.

import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { hexToBytes } from '@ethereumjs/util'
import { Interface } from 'ethers'
import { ExecPool, defaultCallWorkers } from '../../dist/exec/pool.js'
import { goDuration } from '../../dist/util/go-duration.js'
import { compile } from '../helpers/contracts.js'
import { deploy, openTempChain } from '../../bench/lib/temp-chain.js'

// JUMPDEST PUSH1 32 PUSH1 0 KECCAK256 POP PUSH1 0 JUMP: ~1.3 s before it runs out of 2^24 gas
const LOOP_CODE = hexToBytes('0x5b6020600020505b600056')
const LOOPER = '0x00000000000000000000000000000000000100f1'

let chain
let token
const tokenAbi = new Interface(compile().Token.abi)

function balanceTask(who) {
  return { kind: 'call', block: chain.headExecBlock(), args: { to: token, data: hexToBytes(tokenAbi.encodeFunctionData('balanceOf', [who])) } }
}
function loopTask() {
  return { kind: 'call', block: chain.headExecBlock(), args: { to: LOOPER }, stateOverrides: { [LOOPER]: { code: LOOP_CODE } } }
}
function openPool(opts = {}, timeoutMs = 1000, gasCap = 50_000_000n) {
  return new ExecPool({ dataDir: chain.dir, genesis: chain.genesis, limits: { gasCap, timeoutMs } }, { workers: 1, ...opts })
}
/** Limits under which the loop runs until it is out of gas, several seconds here: ample time for a burst worker to start. */
const LONG_CALL_LIMITS = [60_000, 150_000_000n]

before(async () => {
  chain = await openTempChain()
  token = await deploy(chain, compile().Token.bytecode)
})

after(async () => {
  await chain?.close()
})

test('geth prints its timeout as a Go duration', () => {
  assert.equal(goDuration(5000), '5s')
  assert.equal(goDuration(300), '300ms')
  assert.equal(goDuration(1500), '1.5s')
  assert.equal(goDuration(90_000), '1m30s')
})

test('the default pool leaves a core to the main thread, and has at least one worker', () => {
  assert.equal(defaultCallWorkers(1), 1)
  assert.equal(defaultCallWorkers(2), 1)
  assert.equal(defaultCallWorkers(8), 7)
})

describe('a runaway call', () => {
  let pool
  before(() => {
    pool = openPool({ workers: 2 }, 500)
  })
  after(async () => {
    await pool.close()
  })

  test('is stopped with geth\'s timeout error while concurrent calls answer', async () => {
    const alice = chain.dev[0].address
    await Promise.all(Array.from({ length: 4 }, () => pool.run(balanceTask(alice)))) // workers warm
    const started = Date.now()
    const runaway = pool.run(loopTask())
    runaway.catch(() => {})
    const normal = Array.from({ length: 20 }, () => pool.run(balanceTask(alice)))
    const results = await Promise.all(normal)
    for (const r of results) assert.equal(r.ok && BigInt(r.returnData), 1_000_000n * 10n ** 18n)
    await assert.rejects(runaway, (err) => {
      assert.equal(err.code, -32000)
      assert.equal(err.message, 'execution aborted (timeout = 500ms)')
      return true
    })
    assert.ok(Date.now() - started < 5000, 'stopped near its limit, not when it ran out of gas')
    assert.equal(pool.stats.timeouts >= 1, true)
    // the pool still works (the worker was replaced)
    const again = await pool.run(balanceTask(alice))
    assert.equal(again.ok, true)
  })

  test('inside a batch: only the runaway call fails, its batch-mates are re-run and answer', async () => {
    const alice = chain.dev[0].address
    const tasks = [balanceTask(alice), loopTask(), balanceTask(alice), balanceTask(alice)]
    const settled = await Promise.allSettled(tasks.map((t) => pool.run(t)))
    assert.equal(settled[1].status, 'rejected')
    assert.match(settled[1].reason.message, /^execution aborted \(timeout = 500ms\)$/)
    for (const i of [0, 2, 3]) assert.equal(settled[i].status === 'fulfilled' && settled[i].value.ok, true)
  })
})

test('a task waiting in the worker of a runaway call is run again on its replacement and answers', async () => {
  // no burst worker: the waiting task stays in the runaway's worker until the watchdog terminates it
  const pool = openPool({ workers: 1, burstWorkers: 0 }, 500)
  try {
    const alice = chain.dev[0].address
    await pool.run(balanceTask(alice)) // worker warm
    const runaway = pool.run(loopTask())
    runaway.catch(() => {})
    await new Promise((resolve) => setImmediate(resolve)) // the runaway's task is dispatched alone
    const tasksBefore = pool.stats.piscinaTasks
    const behind = Array.from({ length: 5 }, () => pool.run(balanceTask(alice)))
    await new Promise((resolve) => setImmediate(resolve))
    assert.equal(pool.stats.piscinaTasks, tasksBefore + 1, 'the second task went to the busy worker')
    const results = await Promise.all(behind)
    for (const r of results) assert.equal(r.ok && BigInt(r.returnData), 1_000_000n * 10n ** 18n)
    await assert.rejects(runaway, { code: -32000, message: 'execution aborted (timeout = 500ms)' })
    assert.equal(pool.stats.timeouts, 1)
    assert.equal((await pool.run(balanceTask(alice))).ok, true, 'the replacement worker answers')
  } finally {
    await pool.close()
  }
})

/**
 * A pool of one warm worker (and the default burst worker) running a call that loops until it is out of
 * gas (LONG_CALL_LIMITS). `ended()`: whether that call has answered.
 */
async function poolWithLongCall() {
  const pool = openPool({ workers: 1 }, ...LONG_CALL_LIMITS)
  await pool.run(balanceTask(chain.dev[0].address))
  return { pool, ...startLongCall(pool) }
}

/** Starts the call that loops until it is out of gas (for `client`). `ended()`: whether it has answered. */
function startLongCall(pool, client = '') {
  let done = false
  const long = pool.run(loopTask(), client).finally(() => {
    done = true
  })
  return { long, ended: () => done }
}

/** `n` balanceOf calls; each answer notes whether the long call had ended by then. */
function balanceCalls(pool, n, ended) {
  return Array.from({ length: n }, () => pool.run(balanceTask(chain.dev[0].address)).then((r) => ({ r, longDone: ended() })))
}

/** The answer is the holder's balance. */
function assertHolderBalance(r) {
  assert.equal(r.ok && BigInt(r.returnData), 1_000_000n * 10n ** 18n)
}

/** Every answer is the holder's balance, given while the long call still ran. */
async function assertAnsweredFirst(answers, what) {
  for (const { r, longDone } of await Promise.all(answers)) {
    assertHolderBalance(r)
    assert.equal(longDone, false, `${what} was answered only after the long call`)
  }
}

test('calls waiting behind a long call move to a burst worker and answer while it still runs', async () => {
  const { pool, long, ended } = await poolWithLongCall()
  try {
    const alice = chain.dev[0].address
    await new Promise((resolve) => setImmediate(resolve)) // the long call's task is dispatched alone
    const tasksBefore = pool.stats.piscinaTasks
    const behind = balanceCalls(pool, 5, ended)
    await new Promise((resolve) => setImmediate(resolve))
    assert.equal(pool.stats.piscinaTasks, tasksBefore + 1, 'the second task went to the busy worker')
    await assertAnsweredFirst(behind, 'a call waiting behind the long one')
    assert.equal(pool.stats.bursts, 1)
    assert.equal(pool.stats.workers, 2, 'the burst worker lives on while it is not idle for long')
    const outcome = await long
    assert.equal(outcome.ok, false)
    assert.equal(outcome.error.message, 'out of gas', 'the long call ran to its end on its own worker')
    assert.equal(pool.stats.timeouts, 0)
    assert.equal((await pool.run(balanceTask(alice))).ok, true)
  } finally {
    await pool.close()
  }
})

test('calls that share a piscina task with a long call, after it, move to the burst worker too', async () => {
  const pool = openPool({ workers: 1 }, ...LONG_CALL_LIMITS)
  try {
    const alice = chain.dev[0].address
    await pool.run(balanceTask(alice))
    const tasksBefore = pool.stats.piscinaTasks
    // submitted in one turn: they travel as two tasks, the long call first in the first one
    const { long, ended } = startLongCall(pool)
    const after = balanceCalls(pool, 5, ended)
    await new Promise((resolve) => setImmediate(resolve))
    assert.equal(pool.stats.piscinaTasks, tasksBefore + 2, 'the six calls went out as two piscina tasks')
    await assertAnsweredFirst(after, 'a call of the long call\'s own task')
    assert.equal((await long).error.message, 'out of gas')
    assert.equal(pool.stats.calls, 7, 'each call counted once')
  } finally {
    await pool.close()
  }
})

test('a call its task ran before a long call is answered without waiting for it', async () => {
  const pool = openPool({ workers: 1, maxBatch: 64 }, ...LONG_CALL_LIMITS)
  try {
    const alice = chain.dev[0].address
    await pool.run(balanceTask(alice))
    // a short loop keeps the worker busy while the next calls queue up: they go out as one task
    const busy = pool.run({ ...loopTask(), args: { to: LOOPER, gas: 500_000n } })
    await new Promise((resolve) => setImmediate(resolve))
    let ended = () => false
    const before = balanceCalls(pool, 1, () => ended())
    const started = startLongCall(pool)
    ended = started.ended
    const after = balanceCalls(pool, 3, ended)
    const tasksBefore = pool.stats.piscinaTasks
    await new Promise((resolve) => setImmediate(resolve))
    assert.equal(pool.stats.piscinaTasks, tasksBefore + 1, 'the five calls went out as one piscina task')
    await busy
    await assertAnsweredFirst([...before, ...after], 'a call of the long call\'s task')
    assert.equal((await started.long).error.message, 'out of gas')
    assert.equal(pool.stats.calls, 7, 'each call counted once')
  } finally {
    await pool.close()
  }
})

test('while a call runs long, waves of calls keep answering on the burst worker', async () => {
  const { pool, long, ended } = await poolWithLongCall()
  try {
    await new Promise((resolve) => setTimeout(resolve, 300)) // long by now
    // waves of calls, each from several clients at once: a task handed to the long call's worker would
    // wait for it
    for (let wave = 0; wave < 8 && !ended(); wave++) {
      await assertAnsweredFirst(balanceCalls(pool, 6, ended), `a call of wave ${wave}`)
    }
    assert.equal(ended(), false, 'the long call ended before the waves did: nothing was tested')
    assert.equal((await long).error.message, 'out of gas')
  } finally {
    await pool.close()
  }
})

test('a client whose call runs long gets a lane: its calls run one task at a time, and everyone else keeps a thread', async () => {
  const pool = openPool({ workers: 1 }, ...LONG_CALL_LIMITS)
  try {
    await pool.run(balanceTask(chain.dev[0].address))
    // three loops of ~1-2 s each from one client, sent at once (they travel as one task)
    let ended = 0
    const startedAt = Date.now()
    const endedAt = []
    const heavy = Array.from({ length: 3 }, () =>
      pool.run({ ...loopTask(), args: { to: LOOPER, gas: 25_000_000n } }, '198.51.100.7').finally(() => {
        ended++
        endedAt.push(Date.now())
      }))
    await new Promise((resolve) => setTimeout(resolve, 400)) // its first call runs long by now, and the watchdog has seen it
    assert.equal(pool.stats.heavyClients, 1)
    // without the lane, the client's second call would take the burst worker and these would wait
    await assertAnsweredFirst(balanceCalls(pool, 6, () => ended > 0), 'another client\'s call')
    // between the waves only the client's calls run: on one worker at a time (without the lane, on both).
    // Each wave is timed: the client's last call may end while a wave is out, so "answered before it
    // ended" cannot tell a wave held up by it from one answered at once; a held-up wave waits for a long call.
    let busiest = 0
    const waves = []
    for (let wave = 0; wave < 300 && ended < 3; wave++) {
      const sentAt = Date.now()
      for (const { r } of await Promise.all(balanceCalls(pool, 6, () => false))) assertHolderBalance(r)
      waves.push(Date.now() - sentAt)
      await new Promise((resolve) => setTimeout(resolve, 50))
      busiest = Math.max(busiest, pool.stats.running)
    }
    assert.equal(ended, 3, 'the waves ended before the client\'s calls did')
    const first = endedAt[0] - startedAt
    assert.ok(waves.length >= 5, `only ${waves.length} waves ran`)
    assert.ok(Math.max(...waves) < first / 2, `a wave of calls waited ${Math.max(...waves)} ms (a long call took ${first} ms)`)
    assert.equal(busiest, 1, 'the client\'s calls ran on two workers at once')
    for (const outcome of await Promise.all(heavy)) assert.equal(outcome.error.message, 'out of gas')
    assert.equal(pool.stats.timeouts, 0)
  } finally {
    await pool.close()
  }
})

test('a call waiting in its client\'s lane leaves it when another client waits for the same call', async () => {
  const pool = openPool({ workers: 1 }, ...LONG_CALL_LIMITS)
  try {
    const heavyClient = '198.51.100.7'
    await pool.run(balanceTask(chain.dev[0].address))
    const { long, ended } = startLongCall(pool, heavyClient)
    await new Promise((resolve) => setTimeout(resolve, 400)) // long by now: the client has a lane
    assert.equal(pool.stats.heavyClients, 1)
    const running = pool.run(balanceTask(chain.dev[0].address), heavyClient)
    const answered = running.then((r) => ({ r, longDone: ended() }))
    await new Promise((resolve) => setTimeout(resolve, 100))
    assert.equal(pool.stats.queued, 1, 'the call waits in the lane')
    pool.share(running, heavyClient) // the same client: nothing changes
    assert.equal(pool.stats.queued, 1)
    pool.share(running, '198.51.100.8')
    const { r, longDone } = await answered
    assert.equal(r.ok && BigInt(r.returnData), 1_000_000n * 10n ** 18n)
    assert.equal(longDone, false, 'the shared call was answered only after the long call')
    assert.equal((await long).error.message, 'out of gas')
  } finally {
    await pool.close()
  }
})

describe('coalescing and the queue bound', () => {
  test('calls submitted together share piscina tasks', async () => {
    const pool = openPool({ workers: 1 }, 5000)
    try {
      await pool.run(balanceTask(chain.dev[0].address))
      const tasksBefore = pool.stats.piscinaTasks
      const results = await Promise.all(Array.from({ length: 100 }, (_, i) => pool.run(balanceTask(chain.dev[i % 10].address))))
      assert.equal(results.every((r) => r.ok), true)
      const used = pool.stats.piscinaTasks - tasksBefore
      assert.ok(used <= 2, `100 calls took ${used} piscina tasks`)
    } finally {
      await pool.close()
    }
  })

  test('a full queue answers -32005', async () => {
    const pool = openPool({ workers: 1, maxQueue: 10, maxBatch: 1 }, 5000)
    try {
      const settled = await Promise.allSettled(Array.from({ length: 40 }, () => pool.run(balanceTask(chain.dev[0].address))))
      const refused = settled.filter((s) => s.status === 'rejected')
      assert.ok(refused.length >= 20, `${refused.length} refused`)
      for (const r of refused) {
        assert.equal(r.reason.code, -32005)
        assert.equal(r.reason.message, 'call pool queue is full, retry later')
      }
      assert.ok(settled.some((s) => s.status === 'fulfilled' && s.value.ok))
    } finally {
      await pool.close()
    }
  })
})
