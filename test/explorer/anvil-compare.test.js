// The same transactions on Keel and on anvil (which implements ots_ too), compared answer by answer.
// Both chains get byte-identical transactions (explorer-chain.js), so hashes and contract addresses
// match; block numbers, timestamps and fees do not (anvil seals each group with evm_mine, Keel with its
// timer). Where anvil is right per the reference (/work/shared/reference/explorer.md, Erigon's
// semantics) the answers must be equal; every field where they differ is named below with the reason,
// and asserted as it is, so that a change on either side shows up here.

import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { after, before, test } from 'node:test'
import { anvilBin, CHAIN_ID, startNode, waitForLine } from '../helpers/node.js'
import { rpcResult } from '../helpers/rpc.js'
import { BENEFICIARY, HISTORY, RELAY_SINK, anvilSeal, buildExplorerChain, keelSeal } from './explorer-chain.js'

let keel
let anvil
let anvilUrl
let k
let a

before(async () => {
  keel = await startNode({ blockTime: 1 })
  anvil = spawn(anvilBin, ['--host', '127.0.0.1', '--port', '0', '--chain-id', String(CHAIN_ID), '--no-mining'], { stdio: ['ignore', 'pipe', 'pipe'] })
  const [, host, port] = await waitForLine(anvil, /Listening on ([\d.]+):(\d+)/, 30_000)
  anvilUrl = `http://${host}:${port}`
  ;[k, a] = await Promise.all([buildExplorerChain(keel.url, keelSeal(keel.url)), buildExplorerChain(anvilUrl, anvilSeal(anvilUrl))])
})

after(async () => {
  await keel?.stop()
  if (anvil !== undefined && anvil.exitCode === null) {
    const exited = new Promise((resolve) => anvil.once('exit', resolve))
    anvil.kill('SIGTERM')
    await exited
  }
})

const onKeel = (method, params) => rpcResult(keel.url, method, params)
const onAnvil = (method, params) => rpcResult(anvilUrl, method, params)

test('the same transactions: hashes and contract addresses match', () => {
  assert.deepEqual(k.tx, a.tx)
  for (const name of ['token', 'factory', 'relay', 'kept', 'killed']) assert.equal(k[name], a[name], name)
  assert.deepEqual([...k.history].sort(), [...a.history].sort())
})

test('equal on both: API level, revert data, historical code, sender and nonce, creators of live contracts', async () => {
  assert.equal(await onKeel('ots_getApiLevel', []), await onAnvil('ots_getApiLevel', []))
  for (const hash of [k.tx.revertReason, k.tx.revertCustom, k.tx.relayed, k.history[0]]) {
    assert.equal(await onKeel('ots_getTransactionError', [hash]), await onAnvil('ots_getTransactionError', [hash]), hash)
  }
  for (const address of [k.token, k.factory, k.kept, k.killed, k.alice]) {
    assert.equal(await onKeel('ots_hasCode', [address, 'latest']), await onAnvil('ots_hasCode', [address, 'latest']), address)
  }
  // the block before the deployments, on each chain's own numbering
  assert.equal(await onKeel('ots_hasCode', [k.token, k.deploys.block - 1]), false)
  assert.equal(await onAnvil('ots_hasCode', [a.token, a.deploys.block - 1]), false)
  for (const [sender, nonce] of [[k.deployer, 0], [k.alice, 2], [k.senders[0], 5], [k.alice, 9]]) {
    assert.equal(await onKeel('ots_getTransactionBySenderAndNonce', [sender, nonce]), await onAnvil('ots_getTransactionBySenderAndNonce', [sender, nonce]))
  }
  for (const contract of [k.token, k.kept, k.relay]) {
    assert.deepEqual(await onKeel('ots_getContractCreator', [contract]), await onAnvil('ots_getContractCreator', [contract]), contract)
  }
})

test('equal on both: address history pages (same transactions, same firstPage/lastPage), including inner-frame matches', async () => {
  const page = async (on, method, params) => {
    const r = await on(method, params)
    return { hashes: r.txs.map((t) => t.hash).sort(), firstPage: r.firstPage, lastPage: r.lastPage, receipts: r.receipts.map((x) => x.transactionHash).sort() }
  }
  assert.deepEqual(await page(onKeel, 'ots_searchTransactionsBefore', [HISTORY, 0, 25]), await page(onAnvil, 'ots_searchTransactionsBefore', [HISTORY, 0, 25]))
  assert.deepEqual(await page(onKeel, 'ots_searchTransactionsAfter', [HISTORY, 0, 25]), await page(onAnvil, 'ots_searchTransactionsAfter', [HISTORY, 0, 25]))
  for (const address of [RELAY_SINK, k.killed, k.kept, k.factory]) {
    assert.deepEqual(await page(onKeel, 'ots_searchTransactionsBefore', [address, 0, 25]), await page(onAnvil, 'ots_searchTransactionsBefore', [address, 0, 25]), address)
  }
  // DIFFERENCE: a selfdestruct's beneficiary; Erigon's rule matches it (the SELFDESTRUCT frame's `to`), anvil's scan of parity traces does not
  assert.deepEqual((await onKeel('ots_searchTransactionsBefore', [BENEFICIARY, 0, 25])).txs.map((t) => t.hash), [k.tx.makeAndKill])
  assert.deepEqual((await onAnvil('ots_searchTransactionsBefore', [BENEFICIARY, 0, 25])).txs, [])
  // DIFFERENCE receipt.timestamp: Keel a JSON number as Erigon's fixture has it, anvil a hex string (the UI reads both)
  const kr = (await onKeel('ots_searchTransactionsBefore', [RELAY_SINK, 0, 25])).receipts[0]
  const ar = (await onAnvil('ots_searchTransactionsBefore', [RELAY_SINK, 0, 25])).receipts[0]
  assert.equal(typeof kr.timestamp, 'number')
  assert.match(ar.timestamp, /^0x[0-9a-f]+$/)
})

test('ots_getInternalOperations: equal but for the top-level frame, which anvil includes and Erigon skips', async () => {
  for (const hash of [k.tx.relayed, k.tx.makeAndKill]) {
    const ours = await onKeel('ots_getInternalOperations', [hash])
    const theirs = await onAnvil('ots_getInternalOperations', [hash])
    // DIFFERENCE: anvil's first entry is the transaction's own value transfer (depth 0)
    assert.deepEqual(theirs[0], { type: 0, from: k.alice, to: hash === k.tx.relayed ? k.relay : k.factory, value: hash === k.tx.relayed ? '0x50' : '0x3e8' })
    assert.deepEqual(ours, theirs.slice(1))
  }
})

test('ots_traceTransaction: equal for calls; anvil leaves out CREATE2 and SELFDESTRUCT entries', async () => {
  assert.deepEqual(await onKeel('ots_traceTransaction', [k.tx.relayed]), await onAnvil('ots_traceTransaction', [k.tx.relayed]))
  const ours = await onKeel('ots_traceTransaction', [k.tx.makeAndKill])
  const theirs = await onAnvil('ots_traceTransaction', [k.tx.makeAndKill])
  // DIFFERENCE: anvil builds the trace from parity call actions only (reference §1c)
  assert.deepEqual(ours.map((e) => e.type), ['CALL', 'CREATE2', 'CALL', 'SELFDESTRUCT'])
  assert.deepEqual(theirs.map((e) => e.type), ['CALL', 'CALL'])
  assert.deepEqual(ours.filter((e) => e.type === 'CALL'), theirs)
})

test('ots_getContractCreator of a contract destroyed in its creating transaction: Keel null (Erigon: no account), anvil the creation', async () => {
  assert.equal(await onKeel('ots_getContractCreator', [k.killed]), null)
  assert.deepEqual(await onAnvil('ots_getContractCreator', [a.killed]), { hash: a.tx.makeAndKill, creator: a.factory })
})

test('ots_getBlockTransactions: anvil pages from the head and counts the page, Keel pages from the end and counts the block', async () => {
  const ours = await onKeel('ots_getBlockTransactions', [k.bigBlock.block, 0, 25])
  const theirs = await onAnvil('ots_getBlockTransactions', [a.bigBlock.block, 0, 25])
  assert.equal(ours.fullblock.transactionCount, 30)
  // DIFFERENCE: anvil 1.7 reports the page's length (fixed upstream in foundry PR #16571), so the UI reaches one page only
  assert.equal(theirs.fullblock.transactionCount, 25)
  // DIFFERENCE: page 0 is the block's last 25 on Keel (Erigon, and the UI's index arithmetic), its first 25 on anvil
  assert.equal(Number(ours.fullblock.transactions[0].transactionIndex), 5)
  assert.equal(Number(theirs.fullblock.transactions[0].transactionIndex), 0)
  // DIFFERENCE: receipts' logs are null on Keel as on Erigon, anvil keeps them
  assert.equal(ours.receipts[0].logs, null)
  assert.deepEqual(theirs.receipts[0].logs, [])
  // equal: the transaction fields both give (the chains' blocks, and so fees and positions, differ)
  const fields = (t) => ({ hash: t.hash, from: t.from, to: t.to, nonce: t.nonce, value: t.value, input: t.input, gas: t.gas, type: t.type })
  const byHash = new Map(theirs.fullblock.transactions.map((t) => [t.hash, fields(t)]))
  for (const t of ours.fullblock.transactions) if (byHash.has(t.hash)) assert.deepEqual(fields(t), byHash.get(t.hash))
})

test('ots_getBlockDetails: equal count and issuance; anvil keeps logsBloom, Keel nulls it as Erigon; fees are each chain\'s own', async () => {
  const ours = await onKeel('ots_getBlockDetails', [k.bigBlock.block])
  const theirs = await onAnvil('ots_getBlockDetails', [a.bigBlock.block])
  assert.equal(ours.block.transactionCount, theirs.block.transactionCount)
  assert.deepEqual(ours.issuance, theirs.issuance)
  assert.equal(ours.block.transactions, undefined)
  assert.equal(theirs.block.transactions, undefined)
  // DIFFERENCE: logsBloom (reference §1c: Erigon's delegateGetBlockByNumber nulls it; anvil keeps it)
  assert.equal(ours.block.logsBloom, null)
  assert.match(theirs.block.logsBloom, /^0x[0-9a-f]{512}$/)
  // totalFees: Σ gasUsed × effectiveGasPrice on each chain (base fees differ between the chains)
  for (const [on, block] of [[onKeel, k.bigBlock], [onAnvil, a.bigBlock]]) {
    const expected = block.receipts.reduce((sum, r) => sum + BigInt(r.gasUsed) * BigInt(r.effectiveGasPrice), 0n)
    assert.equal((await on('ots_getBlockDetails', [block.block])).totalFees, `0x${expected.toString(16)}`)
  }
})

test('erigon_getHeaderByNumber: the header on Keel; anvil answers the whole block (transactions included)', async () => {
  const ours = await onKeel('erigon_getHeaderByNumber', [k.bigBlock.block])
  const theirs = await onAnvil('erigon_getHeaderByNumber', [a.bigBlock.block])
  assert.equal(ours.transactions, undefined)
  // DIFFERENCE: anvil's is its eth_getBlockByNumber answer
  assert.equal(theirs.transactions.length, 30)
  for (const field of Object.keys(ours)) assert.ok(field in theirs, `anvil's header has ${field}`)
})
