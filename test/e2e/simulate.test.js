// eth_simulateV1 against a real Keel process over HTTP: viem's simulateBlocks / simulateCalls where a user
// would call it, raw JSON-RPC for the exact wire answer and the error cases. The expected behaviour is
// geth's (internal/ethapi/simulate.go): blocks chain on the base block (numbers +1, timestamps +12, gaps
// filled with empty blocks), state carries over from call to call and block to block, nothing reaches the
// real chain, and the error codes of the execution-apis spec (-38010 … -38026, -32602).
// Every successful answer is checked the same way (checkBlocks): the execution-apis EthSimulateResult schema,
// hash = keccak(RLP(header)), parentHash chain, gasUsed = the calls' sum, logs pointing at their call.
// The last test runs the same ERC20 sequence on anvil (which implements eth_simulateV1) and compares what
// both nodes define.
//
// Small contracts are put in place with state overrides (`code`); each returns one 32-byte word:
// TIMESTAMP 0x4260005260206000f3, NUMBER 0x43…, COINBASE 0x41…, BASEFEE 0x48…, PREVRANDAO 0x44…,
// GASLIMIT 0x45…, GAS 0x5a…; BALANCE / BLOCKHASH / SLOAD of the 32-byte word of calldata.

import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { after, before, test } from 'node:test'
import { RLP } from '@ethereumjs/rlp'
import {
  ContractFunctionRevertedError,
  createPublicClient,
  decodeEventLog,
  encodeAbiParameters,
  encodeErrorResult,
  encodeFunctionData,
  ethAddress,
  getContractAddress,
  hexToBytes,
  http,
  keccak256,
  numberToHex,
  pad,
  parseEther,
  parseUnits,
  sha256,
  toHex,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { compile } from '../helpers/contracts.js'
import { anvilBin, CHAIN_ID, DEV_KEYS, startNode, target, waitForLine } from '../helpers/node.js'
import { rpc, rpcResult } from '../helpers/rpc.js'
import { validateMethodResult } from '../helpers/schema.js'
import { httpClients, keelChain } from '../helpers/viem.js'

const { Token, Reverter, Storage } = compile()

const ZERO_HASH = `0x${'00'.repeat(32)}`
const ZERO_BLOOM = `0x${'00'.repeat(256)}`
const EMPTY_TRIE_ROOT = '0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421'
const TRANSFER_TOPIC = keccak256(toHex('Transfer(address,address,uint256)'))
const GWEI = 10n ** 9n
/** ERC-7528: the address traceTransfers' logs come from */
const NATIVE_ASSET = '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee'

// Fresh accounts (nothing on Keel's chain nor on anvil's).
const X = '0x1000000000000000000000000000000000000001' // sender
const Y = '0x1000000000000000000000000000000000000002' // second sender
const H = '0x1000000000000000000000000000000000000003' // token holder (via a storage override)
const Z = '0x2000000000000000000000000000000000000001' // recipient
const W = '0x2000000000000000000000000000000000000002' // withdrawal recipient
const F = '0x2000000000000000000000000000000000000003' // fee recipient
const R = '0x2000000000000000000000000000000000000004' // token recipient
const R2 = '0x2000000000000000000000000000000000000005'
// Where the small contracts go.
const C = {
  timestamp: '0xc000000000000000000000000000000000000001',
  number: '0xc000000000000000000000000000000000000002',
  coinbase: '0xc000000000000000000000000000000000000003',
  basefee: '0xc000000000000000000000000000000000000004',
  prevrandao: '0xc000000000000000000000000000000000000005',
  gaslimit: '0xc000000000000000000000000000000000000006',
  gas: '0xc000000000000000000000000000000000000007',
  balance: '0xc000000000000000000000000000000000000008',
  blockhash: '0xc000000000000000000000000000000000000009',
  sload: '0xc00000000000000000000000000000000000000a',
  invalid: '0xc00000000000000000000000000000000000000b',
  loop: '0xc00000000000000000000000000000000000000c',
  forwarder: '0xc00000000000000000000000000000000000000d',
  reverter: '0xc00000000000000000000000000000000000000e',
  token: '0xc00000000000000000000000000000000000000f',
  moved: '0xc000000000000000000000000000000000000010',
}
const returnsOpcode = (op) => `0x${op}60005260206000f3` // <op> PUSH1 0 MSTORE PUSH1 32 PUSH1 0 RETURN
const CODE = {
  timestamp: returnsOpcode('42'),
  number: returnsOpcode('43'),
  coinbase: returnsOpcode('41'),
  basefee: returnsOpcode('48'),
  prevrandao: returnsOpcode('44'),
  gaslimit: returnsOpcode('45'),
  gas: returnsOpcode('5a'),
  balance: '0x6000353160005260206000f3', // BALANCE(calldata[0:32])
  blockhash: '0x6000354060005260206000f3', // BLOCKHASH(calldata[0:32])
  sload: '0x6000355460005260206000f3', // SLOAD(calldata[0:32])
  invalid: '0xfe',
  loop: '0x5b600056', // JUMPDEST PUSH1 0 JUMP: runs until out of gas
}
/** Logs 0xaa, sends its whole msg.value to `to` with CALL, logs 0xbb. */
const forwarderCode = (to) =>
  `0x60aa60005260206000a0${'6000'.repeat(4)}3473${to.slice(2)}5af15060bb60005260206000a000`
/** Init code whose deployed code is the TIMESTAMP reader (PUSH9 code, MSTORE, RETURN(23, 9)). */
const TIMESTAMP_INITCODE = `0x68${CODE.timestamp.slice(2)}60005260096017f3`

const word = (value) => (typeof value === 'string' ? pad(value.toLowerCase(), { size: 32 }) : numberToHex(BigInt(value), { size: 32 }))
const q = (value) => numberToHex(BigInt(value))
const lower = (address) => address.toLowerCase()
/** The ERC20's balance slot of `holder` (OpenZeppelin ERC20: _balances is slot 0). */
const balanceSlot = (holder) => keccak256(encodeAbiParameters([{ type: 'address' }, { type: 'uint256' }], [holder, 0n]))
const tokenCall = (functionName, args) => encodeFunctionData({ abi: Token.abi, functionName, args })

let node
let account
let walletClient
let publicClient
let tokenAddress
let anvil
/** eth_simulateV1 requests and answers seen by `viem` (matched by JSON-RPC id). */
const viemSimulations = []
let viem

before(async () => {
  node = await startNode({ blockTime: 0, args: ['--empty-block-period', '0'] })
  account = privateKeyToAccount(DEV_KEYS[0])
  ;({ publicClient, walletClient } = httpClients(node.url, account))
  const hash = await walletClient.deployContract({ abi: Token.abi, bytecode: Token.bytecode })
  const receipt = await publicClient.waitForTransactionReceipt({ hash })
  assert.equal(receipt.status, 'success')
  tokenAddress = receipt.contractAddress
  viem = recordingClient(node.url)
})

after(async () => {
  if (anvil !== undefined && anvil.exitCode === null && anvil.signalCode === null) {
    const exited = new Promise((resolve) => anvil.once('exit', resolve))
    anvil.kill('SIGTERM')
    await exited
  }
  await node?.stop()
})

/** A viem public client whose eth_simulateV1 exchanges are kept in viemSimulations, for the raw checks. */
function recordingClient(url) {
  const requests = new Map()
  const transport = http(url, {
    async onFetchRequest(request) {
      const body = await request.clone().json()
      for (const entry of [body].flat()) requests.set(entry.id, entry)
    },
    async onFetchResponse(response) {
      const body = await response.clone().json()
      for (const entry of [body].flat()) {
        const request = requests.get(entry.id)
        if (request?.method === 'eth_simulateV1') viemSimulations.push({ params: request.params, response: entry })
      }
    },
  })
  return createPublicClient({ chain: keelChain(url), transport })
}

// ---- raw JSON-RPC and the checks every answer gets ----

async function blockAt(tag = 'latest') {
  const block = /^0x[0-9a-fA-F]{64}$/.test(tag)
    ? await rpcResult(node.url, 'eth_getBlockByHash', [tag, false])
    : await rpcResult(node.url, 'eth_getBlockByNumber', [tag, false])
  assert.ok(block, `no block ${tag}`)
  return block
}

/**
 * eth_simulateV1 that must succeed; the answer passes checkBlocks against the base block.
 * tag null sends no block tag (the default, 'latest'); url is another node's (anvil), whose answer is not checked.
 */
async function simulate(payload, tag = 'latest', url) {
  const params = tag === null ? [payload] : [payload, tag]
  const response = await rpc(url ?? node.url, 'eth_simulateV1', params)
  assert.equal(response.error, undefined, `eth_simulateV1 failed: ${JSON.stringify(response.error)}\nrequest: ${JSON.stringify(params).slice(0, 1500)}`)
  if (url === undefined) checkBlocks(response.result, await blockAt(tag ?? 'latest'))
  return response.result
}

/** eth_simulateV1 that must fail as a whole; returns the JSON-RPC error. */
async function simulateError(payload, tag = 'latest') {
  const params = [payload, tag]
  const response = await rpc(node.url, 'eth_simulateV1', params)
  assert.equal(response.result, undefined, `expected an error, got a result: ${JSON.stringify(response.result)?.slice(0, 500)}\nrequest: ${JSON.stringify(params).slice(0, 1500)}`)
  assert.equal(typeof response.error?.code, 'number', `no error object: ${JSON.stringify(response)}`)
  assert.equal(typeof response.error.message, 'string')
  return response.error
}

/** The block hash as a node computes it: keccak256 of the RLP of the header fields, in consensus order. */
function headerHash(block) {
  const quantity = (hex) => (BigInt(hex) === 0n ? new Uint8Array() : hexToBytes(numberToHex(BigInt(hex))))
  const fields = [
    hexToBytes(block.parentHash), hexToBytes(block.sha3Uncles), hexToBytes(block.miner), hexToBytes(block.stateRoot),
    hexToBytes(block.transactionsRoot), hexToBytes(block.receiptsRoot), hexToBytes(block.logsBloom),
    quantity(block.difficulty), quantity(block.number), quantity(block.gasLimit), quantity(block.gasUsed),
    quantity(block.timestamp), hexToBytes(block.extraData), hexToBytes(block.mixHash), hexToBytes(block.nonce),
  ]
  const optional = [
    ['baseFeePerGas', quantity], ['withdrawalsRoot', hexToBytes], ['blobGasUsed', quantity], ['excessBlobGas', quantity],
    ['parentBeaconBlockRoot', hexToBytes], ['requestsHash', hexToBytes], ['blockAccessListHash', hexToBytes],
  ]
  for (const [name, encode] of optional) if (block[name] !== undefined && block[name] !== null) fields.push(encode(block[name]))
  return keccak256(RLP.encode(fields))
}

/**
 * The execution-apis result schema (extra fields allowed). The spec's CallResultFailure wants a -32015
 * message to start with "vm execution error"; geth, whose behaviour Keel follows, sends the bare halt
 * reason ('out of gas', 'invalid opcode: INVALID'), so such messages get that prefix here and the tests
 * check their wording themselves.
 */
function validateSimulateResult(result) {
  const copy = structuredClone(result)
  for (const block of copy) {
    for (const call of block.calls ?? []) {
      if (call.error?.code === -32015 && typeof call.error.message === 'string' && !call.error.message.startsWith('vm execution error')) {
        call.error.message = `vm execution error: ${call.error.message}`
      }
    }
  }
  validateMethodResult('eth_simulateV1', copy, { allowExtraFields: true })
}

/** What every simulated chain must satisfy, whatever was asked. */
function checkBlocks(result, base) {
  assert.ok(Array.isArray(result) && result.length > 0, `not a non-empty array: ${JSON.stringify(result)?.slice(0, 300)}`)
  validateSimulateResult(result)
  assert.equal(headerHash(base), base.hash, 'the header hasher reproduces the real base block\'s hash')
  let parent = base
  for (const [i, block] of result.entries()) {
    const at = `simulated block ${i} (${block.number})`
    assert.equal(block.parentHash, parent.hash, `${at}: parentHash is the previous block's hash`)
    assert.equal(BigInt(block.number), BigInt(parent.number) + 1n, `${at}: number follows its parent's`)
    assert.ok(BigInt(block.timestamp) > BigInt(parent.timestamp), `${at}: timestamp ${block.timestamp} after its parent's ${parent.timestamp}`)
    assert.equal(block.hash, headerHash(block), `${at}: hash is keccak256(rlp(header))`)
    assert.ok(Array.isArray(block.calls), `${at}: calls`)
    assert.equal(block.transactions.length, block.calls.length, `${at}: one transaction per call`)
    const gasSum = block.calls.reduce((sum, call) => sum + BigInt(call.gasUsed), 0n)
    assert.equal(BigInt(block.gasUsed), gasSum, `${at}: gasUsed is the sum of the calls' gasUsed`)
    assert.ok(BigInt(block.gasUsed) <= BigInt(block.gasLimit), `${at}: gasUsed within gasLimit`)
    // logIndex rises through the block; as geth numbers logs when they are emitted, a failed frame's
    // dropped logs leave gaps (execution-apis' vectors record them)
    let lastIndex = -1n
    let logIndex = 0
    let realLogs = 0
    for (const [j, call] of block.calls.entries()) {
      const txHash = typeof block.transactions[j] === 'string' ? block.transactions[j] : block.transactions[j].hash
      assert.match(txHash, /^0x[0-9a-f]{64}$/, `${at} call ${j}: transaction hash`)
      assert.ok(call.status === '0x1' || call.status === '0x0', `${at} call ${j}: status ${call.status}`)
      assert.equal(call.error === undefined, call.status === '0x1', `${at} call ${j}: error iff status 0x0`)
      assert.ok(call.maxUsedGas !== undefined && BigInt(call.maxUsedGas) >= BigInt(call.gasUsed), `${at} call ${j}: maxUsedGas ${call.maxUsedGas} >= gasUsed ${call.gasUsed}`)
      assert.ok(Array.isArray(call.logs), `${at} call ${j}: logs array`)
      for (const log of call.logs) {
        const where = `${at} call ${j} log ${logIndex}`
        assert.equal(log.blockHash, block.hash, `${where}: blockHash`)
        assert.equal(BigInt(log.blockNumber), BigInt(block.number), `${where}: blockNumber`)
        assert.equal(log.transactionHash, txHash, `${where}: transactionHash is the call's transaction`)
        assert.equal(BigInt(log.transactionIndex), BigInt(j), `${where}: transactionIndex`)
        assert.ok(BigInt(log.logIndex) > lastIndex, `${where}: logIndex ${log.logIndex} rises within the block`)
        lastIndex = BigInt(log.logIndex)
        logIndex++
        if (log.address !== NATIVE_ASSET) realLogs++
      }
    }
    assert.equal(block.logsBloom === ZERO_BLOOM, realLogs === 0, `${at}: logsBloom empty iff the block has logs (traceTransfers' are not the receipts')`)
    if (block.calls.length === 0) assert.equal(block.transactionsRoot, EMPTY_TRIE_ROOT, `${at}: empty transactionsRoot`)
    else assert.notEqual(block.transactionsRoot, EMPTY_TRIE_ROOT, `${at}: transactionsRoot of its calls`)
    parent = block
  }
}

/** EIP-1559: the base fee of the block after `parent` (elasticity 2, change denominator 8). */
function nextBaseFee(parent) {
  const baseFee = BigInt(parent.baseFeePerGas)
  const gasUsed = BigInt(parent.gasUsed)
  const targetGas = BigInt(parent.gasLimit) / 2n
  if (gasUsed === targetGas) return baseFee
  if (gasUsed > targetGas) {
    const delta = (baseFee * (gasUsed - targetGas)) / targetGas / 8n
    return baseFee + (delta > 1n ? delta : 1n)
  }
  return baseFee - (baseFee * (targetGas - gasUsed)) / targetGas / 8n
}

/** What a simulation must leave as it was on the real chain. */
async function chainSnapshot(addresses) {
  const head = await blockAt('latest')
  const accounts = {}
  for (const address of addresses) {
    accounts[address] = {
      balance: await rpcResult(node.url, 'eth_getBalance', [address, 'latest']),
      nonce: await rpcResult(node.url, 'eth_getTransactionCount', [address, 'latest']),
      code: await rpcResult(node.url, 'eth_getCode', [address, 'latest']),
      tokens: await rpcResult(node.url, 'eth_call', [{ to: tokenAddress, data: tokenCall('balanceOf', [address]) }, 'latest']),
    }
  }
  return { number: head.number, hash: head.hash, stateRoot: head.stateRoot, accounts }
}

// ---- viem ----

test('viem simulateBlocks: an ERC20 transfer, then balanceOf in the next call and the next block see it; the chain is untouched', async () => {
  const holder = account.address
  const watched = [holder, R, R2]
  const before = await chainSnapshot(watched)
  const base = await blockAt('latest')
  const holderTokens = BigInt(before.accounts[holder].tokens)
  assert.equal(holderTokens, parseUnits('1000000', 18), 'the deployer holds the whole supply')
  const sent = parseUnits('250', 18)
  const passed = parseUnits('100', 18)
  const token = { to: tokenAddress, abi: Token.abi }

  const seen = viemSimulations.length
  const blocks = await viem.simulateBlocks({
    blocks: [
      {
        calls: [
          { ...token, account: holder, functionName: 'transfer', args: [R, sent] },
          { ...token, functionName: 'balanceOf', args: [R] },
          { ...token, functionName: 'balanceOf', args: [holder] },
        ],
      },
      {
        calls: [
          { ...token, account: R, functionName: 'transfer', args: [R2, passed] },
          { ...token, functionName: 'balanceOf', args: [R] },
          { ...token, functionName: 'balanceOf', args: [R2] },
        ],
      },
    ],
  })

  assert.equal(blocks.length, 2)
  assert.equal(blocks[0].number, BigInt(base.number) + 1n)
  assert.equal(blocks[1].number, BigInt(base.number) + 2n)
  assert.equal(blocks[1].parentHash, blocks[0].hash)
  assert.deepEqual(blocks[0].calls.map((call) => call.status), ['success', 'success', 'success'])
  assert.deepEqual(blocks[1].calls.map((call) => call.status), ['success', 'success', 'success'])
  assert.equal(blocks[0].calls[0].result, true)
  assert.equal(blocks[0].calls[1].result, sent, 'call 2 sees call 1\'s transfer')
  assert.equal(blocks[0].calls[2].result, holderTokens - sent)
  assert.equal(blocks[1].calls[0].result, true, 'R spends in block 2 what it got in block 1')
  assert.equal(blocks[1].calls[1].result, sent - passed)
  assert.equal(blocks[1].calls[2].result, passed)

  const [log] = blocks[0].calls[0].logs
  assert.equal(blocks[0].calls[0].logs.length, 1)
  assert.equal(lower(log.address), lower(tokenAddress))
  const event = decodeEventLog({ abi: Token.abi, data: log.data, topics: log.topics })
  assert.equal(event.eventName, 'Transfer')
  assert.equal(lower(event.args.from), lower(holder))
  assert.equal(lower(event.args.to), R)
  assert.equal(event.args.value, sent)
  assert.equal(log.blockHash, blocks[0].hash)
  assert.equal(log.transactionHash, blocks[0].transactions[0])
  assert.equal(blocks[1].calls[0].logs[0].logIndex, 0, 'logIndex restarts in each block')

  assert.equal(viemSimulations.length, seen + 1)
  const { params, response } = viemSimulations.at(-1)
  checkBlocks(response.result, await blockAt(params[1]))

  // Nothing reached the chain.
  assert.deepEqual(await chainSnapshot(watched), before)
  for (const hash of [...blocks[0].transactions, ...blocks[1].transactions]) {
    assert.equal(await rpcResult(node.url, 'eth_getTransactionByHash', [hash]), null, `simulated ${hash} is not on the chain`)
    assert.equal(await rpcResult(node.url, 'eth_getTransactionReceipt', [hash]), null)
  }
  assert.equal(await rpcResult(node.url, 'eth_getBlockByHash', [blocks[0].hash, false]), null, 'the simulated block is not on the chain')
})

test('viem simulateCalls with traceAssetChanges: the ETH and token changes of a batch (non-validation: no fees)', async () => {
  const seen = viemSimulations.length
  const { results, assetChanges, block } = await viem.simulateCalls({
    account: account.address,
    calls: [
      { to: tokenAddress, abi: Token.abi, functionName: 'transfer', args: [R, parseUnits('100', 18)] },
      { to: R, value: parseEther('1') },
    ],
    traceAssetChanges: true,
  })
  assert.deepEqual(results.map((call) => call.status), ['success', 'success'])
  assert.equal(results[0].result, true)
  assert.equal(block.number, BigInt((await blockAt('latest')).number) + 1n)
  const eth = assetChanges.find((change) => lower(change.token.address) === ethAddress)
  assert.ok(eth, `no ETH change in ${JSON.stringify(assetChanges, (_, v) => (typeof v === 'bigint' ? String(v) : v))}`)
  assert.equal(eth.value.diff, -parseEther('1'), 'exactly the value sent: gas costs nothing without validation')
  assert.equal(eth.value.pre, await publicClient.getBalance({ address: account.address }))
  const token = assetChanges.find((change) => lower(change.token.address) === lower(tokenAddress))
  assert.ok(token, 'the token moved')
  assert.equal(token.value.diff, -parseUnits('100', 18))
  assert.equal(token.token.symbol, 'KTT')
  assert.equal(token.token.decimals, 18)
  assert.ok(viemSimulations.length > seen)
  for (const { params, response } of viemSimulations.slice(seen)) checkBlocks(response.result, await blockAt(params[1]))
})

test('viem simulateBlocks: reverts are decoded from error.data (custom error, require, panic); raw: code 3 with the revert data', async () => {
  const reverter = { to: C.reverter, abi: Reverter.abi }
  const blocks = await viem.simulateBlocks({
    blocks: [
      {
        stateOverrides: [{ address: C.reverter, code: Reverter.deployedBytecode }],
        calls: [
          { ...reverter, functionName: 'failCustom', args: [7n] },
          { ...reverter, functionName: 'failRequire' },
          { ...reverter, functionName: 'ok' },
          { ...reverter, functionName: 'failPanic' },
        ],
      },
    ],
  })
  const calls = blocks[0].calls
  assert.deepEqual(calls.map((call) => call.status), ['failure', 'failure', 'success', 'failure'])
  const reverted = (call) => {
    const error = call.error?.walk?.((cause) => cause instanceof ContractFunctionRevertedError) ?? call.error
    assert.ok(error instanceof ContractFunctionRevertedError, `not a ContractFunctionRevertedError: ${call.error}`)
    return error
  }
  assert.equal(reverted(calls[0]).data?.errorName, 'Bad')
  assert.deepEqual(reverted(calls[0]).data?.args, [7n])
  assert.equal(reverted(calls[1]).reason, 'nope')
  assert.equal(calls[2].result, 42n)
  assert.equal(reverted(calls[3]).data?.errorName, 'Panic')
  assert.deepEqual(reverted(calls[3]).data?.args, [0x12n])
  checkBlocks(viemSimulations.at(-1).response.result, await blockAt(viemSimulations.at(-1).params[1]))

  const [raw] = await simulate({
    blockStateCalls: [
      {
        stateOverrides: { [C.reverter]: { code: Reverter.deployedBytecode } },
        calls: [
          { from: X, to: C.reverter, input: encodeFunctionData({ abi: Reverter.abi, functionName: 'failCustom', args: [7n] }) },
          { from: X, to: C.reverter, input: encodeFunctionData({ abi: Reverter.abi, functionName: 'failRequire' }) },
        ],
      },
    ],
  })
  const expectedData = [
    encodeErrorResult({ abi: Reverter.abi, errorName: 'Bad', args: [7n] }),
    encodeErrorResult({ abi: [{ type: 'error', name: 'Error', inputs: [{ type: 'string' }] }], errorName: 'Error', args: ['nope'] }),
  ]
  for (const [i, call] of raw.calls.entries()) {
    assert.equal(call.status, '0x0')
    assert.equal(call.error.code, 3, `call ${i}: ${JSON.stringify(call.error)}`)
    assert.match(call.error.message, /^execution reverted/)
    assert.equal(call.error.data, expectedData[i], `call ${i}: the revert data`)
    assert.deepEqual(call.logs, [])
    assert.ok(BigInt(call.gasUsed) > 21000n && BigInt(call.gasUsed) < 100000n, `call ${i}: gasUsed ${call.gasUsed}`)
  }
})

// ---- blocks: numbering, timestamps, hashes ----

test('blocks chain on the base block: numbers +1, timestamps +12, parentHash, keccak(header) hashes, BLOCKHASH of simulated blocks', async () => {
  const base = await blockAt('latest')
  const n = BigInt(base.number)
  const result = await simulate(
    {
      blockStateCalls: [
        { stateOverrides: { [X]: { balance: q(parseEther('1')) } }, calls: [{ from: X, to: Z, value: q(1) }] },
        {
          stateOverrides: { [C.blockhash]: { code: CODE.blockhash } },
          calls: [n, n + 1n, n + 2n].map((number) => ({ from: X, to: C.blockhash, input: word(number) })),
        },
        { calls: [] },
      ],
    },
    q(n),
  )
  assert.equal(result.length, 3)
  for (const [i, block] of result.entries()) {
    assert.equal(BigInt(block.number), n + BigInt(i + 1))
    assert.equal(BigInt(block.timestamp), BigInt(base.timestamp) + 12n * BigInt(i + 1), `block ${i}: timestamp = parent + 12`)
    assert.equal(block.gasLimit, base.gasLimit, 'gas limit of the base block')
    assert.equal(block.miner, base.miner, 'fee recipient of the base block')
    assert.equal(BigInt(block.baseFeePerGas), 0n, 'base fee 0 without validation')
    assert.deepEqual(block.withdrawals, [])
    assert.deepEqual(block.uncles, [])
  }
  assert.equal(result[0].parentHash, base.hash)
  assert.equal(BigInt(result[0].gasUsed), 21000n)
  assert.notEqual(result[0].stateRoot, base.stateRoot, 'a value transfer changes the state root')
  assert.deepEqual(result[2].transactions, [])
  assert.deepEqual(
    result[1].calls.map((call) => call.returnData),
    [base.hash, result[0].hash, ZERO_HASH],
    'BLOCKHASH in block n+2: n is the base block, n+1 the first simulated block, n+2 (the current) is 0',
  )

  // Without a block tag the base is 'latest'.
  const [untagged] = await simulate({ blockStateCalls: [{ calls: [] }] }, null)
  assert.equal(untagged.parentHash, base.hash)
  assert.equal(BigInt(untagged.number), n + 1n)

  // A past block by hash: the state of that block (the token did not exist yet at genesis).
  const genesis = await blockAt('0x0')
  const [atGenesis] = await simulate(
    { blockStateCalls: [{ calls: [{ from: X, to: tokenAddress, input: tokenCall('balanceOf', [account.address]) }] }] },
    genesis.hash,
  )
  assert.equal(atGenesis.parentHash, genesis.hash)
  assert.equal(BigInt(atGenesis.number), 1n)
  assert.equal(atGenesis.calls[0].status, '0x1')
  assert.equal(atGenesis.calls[0].returnData, '0x', 'no token code at genesis')
  const [atHead] = await simulate(
    { blockStateCalls: [{ calls: [{ from: X, to: tokenAddress, input: tokenCall('balanceOf', [account.address]) }] }] },
    'latest',
  )
  assert.equal(BigInt(atHead.calls[0].returnData), parseUnits('1000000', 18))
})

test('a jump in blockOverrides.number is filled with empty blocks (numbers, timestamps +12, hashes chained)', async () => {
  const base = await blockAt('latest')
  const n = BigInt(base.number)
  const ts = BigInt(base.timestamp)
  const readers = { [C.number]: { code: CODE.number }, [C.timestamp]: { code: CODE.timestamp } }
  const readBoth = [{ from: X, to: C.number }, { from: X, to: C.timestamp }]
  const result = await simulate({
    blockStateCalls: [
      { stateOverrides: readers, calls: readBoth },
      { blockOverrides: { number: q(n + 4n) }, calls: readBoth },
    ],
  })
  assert.equal(result.length, 4, 'blocks n+1, the two fillers n+2 and n+3, n+4')
  assert.deepEqual(result.map((block) => BigInt(block.number)), [n + 1n, n + 2n, n + 3n, n + 4n])
  assert.deepEqual(result.map((block) => BigInt(block.timestamp)), [ts + 12n, ts + 24n, ts + 36n, ts + 48n])
  for (const filler of [result[1], result[2]]) {
    assert.deepEqual(filler.calls, [])
    assert.deepEqual(filler.transactions, [])
    assert.equal(BigInt(filler.gasUsed), 0n)
  }
  assert.deepEqual(result[0].calls.map((call) => BigInt(call.returnData)), [n + 1n, ts + 12n])
  assert.deepEqual(result[3].calls.map((call) => BigInt(call.returnData)), [n + 4n, ts + 48n], 'NUMBER and TIMESTAMP of the block after the gap')

  // With a time on the block after the gap: the fillers still step by 12 from their parent.
  const timed = await simulate({
    blockStateCalls: [{ stateOverrides: readers, blockOverrides: { number: q(n + 3n), time: q(ts + 1000n) }, calls: readBoth }],
  })
  assert.deepEqual(timed.map((block) => BigInt(block.timestamp)), [ts + 12n, ts + 24n, ts + 1000n])
  assert.deepEqual(timed[2].calls.map((call) => BigInt(call.returnData)), [n + 3n, ts + 1000n])
})

test('block order and count errors: -38020 numbers, -38021 timestamps, -38026 beyond 256 blocks (256 is fine), -32602 empty', async () => {
  const base = await blockAt('latest')
  const n = BigInt(base.number)
  const ts = BigInt(base.timestamp)

  let error = await simulateError({ blockStateCalls: [{ blockOverrides: { number: q(n + 3n) } }, { blockOverrides: { number: q(n + 2n) } }] })
  assert.equal(error.code, -38020)
  assert.equal(error.message, `block numbers must be in order: ${n + 2n} <= ${n + 3n}`)
  error = await simulateError({ blockStateCalls: [{ blockOverrides: { number: q(n) } }] })
  assert.equal(error.code, -38020, 'the base block\'s own number')
  assert.equal(error.message, `block numbers must be in order: ${n} <= ${n}`)
  error = await simulateError({ blockStateCalls: [{ blockOverrides: { number: q(n + 2n) } }, { blockOverrides: { number: q(n + 2n) } }] })
  assert.equal(error.code, -38020, 'a repeated number')

  error = await simulateError({ blockStateCalls: [{ blockOverrides: { time: q(ts + 20n) } }, { blockOverrides: { time: q(ts + 20n) } }] })
  assert.equal(error.code, -38021)
  assert.equal(error.message, `block timestamps must be in order: ${ts + 20n} <= ${ts + 20n}`)
  error = await simulateError({ blockStateCalls: [{ blockOverrides: { time: q(ts) } }] })
  assert.equal(error.code, -38021, 'the base block\'s own timestamp')
  assert.equal(error.message, `block timestamps must be in order: ${ts} <= ${ts}`)

  error = await simulateError({ blockStateCalls: [{ blockOverrides: { number: q(n + 257n) } }] })
  assert.equal(error.code, -38026)
  assert.match(error.message, /too many blocks/)
  const longest = await simulate({ blockStateCalls: [{ blockOverrides: { number: q(n + 256n) } }] })
  assert.equal(longest.length, 256, '256 blocks beyond the base are allowed')
  assert.equal(BigInt(longest.at(-1).number), n + 256n)

  error = await simulateError({ blockStateCalls: [] })
  assert.equal(error.code, -32602, `empty blockStateCalls: ${JSON.stringify(error)}`)
})

// ---- overrides ----

test('viem simulateBlocks blockOverrides reach the header and the EVM: time, gasLimit, feeRecipient, prevRandao, baseFeePerGas', async () => {
  const base = await blockAt('latest')
  const ts = BigInt(base.timestamp) + 7n
  const prevRandao = 0xabcdef0000000000000000000000000000000000000000000000000000001234n
  const readers = ['number', 'timestamp', 'coinbase', 'basefee', 'prevrandao', 'gaslimit']
  const blocks = await viem.simulateBlocks({
    blocks: [
      {
        blockOverrides: { time: ts, gasLimit: 5_000_000n, feeRecipient: F, prevRandao, baseFeePerGas: 9n },
        stateOverrides: readers.map((name) => ({ address: C[name], code: CODE[name] })),
        calls: readers.map((name) => ({ account: X, to: C[name], data: '0x' })),
      },
      { calls: [{ account: X, to: C.timestamp, data: '0x' }] },
    ],
  })
  const [first, second] = blocks
  assert.equal(first.number, BigInt(base.number) + 1n)
  assert.equal(first.timestamp, ts)
  assert.equal(first.gasLimit, 5_000_000n)
  assert.equal(lower(first.miner), F)
  assert.equal(first.mixHash, numberToHex(prevRandao, { size: 32 }))
  assert.equal(first.baseFeePerGas, 9n)
  assert.deepEqual(first.calls.map((call) => call.status), readers.map(() => 'success'))
  assert.deepEqual(
    first.calls.map((call) => call.data),
    [word(BigInt(base.number) + 1n), word(ts), word(F), word(9n), word(prevRandao), word(5_000_000n)],
    'NUMBER, TIMESTAMP, COINBASE, BASEFEE, PREVRANDAO, GASLIMIT',
  )
  assert.equal(second.timestamp, ts + 12n, 'the next block is 12 s after the overridden time')
  assert.equal(BigInt(second.calls[0].data), ts + 12n)
  assert.equal(second.baseFeePerGas, 0n, 'the base fee override is for its block only')
  checkBlocks(viemSimulations.at(-1).response.result, await blockAt(viemSimulations.at(-1).params[1]))
})

test('blockOverrides.withdrawals credit amount × 1 gwei, in the block\'s withdrawals and to later blocks\' calls', async () => {
  const withdrawals = [
    { index: '0x0', validatorIndex: '0x1', address: W, amount: '0x3' },
    { index: '0x1', validatorIndex: '0x2', address: W, amount: '0x4' },
  ]
  const readW = { from: X, to: C.balance, input: word(W) }
  const result = await simulate({
    blockStateCalls: [
      { blockOverrides: { withdrawals }, stateOverrides: { [C.balance]: { code: CODE.balance } }, calls: [] },
      { calls: [readW] },
    ],
  })
  assert.equal(result[0].withdrawals.length, 2)
  assert.deepEqual(
    result[0].withdrawals.map((w) => [BigInt(w.index), BigInt(w.validatorIndex), lower(w.address), BigInt(w.amount)]),
    [[0n, 1n, W, 3n], [1n, 2n, W, 4n]],
  )
  assert.notEqual(result[0].withdrawalsRoot, EMPTY_TRIE_ROOT)
  assert.deepEqual(result[1].withdrawals, [])
  assert.equal(result[1].withdrawalsRoot, EMPTY_TRIE_ROOT)
  assert.equal(BigInt(result[1].calls[0].returnData), 7n * GWEI, '3 + 4 gwei')
  assert.equal(await rpcResult(node.url, 'eth_getBalance', [W, 'latest']), '0x0', 'nothing credited on the chain')
})

test("the payload's keys match in any case (as geth's decoder), blobBaseFee reaches BLOBBASEFEE, a withdrawal's absent fields are zero", async () => {
  const BLOB_FEE_READER = '0xc0000000000000000000000000000000000000b1'
  const result = await simulate({
    BlockStateCalls: [
      {
        BlockOverrides: { BlobBaseFee: '0x99', Withdrawals: [{ Address: W, amount: '0x5' }] },
        StateOverrides: { [BLOB_FEE_READER]: { code: '0x4a60005260206000f3' }, [C.balance]: { code: CODE.balance }, [X]: { Balance: q(GWEI) } },
        Calls: [{ from: X, to: BLOB_FEE_READER }, { From: X, To: Z, Value: '0x1' }],
      },
      { calls: [{ from: X, to: BLOB_FEE_READER }, { from: X, to: C.balance, input: word(W) }] },
    ],
    ReturnFullTransactions: true,
    TRACETRANSFERS: true,
  })
  assert.equal(BigInt(result[0].calls[0].returnData), 0x99n)
  assert.equal(BigInt(result[1].calls[0].returnData), 1n, 'the override is for its block only')
  assert.deepEqual(
    result[0].withdrawals.map((w) => [BigInt(w.index), BigInt(w.validatorIndex), lower(w.address), BigInt(w.amount)]),
    [[0n, 0n, W, 5n]],
  )
  assert.equal(BigInt(result[1].calls[1].returnData), 5n * GWEI)
  assert.equal(typeof result[0].transactions[0], 'object', 'ReturnFullTransactions took effect')
  assert.equal(result[0].calls[1].logs.length, 1, 'TRACETRANSFERS took effect')
  assert.equal(lower(result[0].calls[1].logs[0].address), NATIVE_ASSET)
})

test('state carries over: a contract created by a call in block 1 is called in blocks 2 and 3, its storage kept', async () => {
  const created = lower(getContractAddress({ from: X, nonce: 0n }))
  const storage = (functionName, args) => ({ from: X, to: created, input: encodeFunctionData({ abi: Storage.abi, functionName, args }) })
  const result = await simulate({
    blockStateCalls: [
      { calls: [{ from: X, input: Storage.bytecode }] },
      { calls: [storage('set', [42n]), storage('value')] },
      { calls: [storage('value')] },
    ],
  })
  assert.equal(result[0].calls[0].status, '0x1')
  assert.equal(result[0].calls[0].returnData, Storage.deployedBytecode, 'a creation returns the deployed code')
  assert.equal(result[1].calls[0].status, '0x1')
  assert.equal(BigInt(result[1].calls[1].returnData), 42n)
  assert.equal(BigInt(result[2].calls[0].returnData), 42n)
  assert.equal(await rpcResult(node.url, 'eth_getCode', [created, 'latest']), '0x', 'not deployed on the chain')
})

test('stateOverrides per block: code, state (replaces), stateDiff (patches), balance, nonce; overridden state carries on', async () => {
  const slot = (i) => word(BigInt(i))
  const read = (i) => ({ from: X, to: C.sload, input: slot(i) })
  const readBalance = (address) => ({ from: X, to: C.balance, input: word(address) })
  const result = await simulate({
    blockStateCalls: [
      {
        stateOverrides: {
          [C.sload]: { code: CODE.sload, state: { [slot(0)]: word(5n), [slot(1)]: word(6n) } },
          [C.balance]: { code: CODE.balance },
          [Y]: { balance: q(12345n) },
        },
        calls: [read(0), read(1), readBalance(Y)],
      },
      { stateOverrides: { [C.sload]: { stateDiff: { [slot(1)]: word(7n) } }, [Y]: { balance: q(99n) } }, calls: [read(0), read(1), readBalance(Y)] },
      { stateOverrides: { [C.sload]: { state: { [slot(1)]: word(9n) } } }, calls: [read(0), read(1), readBalance(Y)] },
    ],
  })
  const values = result.map((block) => block.calls.map((call) => BigInt(call.returnData)))
  assert.deepEqual(values[0], [5n, 6n, 12345n])
  assert.deepEqual(values[1], [5n, 7n, 99n], 'stateDiff keeps slot 0; the new balance')
  assert.deepEqual(values[2], [0n, 9n, 99n], 'state replaces the whole storage; the balance of block 2 carries on')

  // A nonce override moves where the account's next CREATE lands.
  const atNonce5 = lower(getContractAddress({ from: X, nonce: 5n }))
  const atNonce0 = lower(getContractAddress({ from: X, nonce: 0n }))
  const created = await simulate({
    blockStateCalls: [
      { stateOverrides: { [X]: { nonce: q(5n) } }, calls: [{ from: X, input: TIMESTAMP_INITCODE }] },
      { calls: [{ from: Y, to: atNonce5 }, { from: Y, to: atNonce0 }] },
    ],
  })
  assert.equal(created[0].calls[0].status, '0x1')
  assert.equal(created[0].calls[0].returnData, CODE.timestamp)
  assert.equal(BigInt(created[1].calls[0].returnData), BigInt(created[1].timestamp), 'the contract created with nonce 5')
  assert.equal(created[1].calls[1].returnData, '0x', 'nothing at the nonce-0 address')

  // Code over a real contract: the token answers as the TIMESTAMP reader.
  const [overridden] = await simulate({
    blockStateCalls: [{ stateOverrides: { [tokenAddress]: { code: CODE.timestamp } }, calls: [{ from: X, to: tokenAddress, input: tokenCall('balanceOf', [X]) }] }],
  })
  assert.equal(BigInt(overridden.calls[0].returnData), BigInt(overridden.timestamp))
})

test('movePrecompileToAddress: the sha256 precompile answers at the new address, and 0x02 can take code', async () => {
  const SHA256 = '0x0000000000000000000000000000000000000002'
  const input = toHex('abc')
  const [block] = await simulate({
    blockStateCalls: [
      {
        stateOverrides: { [SHA256]: { movePrecompileToAddress: C.moved, code: CODE.timestamp } },
        calls: [
          { from: X, to: C.moved, input },
          { from: X, to: SHA256, input },
        ],
      },
    ],
  })
  assert.equal(block.calls[0].status, '0x1')
  assert.equal(block.calls[0].returnData, sha256(input), 'sha256("abc") at the new address')
  assert.equal(BigInt(block.calls[1].returnData), BigInt(block.timestamp), '0x02 runs the code put there')

  const [plain] = await simulate({ blockStateCalls: [{ calls: [{ from: X, to: SHA256, input }, { from: X, to: C.moved, input }] }] })
  assert.equal(plain.calls[0].returnData, sha256(input), 'without the override 0x02 is sha256')
  assert.equal(plain.calls[1].returnData, '0x')
})

// ---- validation ----

test('validation off (default): base fee 0, nonces unchecked, no fees charged; a value above the balance is -38014', async () => {
  const result = await simulate({
    blockStateCalls: [
      {
        stateOverrides: { [X]: { balance: q(1000n) }, [C.balance]: { code: CODE.balance } },
        calls: [
          { from: X, to: Z, value: q(1000n) },
          { from: account.address, to: Z, value: q(1n), nonce: q(999n) },
          { from: X, to: C.balance, input: word(X) },
          { from: X, to: C.balance, input: word(Z) },
        ],
      },
      { calls: [{ from: X, to: C.balance, input: word(Z) }] },
    ],
  })
  assert.equal(BigInt(result[0].baseFeePerGas), 0n)
  assert.equal(BigInt(result[1].baseFeePerGas), 0n)
  assert.deepEqual(result[0].calls.map((call) => call.status), ['0x1', '0x1', '0x1', '0x1'])
  assert.equal(BigInt(result[0].calls[2].returnData), 0n, 'X sent its whole balance and paid nothing for gas')
  assert.equal(BigInt(result[0].calls[3].returnData), 1001n)
  assert.equal(BigInt(result[1].calls[0].returnData), 1001n)

  const error = await simulateError({
    blockStateCalls: [{ stateOverrides: { [X]: { balance: q(1000n) } }, calls: [{ from: X, to: Z, value: q(1001n) }] }],
  })
  assert.equal(error.code, -38014, JSON.stringify(error))
  assert.match(error.message, /insufficient funds/)
})

test('validation on: the base fee follows the parent (EIP-1559), fees are charged; -38010, -38011, -38012, -38014', async () => {
  const base = await blockAt('latest')
  const tag = base.number
  const baseFee = nextBaseFee(base)
  assert.ok(baseFee > 0n)
  const history = await rpcResult(node.url, 'eth_feeHistory', ['0x1', tag, []])
  assert.equal(BigInt(history.baseFeePerGas[1]), baseFee, 'eth_feeHistory agrees on the next base fee')

  const maxFeePerGas = baseFee + 10n * GWEI
  const tip = 2n * GWEI
  const sender = { [X]: { balance: q(parseEther('1')), nonce: q(7n) } }
  const send = (fields = {}) => ({ from: X, to: Z, value: q(1000n), gas: q(21000n), nonce: q(7n), maxFeePerGas: q(maxFeePerGas), maxPriorityFeePerGas: q(tip), ...fields })
  const readBalance = (address) => ({ from: Y, to: C.balance, input: word(address), gas: q(50000n), maxFeePerGas: q(maxFeePerGas), maxPriorityFeePerGas: '0x0' })

  const result = await simulate(
    {
      validation: true,
      blockStateCalls: [
        {
          blockOverrides: { feeRecipient: F },
          stateOverrides: { ...sender, [Y]: { balance: q(parseEther('1')) }, [C.balance]: { code: CODE.balance } },
          calls: [send()],
        },
        { calls: [readBalance(X), { ...readBalance(F), nonce: q(1n) }, { ...readBalance(Z), nonce: q(2n) }] },
      ],
    },
    tag,
  )
  assert.equal(BigInt(result[0].baseFeePerGas), baseFee, 'base fee computed from the base block')
  assert.equal(BigInt(result[1].baseFeePerGas), nextBaseFee(result[0]), 'and from the first simulated block')
  assert.equal(result[0].calls[0].status, '0x1')
  assert.deepEqual(result[1].calls.map((call) => call.status), ['0x1', '0x1', '0x1'])
  const [xAfter, fAfter, zAfter] = result[1].calls.map((call) => BigInt(call.returnData))
  assert.equal(xAfter, parseEther('1') - 1000n - 21000n * (baseFee + tip), 'X paid value + gas × (base fee + tip)')
  assert.equal(fAfter, 21000n * tip, 'the fee recipient got the tip (the base fee is burnt)')
  assert.equal(zAfter, 1000n)

  const fails = async (call, overrides = sender) =>
    simulateError({ validation: true, blockStateCalls: [{ stateOverrides: overrides, calls: [call] }] }, tag)
  let error = await fails(send({ nonce: q(6n) }))
  // geth wraps what its state transition refuses as "err: <reason> (supplied gas N)" (execution-apis' vectors)
  assert.equal(error.code, -38010, JSON.stringify(error))
  assert.match(error.message, /^err: nonce too low: address 0x[0-9a-fA-F]{40}, tx: 6 state: 7 \(supplied gas \d+\)$/)
  error = await fails(send({ nonce: q(8n) }))
  assert.equal(error.code, -38011, JSON.stringify(error))
  assert.match(error.message, /^err: nonce too high: address 0x[0-9a-fA-F]{40}, tx: 8 state: 7 \(supplied gas \d+\)$/)
  error = await fails(send({ maxFeePerGas: q(1n), maxPriorityFeePerGas: q(1n) }))
  assert.equal(error.code, -38012, JSON.stringify(error))
  assert.match(error.message, /^err: max fee per gas less than block base fee: address 0x[0-9a-fA-F]{40}, maxFeePerGas: 1, baseFee: \d+ \(supplied gas \d+\)$/)
  error = await fails(send(), { [X]: { balance: q(1000n), nonce: q(7n) } })
  assert.equal(error.code, -38014, JSON.stringify(error))
  assert.match(error.message, /insufficient funds/)
})

// ---- gas ----

test('gas: a call without gas gets the block\'s remaining gas; gas beyond what the block has left is -38015', async () => {
  const gasLimit = 1_000_000n
  const block = (second) => ({
    blockOverrides: { gasLimit: q(gasLimit) },
    stateOverrides: { [C.gas]: { code: CODE.gas } },
    calls: [{ from: X, to: Z }, { from: X, to: C.gas, ...second }],
  })
  // GAS, the first opcode, sees the call's gas less the 21000 intrinsic and its own 2.
  const expected = gasLimit - 21000n - 21000n - 2n
  const [defaulted] = await simulate({ blockStateCalls: [block({})] })
  assert.equal(BigInt(defaulted.calls[0].gasUsed), 21000n)
  assert.equal(BigInt(defaulted.calls[1].returnData), expected, 'call 2 got gasLimit - 21000')
  const [exact] = await simulate({ blockStateCalls: [block({ gas: q(gasLimit - 21000n) })] })
  assert.equal(BigInt(exact.calls[1].returnData), expected, 'exactly the remaining gas is allowed')
  const error = await simulateError({ blockStateCalls: [block({ gas: q(gasLimit - 21000n + 1n) })] })
  assert.equal(error.code, -38015, JSON.stringify(error))
})

test('halts: invalid opcode and out of gas are -32015 with geth\'s message and consume the gas; later calls still run', async () => {
  const [block] = await simulate({
    blockStateCalls: [
      {
        stateOverrides: { [C.invalid]: { code: CODE.invalid }, [C.loop]: { code: CODE.loop }, [C.timestamp]: { code: CODE.timestamp } },
        calls: [
          { from: X, to: C.invalid, gas: q(50000n) },
          { from: X, to: C.loop, gas: q(60000n) },
          { from: X, to: C.timestamp },
        ],
      },
    ],
  })
  const [invalid, loop, ok] = block.calls
  assert.equal(invalid.status, '0x0')
  assert.deepEqual(invalid.error, { code: -32015, message: 'invalid opcode: INVALID' })
  assert.equal(BigInt(invalid.gasUsed), 50000n, 'a halt consumes all the gas')
  assert.equal(invalid.returnData, '0x')
  assert.equal(loop.status, '0x0')
  assert.deepEqual(loop.error, { code: -32015, message: 'out of gas' })
  assert.equal(BigInt(loop.gasUsed), 60000n)
  assert.equal(ok.status, '0x1')
  assert.equal(BigInt(ok.returnData), BigInt(block.timestamp))
})

test('gasUsed is after refunds, maxUsedGas before: emptying a token balance refunds 4800', async () => {
  const [block] = await simulate({
    blockStateCalls: [
      {
        stateOverrides: { [C.token]: { code: Token.deployedBytecode, stateDiff: { [balanceSlot(H)]: word(1000n) } } },
        calls: [
          { from: H, to: C.token, input: tokenCall('transfer', [R, 1000n]) },
          { from: H, to: C.token, input: tokenCall('balanceOf', [R]) },
        ],
      },
    ],
  })
  const [transfer, balanceOf] = block.calls
  assert.equal(transfer.status, '0x1')
  assert.equal(BigInt(transfer.maxUsedGas) - BigInt(transfer.gasUsed), 4800n, 'the SSTORE-clears refund')
  assert.equal(BigInt(balanceOf.returnData), 1000n)
  assert.equal(balanceOf.maxUsedGas, balanceOf.gasUsed, 'no refund, no difference')
})

// ---- traceTransfers, full transactions ----

test('traceTransfers: every ETH move is a Transfer log from 0xeeee…eeee, in execution order among the real logs', async () => {
  const payload = (traceTransfers) => ({
    traceTransfers,
    blockStateCalls: [
      {
        stateOverrides: { [X]: { balance: q(parseEther('1')) }, [C.forwarder]: { code: forwarderCode(Z) } },
        calls: [
          { from: X, to: C.forwarder, value: q(1000n) },
          { from: X, to: Z, value: q(5n) },
          { from: X, to: C.forwarder },
        ],
      },
    ],
  })
  const transfer = (from, to, value) => ({ address: ethAddress, topics: [TRANSFER_TOPIC, word(from), word(to)], data: word(value) })
  const marker = (byte) => ({ address: C.forwarder, topics: [], data: word(byte) })
  const shape = (logs) => logs.map(({ address, topics, data }) => ({ address: lower(address), topics, data }))

  const [traced] = await simulate(payload(true))
  assert.deepEqual(shape(traced.calls[0].logs), [transfer(X, C.forwarder, 1000n), marker(0xaan), transfer(C.forwarder, Z, 1000n), marker(0xbbn)])
  assert.deepEqual(shape(traced.calls[1].logs), [transfer(X, Z, 5n)])
  assert.deepEqual(shape(traced.calls[2].logs), [marker(0xaan), marker(0xbbn)], 'no Transfer log for a call without value')
  assert.deepEqual(traced.calls[1].logs.map((log) => BigInt(log.logIndex)), [4n])

  const [plain] = await simulate(payload(false))
  assert.deepEqual(shape(plain.calls[0].logs), [marker(0xaan), marker(0xbbn)])
  assert.deepEqual(plain.calls[1].logs, [])
  assert.deepEqual(plain.calls.map((call) => call.status), ['0x1', '0x1', '0x1'])
})

test('traceTransfers: a SELFDESTRUCT to a stack word with bits above its 20 bytes pays the address the EVM reads', async () => {
  // PUSH32 (12 bytes of 0xff, then Z's 20 bytes) SELFDESTRUCT
  const dirty = `0x7f${'ff'.repeat(12)}${Z.slice(2)}ff`
  const [block] = await simulate({
    traceTransfers: true,
    blockStateCalls: [{ stateOverrides: { [X]: { balance: q(parseEther('1')) }, [C.forwarder]: { code: dirty, balance: q(9n) } }, calls: [{ from: X, to: C.forwarder }] }],
  })
  assert.equal(block.calls[0].status, '0x1')
  const shape = (logs) => logs.map(({ address, topics, data }) => ({ address: lower(address), topics, data }))
  assert.deepEqual(shape(block.calls[0].logs), [{ address: ethAddress, topics: [TRANSFER_TOPIC, word(C.forwarder), word(Z)], data: word(9n) }])
})

test('returnFullTransactions: transaction objects with from, nonce, block fields; same hashes as without it', async () => {
  const payload = (returnFullTransactions) => ({
    returnFullTransactions,
    blockStateCalls: [
      {
        stateOverrides: { [X]: { balance: q(parseEther('1')) }, [C.forwarder]: { code: forwarderCode(Z) } },
        calls: [
          { from: X, to: Z, value: q(5n) },
          { from: X, to: C.forwarder, value: q(7n), input: '0x1234' },
        ],
      },
    ],
  })
  const [full] = await simulate(payload(true))
  const [hashes] = await simulate(payload(false))
  assert.equal(full.hash, hashes.hash, 'the same block either way')
  assert.deepEqual(full.transactions.map((tx) => tx.hash), hashes.transactions)
  for (const [i, tx] of full.transactions.entries()) {
    assert.equal(typeof tx, 'object')
    assert.equal(lower(tx.from), X, `tx ${i}: from is the call's sender`)
    assert.equal(BigInt(tx.nonce), BigInt(i), `tx ${i}: nonce from the state, then incremented`)
    assert.equal(tx.blockHash, full.hash)
    assert.equal(BigInt(tx.blockNumber), BigInt(full.number))
    assert.equal(BigInt(tx.transactionIndex), BigInt(i))
  }
  assert.equal(lower(full.transactions[0].to), Z)
  assert.equal(BigInt(full.transactions[0].value), 5n)
  assert.equal(lower(full.transactions[1].to), C.forwarder)
  assert.equal(BigInt(full.transactions[1].value), 7n)
  assert.equal(full.transactions[1].input, '0x1234')
  assert.equal(full.calls[1].logs[0].transactionHash, full.transactions[1].hash)
})

// ---- anvil ----

test('anvil runs the same ERC20 sequence: status, returnData, gasUsed and the logs\' address/topics/data agree', { skip: target !== 'keel' && 'compares the node under test with anvil' }, async () => {
  anvil = spawn(anvilBin, ['--host', '127.0.0.1', '--port', '0', '--chain-id', String(CHAIN_ID), '--hardfork', 'osaka'], { stdio: ['ignore', 'pipe', 'pipe'] })
  const [, host, port] = await waitForLine(anvil, /Listening on ([\d.]+):(\d+)/, 30_000)
  const anvilUrl = `http://${host}:${port}`

  // The same state on both chains: the token's code and H's balance put in place by overrides at fresh
  // addresses; H pays for gas on anvil (which charges its base fee even without validation).
  const gas = q(200_000n)
  const call = (from, functionName, args) => ({ from, to: C.token, gas, input: tokenCall(functionName, args) })
  const payload = {
    blockStateCalls: [
      {
        stateOverrides: {
          [H]: { balance: q(parseEther('1000')) },
          [R]: { balance: q(parseEther('1000')) },
          [C.token]: { code: Token.deployedBytecode, stateDiff: { [balanceSlot(H)]: word(1000n) } },
        },
        calls: [
          call(H, 'transfer', [R, 250n]),
          call(H, 'balanceOf', [R]),
          call(H, 'transfer', [R, 750n]), // empties H's slot: a refund
          call(H, 'transfer', [R, 1n]), // reverts ERC20InsufficientBalance(H, 0, 1)
        ],
      },
      { calls: [call(R, 'balanceOf', [R]), call(R, 'transfer', [H, 10n])] },
    ],
  }
  const [ours, theirs] = await Promise.all([simulate(payload), simulate(payload, 'latest', anvilUrl)])

  const expectedRevert = encodeErrorResult({ abi: Token.abi, errorName: 'ERC20InsufficientBalance', args: [H, 0n, 1n] })
  assert.deepEqual(ours[0].calls.map((c) => c.status), ['0x1', '0x1', '0x1', '0x0'])
  assert.equal(BigInt(ours[0].calls[1].returnData), 250n)
  assert.equal(ours[0].calls[3].error.data, expectedRevert)
  assert.equal(BigInt(ours[1].calls[0].returnData), 1000n)

  // Anvil numbers and hashes its simulated blocks its own way (it does not chain them on the base block)
  // and reports a failed call as {code: -3200, message: 'execution failed'} with the revert bytes in
  // returnData, where geth (and Keel) put them in error.data: only the calls' outcome is compared, and a
  // revert's bytes from where each node puts them.
  assert.equal(theirs.length, ours.length)
  for (const [i, block] of ours.entries()) {
    assert.equal(theirs[i].calls.length, block.calls.length)
    for (const [j, mine] of block.calls.entries()) {
      const other = theirs[i].calls[j]
      const at = `block ${i} call ${j}`
      assert.equal(mine.status, other.status, `${at}: status`)
      assert.equal(BigInt(mine.gasUsed), BigInt(other.gasUsed), `${at}: gasUsed`)
      if (mine.status === '0x1') assert.equal(mine.returnData, other.returnData, `${at}: returnData`)
      else assert.equal(mine.error.data, other.returnData, `${at}: the revert bytes`)
      const shape = (logs) => logs.map(({ address, topics, data }) => ({ address: lower(address), topics, data }))
      assert.deepEqual(shape(mine.logs), shape(other.logs), `${at}: logs`)
    }
  }
  assert.equal(ours[0].calls[0].logs.length, 1, 'the comparison covers a Transfer log')
})

// ---- what geth's simulation does that execution-apis' vectors (tests/eth_simulateV1/*.io) record ----

test('as the execution-apis vectors have it: a failed call returns nothing and its dropped logs keep their numbers; SELFDESTRUCT moves ether in traceTransfers', async () => {
  const logThenRevert = '0x3000000000000000000000000000000000000001'
  const logger = '0x3000000000000000000000000000000000000002'
  const destructor = '0x3000000000000000000000000000000000000003'
  const beneficiary = '0x3000000000000000000000000000000000000004'
  const [block] = await simulate({
    traceTransfers: true,
    blockStateCalls: [{
      stateOverrides: {
        [X]: { balance: q(10n ** 18n) },
        [logThenRevert]: { code: '0x60006000a060006000fd' }, // LOG0, REVERT
        [logger]: { code: '0x60006000a000' }, // LOG0, STOP
        [destructor]: { code: `0x73${beneficiary.slice(2)}ff`, balance: q(1000n) }, // SELFDESTRUCT(beneficiary)
        [beneficiary]: { balance: q(1n) },
      },
      calls: [{ from: X, to: logThenRevert }, { from: X, to: logger }, { from: X, to: destructor }],
    }],
  })
  const [reverted, logged, destructed] = block.calls
  assert.equal(reverted.status, '0x0')
  assert.equal(reverted.returnData, '0x', 'a failed call returns nothing (geth: ExecutionResult.Return)')
  assert.deepEqual(reverted.logs, [])
  assert.deepEqual(logged.logs.map((l) => [l.address, l.logIndex]), [[logger, '0x1']], 'index 0 went to the reverted call\'s dropped log')
  assert.deepEqual(
    destructed.logs.map((l) => [l.address, l.topics, l.data, l.logIndex]),
    [[NATIVE_ASSET, [TRANSFER_TOPIC, word(destructor), word(beneficiary)], word(1000n), '0x2']],
  )
})

test('as the execution-apis vectors have it: precompiles stay warm when overridden, the largest nonce runs without validation, override fields match in any case', async () => {
  // EXTCODEHASH(0x01), with and without code put at 0x01: geth warms the fork's precompiles whatever the overrides did
  const probe = '0x3000000000000000000000000000000000000005'
  const ecrecover = '0x0000000000000000000000000000000000000001'
  const gasOf = async (overrides) => {
    const [block] = await simulate({ blockStateCalls: [{ stateOverrides: { [probe]: { code: '0x60013f5000' }, ...overrides }, calls: [{ from: X, to: probe }] }] })
    assert.equal(block.calls[0].status, '0x1')
    return block.calls[0].gasUsed
  }
  assert.equal(await gasOf({ [ecrecover]: { code: '0x00' } }), await gasOf({}))
  assert.equal(await gasOf({ [ecrecover]: { movePrecompileToAddress: '0x0000000000000000000000000000000000123456' } }), await gasOf({}))

  const atMaxNonce = { [X]: { balance: q(10n ** 18n), nonce: '0xffffffffffffffff' } }
  const [block] = await simulate({ blockStateCalls: [{ stateOverrides: atMaxNonce, calls: [{ from: X, to: Z }, { from: X, to: Z }] }] })
  assert.deepEqual(block.calls.map((c) => c.status), ['0x1', '0x1'])
  const error = await simulateError({ validation: true, blockStateCalls: [{ stateOverrides: atMaxNonce, calls: [{ from: X, to: Z }] }] })
  assert.equal(error.code, -32603, JSON.stringify(error))
  assert.match(error.message, /^err: nonce has max value: address 0x1000000000000000000000000000000000000001, nonce: 18446744073709551615 \(supplied gas \d+\)$/)

  const refused = await simulateError({ blockStateCalls: [{ stateOverrides: { [Z]: { MovePrecompileToAddress: '0x0000000000000000000000000000000000123456' } } }] })
  assert.equal(refused.code, -32000)
  assert.equal(refused.message, `account ${Z} is not a precompile`)
})
