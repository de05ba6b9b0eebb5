// The scenarios both nodes run, with one load generator: autocannon for HTTP, ws for WebSocket,
// bench/lib/json-rpc.js (node:http, kept-alive connections) for the transfer runs. Each returns
// { value, unit, calls, errors }; CPU per call is measured around it by run.js.

import autocannon from 'autocannon'
import { Interface, Wallet, JsonRpcProvider } from 'ethers'
import { compile } from '../../test/helpers/contracts.js'
import { devWallet } from '../lib/dev-wallets.js'
import { rpc } from '../lib/json-rpc.js'

const CHAIN_ID = 24589n
export const SENDERS = 64
export const tokenAbi = new Interface(compile().Token.abi)

export { rpc }

async function waitReceipt(url, hash, deadline, polls = { n: 0 }) {
  while (Date.now() < deadline) {
    polls.n++
    const receipt = await rpc(url, 'eth_getTransactionReceipt', [hash])
    if (receipt) return receipt
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`no receipt for ${hash}`)
}

/** Deploys the ERC20 and funds the senders with ether and tokens; returns what scenarios need. */
export async function prepare(node, quick) {
  const deployer = devWallet(0)
  const fees = { maxFeePerGas: 50n * 10n ** 9n, maxPriorityFeePerGas: 10n ** 9n, type: 2, chainId: CHAIN_ID }
  const nonceOf = async (a) => BigInt(await rpc(node.url, 'eth_getTransactionCount', [a, 'pending']))
  let nonce = await nonceOf(deployer.address)
  const send = async (tx) => rpc(node.url, 'eth_sendRawTransaction', [await deployer.signTransaction({ ...fees, nonce: nonce++, ...tx })])
  const deployHash = await send({ data: compile().Token.bytecode, gasLimit: 3_000_000n })
  const deadline = Date.now() + 60_000
  const receipt = await waitReceipt(node.url, deployHash, deadline)
  const token = receipt.contractAddress
  const senders = Array.from({ length: SENDERS }, (_, i) => new Wallet(`0x${(0xbe00 + i).toString(16).padStart(64, '0')}`))
  const hashes = []
  for (const s of senders) {
    hashes.push(await send({ to: s.address, value: 10n ** 20n, gasLimit: 21_000n }))
    hashes.push(await send({ to: token, data: tokenAbi.encodeFunctionData('transfer', [s.address, 10n ** 21n]), gasLimit: 100_000n }))
  }
  for (const h of hashes) {
    const r = await waitReceipt(node.url, h, deadline)
    if (r.status !== '0x1') throw new Error('funding failed')
  }
  const holders = Array.from({ length: 1000 }, (_, i) => `0x${(0xa000 + i).toString(16).padStart(40, '0')}`)
  void quick
  // mined: what the transfer scenarios mined (every hash whose receipt was checked, and their blocks), for the read scenarios after them;
  // tokenLogs: the token's Transfer logs on the chain (the constructor's mint and the 64 fundings so far)
  return { token, senders, holders, fees, mined: { hashes: [], blocks: new Set() }, tokenLogs: 1 + SENDERS }
}

/**
 * autocannon against one JSON-RPC request shape; counts JSON-RPC errors from the bodies. A fixed body is
 * built into its request bytes once (a setupRequest makes autocannon rebuild every request), and bodies
 * are checked with verifyBody, not onResponse (which turns each response's raw headers into an object):
 * the load generator shares the two cores with the node under test.
 */
export async function cannon(url, { body, bodies, duration, connections = 32, pipelining = 1 }) {
  let i = 0
  const request = bodies === undefined
    ? { body }
    : {
        setupRequest: (req) => {
          req.body = bodies[i++ % bodies.length]
          return req
        },
      }
  const result = await autocannon({
    url,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    connections,
    pipelining,
    duration,
    requests: [request],
    // a JSON-RPC error comes with status 200: every answer's body is looked at (a mismatch is an error)
    verifyBody: (resBody) => !resBody.includes('"error"'),
  })
  const errors = result.mismatches + result.non2xx + result.errors + result.timeouts
  return { value: Math.round(result.requests.average), unit: 'req/s', calls: result.requests.total, errors, p99: result.latency.p99 }
}

export function req(method, params) {
  return JSON.stringify({ jsonrpc: '2.0', id: 1, method, params })
}

/** The bench's JSON-RPC batch: eth_getBalance of 100 distinct addresses at 'latest'. */
export const BALANCE_BATCH = JSON.stringify(Array.from({ length: 100 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'eth_getBalance', params: [`0x${(0xd000 + i).toString(16).padStart(40, '0')}`, 'latest'] })))

export const balanceOfData = (who) => tokenAbi.encodeFunctionData('balanceOf', [who])

/** The same eth_call balanceOf every time (a sender's balance): answered from the result cache after the first. */
export const repeatedBalanceOfCall = (ctx) => req('eth_call', [{ to: ctx.token, data: balanceOfData(ctx.senders[0].address) }, 'latest'])

/** 50,000 distinct eth_call balanceOf requests (holders first + i), none answered from the result cache. */
export const uniqueBalanceOfCalls = (ctx, first = 0) =>
  Array.from({ length: 50_000 }, (_, i) => req('eth_call', [{ to: ctx.token, data: balanceOfData(`0x${(0x10000 + first + i).toString(16).padStart(40, '0')}`) }, 'latest']))

/** A call that runs long on purpose: state-override code hashing in a loop until its gas runs out. */
const LOOPER = '0x00000000000000000000000000000000000100f1'
const LOOP_CODE = '0x5b6020600020505b600056' // JUMPDEST PUSH1 32 PUSH1 0 KECCAK256 POP PUSH1 0 JUMP
const LONG_CALL_GAS = '0x1c9c380' // 30M: anvil's cap for a call (its block gas limit)

/**
 * The unique balanceOf calls (autocannon, as above) while another client, a WebSocket from 127.0.0.2, keeps
 * `inFlight` long calls running (one sent as each answers): what a heavy or hostile client costs everyone
 * else. Errors: the load's, and long calls answered with anything but running out of gas.
 */
export async function uniqueCallsUnderLongCalls(node, ctx, duration, inFlight = 4) {
  const { default: WebSocket } = await import('ws')
  const ws = new WebSocket(node.wsUrl, { localAddress: '127.0.0.2' })
  await new Promise((resolve, reject) => {
    ws.once('open', resolve)
    ws.once('error', reject)
  })
  let sent = 0
  let answered = 0
  let longErrors = 0
  let stopping = false
  const send = () => {
    const id = sent++
    ws.send(JSON.stringify({ jsonrpc: '2.0', id, method: 'eth_call', params: [{ to: LOOPER, data: `0x${id.toString(16).padStart(8, '0')}`, gas: LONG_CALL_GAS }, 'latest', { [LOOPER]: { code: LOOP_CODE } }] }))
  }
  ws.on('message', (frame) => {
    answered++
    const text = String(frame)
    if (text.includes('"error"') && !/out ?of ?gas/i.test(text)) longErrors++
    if (!stopping && sent < 10_000) send()
  })
  for (let i = 0; i < inFlight; i++) send()
  await new Promise((resolve) => setTimeout(resolve, 500)) // the long calls are under way
  const r = await cannon(node.url, { bodies: uniqueBalanceOfCalls(ctx, 100_000), duration })
  stopping = true
  ws.terminate()
  return { ...r, errors: r.errors + longErrors, detail: `${answered} long calls answered` }
}

/** 50,000 distinct eth_estimateGas of token transfers (amounts first + 1 on), none answered from the result cache. */
export const uniqueTransferEstimates = (ctx, first = 0) =>
  Array.from({ length: 50_000 }, (_, i) => req('eth_estimateGas', [{ from: ctx.senders[i % ctx.senders.length].address, to: ctx.token, data: balanceOfData(ctx.holders[i % ctx.holders.length]).replace('0x70a08231', '0xa9059cbb') + (first + i + 1).toString(16).padStart(64, '0') }]))

/** 64 senders each submit `perSender` transfers (one in flight per sender), until all are mined. */
export async function transfers(node, ctx, kind, perSender) {
  return submitTransfers(node, ctx, kind, await signTransfers(node, ctx, kind, perSender))
}

/** Each sender's `perSender` signed transfers of `kind` (native or erc20), at its next nonces. */
export async function signTransfers(node, ctx, kind, perSender) {
  const recipient = (i) => `0x${(0xc0000 + i).toString(16).padStart(40, '0')}`
  const signed = []
  for (let s = 0; s < ctx.senders.length; s++) {
    const w = ctx.senders[s]
    let nonce = BigInt(await rpc(node.url, 'eth_getTransactionCount', [w.address, 'pending']))
    const list = []
    for (let k = 0; k < perSender; k++) {
      const to = recipient(s * perSender + k)
      const tx = kind === 'native'
        ? { to, value: 1n, gasLimit: 21_000n }
        : { to: ctx.token, data: tokenAbi.encodeFunctionData('transfer', [to, 1n]), gasLimit: 80_000n }
      list.push(await w.signTransaction({ ...ctx.fees, nonce: nonce++, ...tx }))
    }
    signed.push(list)
  }
  return signed
}

/**
 * Each sender submits its list one transaction at a time, then fetches and checks each of its receipts in
 * order (polling every 100 ms until mined), all 64 at once. The run ends with the last receipt checked.
 * `unminedPerSender` (a long run) holds each sender's next submission until the one that many before it
 * is mined and checked, so that the senders never hold more than the pool takes (5,120 by default).
 */
export async function submitTransfers(node, ctx, kind, signed, unminedPerSender = Infinity) {
  let errors = 0
  const started = Date.now()
  // on the monotonic clock V8's CPU profiles use, in µs: tx-costs.js cuts a node's profile to the run
  const window = { from: Number(process.hrtime.bigint() / 1000n), submitted: 0 }
  const deadline = Date.now() + 120_000
  // receipt reads, those that found no receipt yet included (a sender waits 100 ms between them)
  const polls = { n: 0 }
  // each eth_sendRawTransaction's round trip, ms
  const sends = new Float64Array(signed.reduce((n, list) => n + list.length, 0))
  let sent = 0
  await Promise.all(signed.map(async (list) => {
    const hashes = []
    let checked = 0
    const check = async (h) => {
      try {
        const r = await waitReceipt(node.url, h, deadline, polls)
        if (r.status !== '0x1') errors++
        else if (kind === 'erc20') ctx.tokenLogs++
        ctx.mined.hashes.push(h)
        ctx.mined.blocks.add(r.blockNumber)
      } catch {
        errors++
      }
    }
    for (const raw of list) {
      if (hashes.length - checked >= unminedPerSender) await check(hashes[checked++])
      try {
        const t = performance.now()
        hashes.push(await rpc(node.url, 'eth_sendRawTransaction', [raw]))
        sends[sent++] = performance.now() - t
      } catch {
        errors++
      }
    }
    window.submitted = Math.max(window.submitted, Number(process.hrtime.bigint() / 1000n))
    while (checked < hashes.length) await check(hashes[checked++])
  }))
  const seconds = (Date.now() - started) / 1000
  window.to = Number(process.hrtime.bigint() / 1000n)
  const total = signed.reduce((n, list) => n + list.length, 0)
  const sorted = sends.subarray(0, sent).sort()
  const sendMs = { p50: sorted[Math.floor(sent * 0.5)], p99: sorted[Math.floor(sent * 0.99)], max: sorted[sent - 1] }
  return { value: Math.round(total / seconds), unit: 'tx/s', calls: total, window, errors, receiptPolls: polls.n, sendMs }
}

/** Sequential eth_chainId round trips over `connections` WebSockets for `duration` seconds. */
export async function wsRoundTrips(wsUrl, duration, connections = 8) {
  const { default: WebSocket } = await import('ws')
  let calls = 0
  let errors = 0
  const until = Date.now() + duration * 1000
  await Promise.all(Array.from({ length: connections }, () => new Promise((resolve) => {
    const ws = new WebSocket(wsUrl)
    let id = 0
    const next = () => {
      if (Date.now() >= until || id > 5_000_000) {
        ws.close()
        return resolve()
      }
      ws.send(`{"jsonrpc":"2.0","id":${++id},"method":"eth_chainId","params":[]}`)
    }
    ws.on('open', next)
    ws.on('message', (data) => {
      if (String(data).includes('"error"')) errors++
      calls++
      next()
    })
    ws.on('error', () => {
      errors++
      resolve()
    })
  })))
  return { value: Math.round(calls / duration), unit: 'req/s', calls, errors }
}
