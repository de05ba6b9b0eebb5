// The explorer's indexes on a replica: the block stream carries each transaction's call frames, so a
// replica's address history, creators and sender/nonce lookups answer exactly as the producer's,
// including the appearances only execution shows (value three calls deep, a selfdestruct's
// beneficiary, a contract a factory created); with --replica-verify execute the replica runs each block
// and refuses frames that are not what it ran. A real nats-server, a producer and a replica.

import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { startNats } from '../helpers/nats.js'
import { startProducer, startReplica, waitForHead, writeGenesis } from '../helpers/replication.js'
import { rpcResult } from '../helpers/rpc.js'
import { BENEFICIARY, HISTORY, RELAY_SINK, buildExplorerChain, keelSeal } from './explorer-chain.js'

let nats
let producer
let replica
let chain

before(async () => {
  nats = await startNats()
  const genesis = writeGenesis()
  producer = await startProducer(nats, genesis, { blockTime: 1 })
  // the replica also runs every block itself and checks the producer's frames against its own
  replica = await startReplica(nats, producer, { args: ['--replica-verify', 'execute'] })
  chain = await buildExplorerChain(producer.url, keelSeal(producer.url))
  await waitForHead(replica.url, BigInt(await rpcResult(producer.url, 'eth_blockNumber', [])))
})

after(async () => {
  await replica?.stop()
  await producer?.stop()
  await nats?.close()
})

test('a replica answers every index read as the producer does', async () => {
  const both = async (method, params) => {
    const [p, r] = await Promise.all([rpcResult(producer.url, method, params), rpcResult(replica.url, method, params)])
    assert.deepEqual(r, p, `${method} ${JSON.stringify(params)}`)
    return p
  }
  const first = await both('ots_searchTransactionsBefore', [HISTORY, 0, 25])
  assert.equal(first.txs.length, 32)
  await both('ots_searchTransactionsBefore', [HISTORY, Number(first.receipts.at(-1).blockNumber), 25])
  await both('ots_searchTransactionsAfter', [HISTORY, 0, 25])
  // found only through the frames the producer recorded
  assert.deepEqual((await both('ots_searchTransactionsBefore', [RELAY_SINK, 0, 25])).txs.map((t) => t.hash), [chain.tx.relayed])
  assert.deepEqual((await both('ots_searchTransactionsBefore', [BENEFICIARY, 0, 25])).txs.map((t) => t.hash), [chain.tx.makeAndKill])
  assert.deepEqual((await both('ots_searchTransactionsAfter', [chain.killed, 0, 25])).txs.map((t) => t.hash), [chain.tx.makeAndKill])
  assert.deepEqual(await both('ots_getContractCreator', [chain.kept]), { hash: chain.tx.make, creator: chain.factory })
  assert.equal(await both('ots_getTransactionBySenderAndNonce', [chain.alice, 2]), chain.tx.relayed)
  await both('ots_getBlockDetails', [chain.bigBlock.block])
  await both('ots_getInternalOperations', [chain.tx.makeAndKill])
})
