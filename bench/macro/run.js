// Keel vs anvil on the same machine with the same load generator and scenarios. Both nodes run side by
// side and each scenario runs on Keel and right after on anvil: the shared host's speed drifts over
// minutes, so each ratio compares the same minute (the idle node meanwhile only seals empty blocks).

import { existsSync } from 'node:fs'
import { cpuMicros, peakRssMiB, resetPeakRss, startAnvil, startKeel } from './nodes.js'
import { BALANCE_BATCH, SENDERS, cannon, prepare, repeatedBalanceOfCall, req, rpc, signTransfers, submitTransfers, transfers, uniqueBalanceOfCalls, uniqueCallsUnderLongCalls, uniqueTransferEstimates, wsRoundTrips } from './scenarios.js'
import { devWallet } from '../lib/dev-wallets.js'
import { largeAnswers } from '../lib/large-answers.js'

async function wsScenario(node, duration) {
  const shared = new URL('./ws.js', import.meta.url)
  if (existsSync(shared)) {
    const mod = await import(shared.href)
    if (typeof mod.chainIdRoundTrips === 'function') {
      const r = await mod.chainIdRoundTrips(node.wsUrl, { durationMs: duration * 1000 })
      return { value: r.perSecond, unit: 'req/s', calls: r.requests, errors: r.errors }
    }
  }
  return wsRoundTrips(node.wsUrl, duration)
}

/** newHeads to 1,000 WebSocket subscribers: p99 of each notification's lag behind the first one of its block. */
async function newHeadsScenario(node, quick) {
  const { newHeadsDelivery } = await import(new URL('./ws.js', import.meta.url).href)
  const r = await newHeadsDelivery(node.wsUrl, { subscribers: 1000, blocks: quick ? 3 : 8 })
  return { value: r.latencyMs.p99, unit: 'ms', calls: r.latencyMs.samples, errors: r.missed, lowerIsBetter: true }
}

/**
 * Set-up (not measured) of the whole-chain eth_getLogs: token transfers until the chain holds `atLeast`
 * Transfer logs (the ERC20 run above mined most of them, or none when --only left it out); the answer is
 * checked once.
 */
const tokenLogsAtLeast = (atLeast) => async (node, ctx) => {
  const missing = atLeast - ctx.tokenLogs
  if (missing > 0) await transfers(node, ctx, 'erc20', Math.ceil(missing / SENDERS))
  checkTokenLogs(ctx, await rpc(node.url, 'eth_getLogs', [{ fromBlock: '0x0', toBlock: 'latest', address: ctx.token }]))
}

/** A whole-chain eth_getLogs result: every one of the token's Transfer logs, nothing else. */
function checkTokenLogs(ctx, logs) {
  if (logs.length !== ctx.tokenLogs) throw new Error(`eth_getLogs returned ${logs.length} of the token's ${ctx.tokenLogs} logs`)
  if (logs.some((log) => log.address.toLowerCase() !== ctx.token.toLowerCase())) throw new Error('eth_getLogs returned another address\'s log')
}

/** The same, of a whole JSON-RPC answer (the large-answers load's first). */
const tokenLogsAnswer = (ctx) => (answer) => {
  if (!Array.isArray(answer.result)) throw new Error(`eth_getLogs: ${JSON.stringify(answer.error ?? answer).slice(0, 200)}`)
  checkTokenLogs(ctx, answer.result)
}

/** Set-up (not measured) of the scenarios that read what the transfer scenarios mined, for when --only left those out. */
const minedFirst = (perSender) => async (node, ctx) => {
  if (ctx.mined.hashes.length === 0) await transfers(node, ctx, 'native', perSender)
}

function scenarios(quick) {
  const d = quick ? 3 : 10
  const per = quick ? 10 : 40
  const addr = devWallet(1).address
  return [
    ['eth_chainId', (n) => cannon(n.url, { body: req('eth_chainId', []), duration: d })],
    ['eth_blockNumber', (n) => cannon(n.url, { body: req('eth_blockNumber', []), duration: d })],
    ['eth_getBalance', (n) => cannon(n.url, { body: req('eth_getBalance', [addr, 'latest']), duration: d })],
    ['eth_call balanceOf (unique)', (n, c) => cannon(n.url, { bodies: uniqueBalanceOfCalls(c), duration: d })],
    ['eth_call balanceOf (repeated)', (n, c) => cannon(n.url, { body: repeatedBalanceOfCall(c), duration: d })],
    // 50,000 distinct requests (the amount varies), so that no estimate is answered from the result cache
    ['eth_estimateGas ERC20 transfer (unique)', (n, c) => cannon(n.url, { bodies: uniqueTransferEstimates(c), duration: d })],
    ['batch of 100 eth_getBalance', (n) => cannon(n.url, { body: BALANCE_BATCH, duration: d, connections: 8 })],
    // native transfers run twice: the first run includes what a node pays once (Keel: V8 compiling the
    // intake and block-building paths), the second shows it warm, as a node that has been up a while. (ERC20
    // transfers run once: a second run would double the token's logs that eth_getLogs returns below.)
    ['native transfers, 64 senders, all mined', (n, c) => transfers(n, c, 'native', per)],
    ['native transfers, 64 senders, all mined (second run)', (n, c) => transfers(n, c, 'native', per)],
    ['ERC20 transfers, 64 senders, all mined', (n, c) => transfers(n, c, 'erc20', per)],
    // the hot read paths a wallet polls and an indexer walks, over what the transfer runs above mined
    ['eth_getTransactionReceipt (mined transfers)', (n, c) => cannon(n.url, { bodies: c.mined.hashes.map((h) => req('eth_getTransactionReceipt', [h])), duration: d }), minedFirst(per)],
    // each node's own blocks: their sizes follow its gas limit (Keel's 150M, anvil's 30M), hence the detail
    ['eth_getBlockByNumber with transactions (blocks of the transfers)', async (n, c) => ({ ...(await cannon(n.url, { bodies: [...c.mined.blocks].map((b) => req('eth_getBlockByNumber', [b, true])), duration: d, connections: 8 })), detail: `${Math.round(c.mined.hashes.length / c.mined.blocks.size)} transactions a block` }), minedFirst(per)],
    // answers of 3,200+ logs (~2 MB; 700+ with --quick, which the quick ERC20 run already mined)
    ['eth_getLogs whole chain (token)', async (n, c) => ({ ...(await largeAnswers(n.url, { body: req('eth_getLogs', [{ fromBlock: '0x0', toBlock: 'latest', address: c.token }]), duration: d, connections: 8, check: tokenLogsAnswer(c) })), detail: `${c.tokenLogs} logs an answer` }), tokenLogsAtLeast(quick ? 700 : 3200)],
    ['WS eth_chainId round trips', (n) => wsScenario(n, d)],
    // one bad block sets a round's p99 on a shared 2-core host: rounds alternate between the nodes, and
    // each node's row is its median round (every round is logged)
    ['WS newHeads delivery p99, 1000 subscribers (lower is better)', (n) => newHeadsScenario(n, quick), undefined, quick ? 1 : 3],
  ]
}

/**
 * Run after the peak RSS of the scenarios above is read (it is the target's), since they make a node
 * start threads for a while (Keel: the burst worker), and last, since a node may still run the long calls
 * it took in (Keel: a client's lane).
 */
function abuseScenarios(quick) {
  const d = quick ? 3 : 10
  return [['eth_call balanceOf (unique) while another client keeps 4 long calls running', (n, c) => uniqueCallsUnderLongCalls(n, c, d)]]
}

/** A sustained run: each sender's transfers, and how many of them it may hold unmined (64 x 64 stay under Keel's pool of 5,120). */
const SUSTAINED_PER_SENDER = 400
const SUSTAINED_UNMINED = 64

/**
 * The rate of mined transfers a node sustains (full runs only): 64 senders x 400, each holding at most 64
 * unmined, every receipt checked, as `tx-costs.js --per-sender 400 --unmined-per-sender 64`. The rows of 40
 * a sender above end at the first block after their last submission, a random phase of the 1-s slot;
 * 25,600 transfers take 10 s or more, where the cores (Keel) or the blocks' gas limit (anvil's 30M) set
 * the rate. Signing is the setup, not timed. Run last: a node's heap stays grown after 25,600 transfers
 * (their own peak RSS row, below), and their logs would change what eth_getLogs above returns.
 */
function sustainedScenarios(quick) {
  if (quick) return []
  return ['native', 'erc20'].map((kind) => [
    `${kind === 'native' ? 'native' : 'ERC20'} transfers, sustained: 64 senders × ${SUSTAINED_PER_SENDER}, at most ${SUSTAINED_UNMINED} unmined each`,
    (n, c) => submitTransfers(n, c, kind, c.sustained, SUSTAINED_UNMINED),
    async (n, c) => {
      c.sustained = await signTransfers(n, c, kind, SUSTAINED_PER_SENDER)
    },
  ])
}

/**
 * Waits (up to `maxMs`, 3 s by default) until the node is nearly idle: requests the load generator
 * abandoned at the end of a scenario (anvil takes ~0.1-0.2 s of CPU for one full block of the transfers)
 * would otherwise run on into the next measurement, of either node.
 */
async function settle(node, maxMs = 3000) {
  for (let i = 0; i < maxMs / 200; i++) {
    const before = cpuMicros(node.pid)
    await new Promise((resolve) => setTimeout(resolve, 200))
    if (cpuMicros(node.pid) - before < 20_000) return
  }
}

async function measureOne(node, name, fn, ctx, log, setup) {
  if (setup !== undefined) await setup(node, ctx)
  const cpu0 = cpuMicros(node.pid)
  let r
  try {
    r = await fn(node, ctx)
  } catch (err) {
    r = { value: NaN, unit: '', calls: 0, errors: 1, failure: err.message }
  }
  r.cpuPerCall = r.calls > 0 ? (cpuMicros(node.pid) - cpu0) / r.calls : NaN
  await settle(node)
  log(`  ${node.name} ${name}: ${r.value} ${r.unit}, ${r.errors} errors, ${r.cpuPerCall.toFixed(1)} µs CPU/call${r.detail ? `, ${r.detail}` : ''}${r.failure ? ` (${r.failure})` : ''}`)
  return r
}

/** The round with the median value; the errors of every round count. */
function medianRound(rounds) {
  if (rounds.length === 1) return rounds[0]
  const sorted = rounds.slice().sort((a, b) => (Number.isNaN(a.value) ? 1 : Number.isNaN(b.value) ? -1 : a.value - b.value))
  const median = sorted[Math.floor(sorted.length / 2)]
  return { ...median, errors: rounds.reduce((sum, r) => sum + r.errors, 0), detail: `median of ${rounds.length} rounds: ${rounds.map((r) => r.value).join(' / ')}` }
}

export async function runMacro({ quick, only, log = console.log }) {
  const results = { keel: {}, anvil: {} }
  const nodes = []
  try {
    for (const start of [startKeel, startAnvil]) {
      const node = await start()
      log(`${node.name} on ${node.url} (pid ${node.pid})`)
      nodes.push(node)
    }
    const contexts = []
    for (const node of nodes) contexts.push(await prepare(node, quick))
    // what a node does once after start (Keel's warm-up) is not counted in the first scenario's CPU per call
    for (const node of nodes) await settle(node)
    const wanted = (name) => only === undefined || only.toLowerCase().split('|').some((part) => name.toLowerCase().includes(part))
    const runAll = async (list) => {
      for (const [name, fn, setup, rounds = 1] of list) {
        if (!wanted(name)) continue
        const byNode = nodes.map(() => [])
        for (let round = 1; round <= rounds; round++) {
          const label = rounds === 1 ? name : `${name}, round ${round} of ${rounds}`
          for (let i = 0; i < nodes.length; i++) byNode[i].push(await measureOne(nodes[i], label, fn, contexts[i], log, setup))
        }
        for (let i = 0; i < nodes.length; i++) {
          const r = (results[nodes[i].name][name] = medianRound(byNode[i]))
          if (rounds > 1) log(`  ${nodes[i].name} ${name}: ${r.value} ${r.unit}, ${r.errors} errors, ${r.detail}`)
        }
      }
    }
    await runAll(scenarios(quick))
    const peakRss = nodes.map((node) => peakRssMiB(node.pid))
    await runAll(abuseScenarios(quick))
    const peakRssLongCalls = nodes.map((node) => peakRssMiB(node.pid))
    let peakRssSustained
    const sustained = sustainedScenarios(quick).filter(([name]) => wanted(name))
    if (sustained.length > 0) {
      // the long calls may still run in Keel's lane for a client that has gone
      for (const node of nodes) await settle(node, 20_000)
      for (const node of nodes) resetPeakRss(node.pid)
      await runAll(sustained)
      peakRssSustained = nodes.map((node) => peakRssMiB(node.pid))
    }
    for (let i = 0; i < nodes.length; i++) {
      const node = nodes[i]
      // one node starts at a time, before any load: lower is better
      results[node.name]['start to first answer (lower is better)'] = { value: Math.round(node.startMs), unit: 'ms', errors: 0 }
      results[node.name]['peak RSS'] = { value: peakRss[i], unit: 'MiB', errors: 0 }
      results[node.name]['peak RSS with the long calls'] = { value: peakRssLongCalls[i], unit: 'MiB', errors: 0 }
      // from the RSS the runs before left (VmHWM reset) to the sustained transfers' peak
      if (peakRssSustained !== undefined) results[node.name]['peak RSS in the sustained transfers'] = { value: peakRssSustained[i], unit: 'MiB', errors: 0 }
      results[node.name]['blocks'] = { value: Number(await rpc(node.url, 'eth_blockNumber')), unit: '', errors: 0 }
    }
  } finally {
    for (const node of nodes.reverse()) await node.stop()
  }
  const rows = []
  for (const name of Object.keys(results.keel)) {
    const k = results.keel[name]
    const a = results.anvil[name] ?? {}
    rows.push({
      scenario: name,
      keel: `${k.value} ${k.unit}`.trim(),
      anvil: `${a.value} ${a.unit ?? ''}`.trim(),
      'keel/anvil': Number.isFinite(k.value / a.value) ? Number((k.value / a.value).toFixed(2)) : '-',
      'CPU µs/call keel': Number.isFinite(k.cpuPerCall) ? Number(k.cpuPerCall.toFixed(1)) : '-',
      'CPU µs/call anvil': Number.isFinite(a.cpuPerCall) ? Number(a.cpuPerCall.toFixed(1)) : '-',
      'errors keel/anvil': `${k.errors}/${a.errors ?? '-'}`,
    })
  }
  // errors from Keel fail the run; anvil's are shown (it is the reference, not the subject)
  const failed = Object.values(results.keel).some((r) => r.errors > 0)
  return { rows, failed }
}
