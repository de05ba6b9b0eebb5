// A producer and its replicas for the replication tests: one genesis file both read, the producer
// publishing to a real nats-server, replicas following it, and a comparison of what each node answers.

import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { devGenesis } from '../../dist/chain/genesis.js'
import { CHAIN_ID, startNode } from './node.js'
import { rpcBatch, rpcResult, sleep } from './rpc.js'

/** The --dev genesis (the test accounts funded), written once so that producer and replicas share it. */
export function writeGenesis() {
  const dir = mkdtempSync(join(tmpdir(), 'keel-genesis-'))
  const file = join(dir, 'genesis.json')
  writeFileSync(file, JSON.stringify(devGenesis(CHAIN_ID)))
  return file
}

export function startProducer(nats, genesis, { blockTime = 0, args = [], dataDir } = {}) {
  // no rate limit: the comparisons read every height of the chain at once
  return startNode({ dev: false, blockTime, dataDir, args: ['--genesis', genesis, '--stream-url', nats.url, '--rate-limit', '0', ...args] })
}

/** A replica that starts from the producer's snapshot, or from `genesis` when given. */
export function startReplica(nats, producer, { genesis, args = [], dataDir, readyTimeoutMs } = {}) {
  return startNode({
    dev: false,
    blockTime: 1,
    dataDir,
    readyTimeoutMs,
    args: [
      '--replica', '--stream-url', nats.url, '--producer-url', producer.url, '--rate-limit', '0',
      ...(genesis === undefined ? [] : ['--genesis', genesis]),
      ...args,
    ],
  })
}

/** Waits until `node` has block `number` (replication is asynchronous; a replica restarting on a snapshot refuses connections a while). */
export async function waitForHead(url, number, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs
  let head = -1n
  while (Date.now() < deadline) {
    const answer = await rpcResult(url, 'eth_blockNumber', []).catch((err) => {
      if (err.cause?.code === 'ECONNREFUSED') return undefined
      throw err
    })
    if (answer !== undefined) head = BigInt(answer)
    if (head >= BigInt(number)) return head
    await sleep(50)
  }
  throw new Error(`${url} did not reach block ${number} within ${timeoutMs} ms (head ${head})`)
}

/** GET /ready: [HTTP status, parsed body]. */
export async function ready(url) {
  const res = await fetch(`${url}/ready`)
  return [res.status, await res.json()]
}

/**
 * Every block 0..head and what it holds answer the same on `replica` as on `producer`: the block with
 * its transactions, its receipts, and at every height the balances, nonces and proofs of `addresses`
 * and the code and first storage slots of `contracts`.
 */
export async function assertSameChain(producer, replica, { addresses = [], contracts = [] } = {}) {
  const head = BigInt(await rpcResult(producer.url, 'eth_blockNumber', []))
  try {
    await waitForHead(replica.url, head)
  } catch (err) {
    err.message += `\n--- replica log ---\n${replica.stderr().slice(-4000)}\n--- producer log ---\n${producer.stderr().slice(-4000)}`
    throw err
  }
  for (let n = 0n; n <= head; n++) {
    const tag = `0x${n.toString(16)}`
    const calls = [
      ['eth_getBlockByNumber', [tag, true]],
      ['eth_getBlockReceipts', [tag]],
      ...addresses.flatMap((a) => [
        ['eth_getBalance', [a, tag]],
        ['eth_getTransactionCount', [a, tag]],
        ['eth_getProof', [a, [], tag]],
      ]),
      ...contracts.flatMap((c) => [
        ['eth_getCode', [c, tag]],
        ['eth_getStorageAt', [c, '0x0', tag]],
        ['eth_getStorageAt', [c, '0x2', tag]],
        ['eth_getProof', [c, ['0x0', '0x2'], tag]],
      ]),
    ]
    const [expected, got] = await Promise.all([rpcBatch(producer.url, calls), rpcBatch(replica.url, calls)])
    for (let i = 0; i < calls.length; i++) {
      assert.deepEqual(got[i], expected[i], `block ${n}: ${calls[i][0]}(${JSON.stringify(calls[i][1])}) differs on the replica`)
    }
  }
  return head
}
