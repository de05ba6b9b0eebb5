// Every read method answers in the shape the execution-apis schemas define (strictly: no extra fields),
// checked on real data: a chain with transfers, contract deployments, storage writes and logs.

import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { crc32 } from 'node:zlib'
import { verifyMerkleProof } from '@ethereumjs/mpt'
import { RLP } from '@ethereumjs/rlp'
import { ContractFactory, Interface, JsonRpcProvider, Wallet, getBytes, hexlify, keccak256, toQuantity, zeroPadValue } from 'ethers'
import { compile } from '../helpers/contracts.js'
import { CHAIN_ID, DEV_ADDRESSES, DEV_KEYS, startNode } from '../helpers/node.js'
import { rpc, rpcResult, waitForBlock, waitForReceipt } from '../helpers/rpc.js'
import { validateMethodResult, validateSchema } from '../helpers/schema.js'

const { Storage, Reverter } = compile()
const EMPTY_TRIE_ROOT = '0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421'
const EMPTY_CODE_HASH = '0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470'

let node
let provider
/** Data made in before(): receipts of a transfer, a storage write and a log-emitting call. */
const chain = {}

const call = (method, params = []) => rpcResult(node.url, method, params)
/** Calls `method` and validates the result against its execution-apis result schema. */
async function checked(method, params = []) {
  return validateMethodResult(method, await call(method, params))
}

before(async () => {
  node = await startNode({ blockTime: 1 })
  provider = new JsonRpcProvider(node.url, CHAIN_ID, { staticNetwork: true, pollingInterval: 250 })
  const wallet = new Wallet(DEV_KEYS[0], provider)

  const storage = await new ContractFactory(Storage.abi, Storage.bytecode, wallet).deploy()
  await storage.waitForDeployment()
  chain.storage = await storage.getAddress()
  chain.storageCreation = storage.deploymentTransaction().hash
  chain.setReceipt = await (await storage.set(0x2a)).wait()
  const storage2 = await new ContractFactory(Storage.abi, Storage.bytecode, wallet).deploy()
  await storage2.waitForDeployment()
  chain.storage2 = await storage2.getAddress()

  const reverter = await new ContractFactory(Reverter.abi, Reverter.bytecode, wallet).deploy()
  await reverter.waitForDeployment()
  chain.reverter = await reverter.getAddress()
  chain.emitReceipt = await (await reverter.emitMany(3)).wait()

  chain.transferReceipt = await (await wallet.sendTransaction({ to: DEV_ADDRESSES[9], value: 12345n })).wait()
})

after(async () => {
  provider?.destroy()
  await node?.stop()
})

test('web3_clientVersion, net_version, net_listening, eth_chainId, eth_syncing, eth_accounts', async () => {
  const version = await call('web3_clientVersion')
  assert.equal(typeof version, 'string')
  assert.match(version, /^keel\/\S+/i)
  assert.equal(await checked('net_version'), String(CHAIN_ID))
  assert.equal(await call('net_listening'), true)
  assert.equal(await checked('eth_chainId'), '0x600d')
  assert.equal(await checked('eth_syncing'), false)
  assert.deepEqual(await checked('eth_accounts'), [])
})

test("rpc_modules: the namespaces served, each at \"1.0\", with rpc itself (geth's answer)", async () => {
  // hardhat: hardhat_getAutomine, which deployment tools ask to learn whether blocks are mined per transaction;
  // erigon, ots and trace: the calls of the Otterscan explorer (erigon_getHeaderByNumber, ots_*, trace_replayTransaction)
  assert.deepEqual(await call('rpc_modules'), { debug: '1.0', erigon: '1.0', eth: '1.0', hardhat: '1.0', net: '1.0', ots: '1.0', rpc: '1.0', trace: '1.0', txpool: '1.0', web3: '1.0' })
  const extra = await rpc(node.url, 'rpc_modules', [1])
  assert.equal(extra.error?.code, -32602)
})

test('eth_coinbase, eth_capabilities (an archive node: everything from block 0)', async () => {
  const head = await call('eth_getBlockByNumber', ['latest', false])
  assert.equal(await checked('eth_coinbase'), head.miner)
  const caps = await checked('eth_capabilities')
  assert.ok(BigInt(caps.head.number) >= BigInt(head.number))
  assert.equal((await call('eth_getBlockByNumber', [caps.head.number, false])).hash, caps.head.hash)
  for (const resource of ['state', 'tx', 'logs', 'receipts', 'blocks', 'stateproofs']) assert.deepEqual(caps[resource], { disabled: false, oldestBlock: '0x0' }, resource)
})

test('eth_config (EIP-7910): Osaka from genesis, with the fork id of the genesis hash', async () => {
  const config = await checked('eth_config')
  assert.equal(config.next, null)
  assert.equal(config.last, null)
  assert.equal(config.current.chainId, '0x600d')
  assert.equal(config.current.activationTime, 0)
  const genesisHash = (await call('eth_getBlockByNumber', ['0x0', false])).hash
  assert.equal(config.current.forkId, `0x${crc32(getBytes(genesisHash)).toString(16).padStart(8, '0')}`)
  assert.equal(config.current.precompiles.P256VERIFY, '0x0000000000000000000000000000000000000100')
  assert.equal(config.current.systemContracts.HISTORY_STORAGE_ADDRESS, '0x0000f90827f1c53a10cb7a02335b175320002935')
})

test('web3_sha3', async () => {
  const hash = await call('web3_sha3', ['0x68656c6c6f20776f726c64'])
  validateSchema('hash32', hash)
  assert.equal(hash, '0x47173285a8d7341e5e972fc677286384f802f8ef42a5ec5f03bbfa254cb01fad')
})

test('eth_blockNumber, eth_gasPrice, eth_maxPriorityFeePerGas, eth_feeHistory', async () => {
  const head = BigInt(await checked('eth_blockNumber'))
  assert.ok(head >= BigInt(chain.transferReceipt.blockNumber))
  const gasPrice = BigInt(await checked('eth_gasPrice'))
  const tip = BigInt(await checked('eth_maxPriorityFeePerGas'))
  const block = await call('eth_getBlockByNumber', ['latest', false])
  assert.ok(gasPrice >= BigInt(block.baseFeePerGas), `gas price ${gasPrice} below base fee ${BigInt(block.baseFeePerGas)}`)
  assert.ok(tip >= 0n)

  const history = await checked('eth_feeHistory', ['0x4', 'latest', [25, 75]])
  assert.equal(history.baseFeePerGas.length, 5)
  assert.equal(history.gasUsedRatio.length, 4)
  assert.equal(history.reward.length, 4)
  const oldest = BigInt(history.oldestBlock)
  const newest = BigInt((await call('eth_getBlockByNumber', [toQuantity(oldest + 3n), false])).baseFeePerGas)
  assert.equal(BigInt(history.baseFeePerGas[3]), newest)

  // the block count is geth's math.HexOrDecimal64: a JSON number or a decimal string count as well
  const at = toQuantity(oldest + 3n)
  const byHex = await checked('eth_feeHistory', ['0x4', at, [25, 75]])
  assert.deepEqual(await call('eth_feeHistory', [4, at, [25, 75]]), byHex)
  assert.deepEqual(await call('eth_feeHistory', ['4', at, [25, 75]]), byHex)
  // no percentiles asked: no reward field, as geth leaves it out
  assert.equal('reward' in (await checked('eth_feeHistory', ['0x2', at, []])), false)
  assert.equal('reward' in (await checked('eth_feeHistory', ['0x2', at])), false)
  const bad = await rpc(node.url, 'eth_feeHistory', ['four', at, []])
  assert.deepEqual(bad.error, { code: -32602, message: 'invalid argument 0: invalid hex or decimal integer "four"' })
})

test('eth_getBalance, eth_getTransactionCount, eth_getCode, eth_getStorageAt', async () => {
  const at = toQuantity(chain.transferReceipt.blockNumber)
  assert.equal(BigInt(await checked('eth_getBalance', [DEV_ADDRESSES[9], at])), 10_000n * 10n ** 18n + 12345n)
  assert.equal(await checked('eth_getTransactionCount', [DEV_ADDRESSES[0], at]), '0x6')
  assert.equal(await checked('eth_getCode', [chain.storage, 'latest']), Storage.deployedBytecode)
  assert.equal(await checked('eth_getCode', [DEV_ADDRESSES[1], 'latest']), '0x')
  const slot0 = await checked('eth_getStorageAt', [chain.storage, '0x0', 'latest'])
  assert.equal(slot0, zeroPadValue('0x2a', 32))
  const before = await checked('eth_getStorageAt', [chain.storage, '0x0', toQuantity(chain.setReceipt.blockNumber - 1)])
  assert.equal(before, zeroPadValue('0x', 32))
})

test('eth_getStorageValues, eth_baseFee, eth_blobBaseFee', async () => {
  const values = await checked('eth_getStorageValues', [{ [chain.storage]: ['0x0', '0x1'], [chain.storage2]: ['0x0'] }, 'latest'])
  assert.deepEqual(values, { [chain.storage]: [zeroPadValue('0x2a', 32), zeroPadValue('0x', 32)], [chain.storage2]: [zeroPadValue('0x', 32)] })
  // the next block's base fee: at most 12.5% away from the head's (EIP-1559), read while no block was sealed between
  let head
  let baseFee
  for (let tries = 0; tries < 5; tries++) {
    head = await rpcResult(node.url, 'eth_getBlockByNumber', ['latest', false])
    baseFee = BigInt(await checked('eth_baseFee', []))
    if ((await rpcResult(node.url, 'eth_blockNumber')) === head.number) break
  }
  const headFee = BigInt(head.baseFeePerGas)
  assert.ok(baseFee <= headFee + headFee / 8n + 1n && baseFee >= headFee - headFee / 8n - 1n, `${baseFee} vs head ${headFee}`)
  assert.equal(await checked('eth_blobBaseFee', []), '0x1', 'no blobs: the minimum blob base fee')
})

test('eth_getProof: account and storage proofs verify against the block stateRoot', async () => {
  const number = toQuantity(chain.setReceipt.blockNumber)
  const block = await call('eth_getBlockByNumber', [number, false])
  const proof = await checked('eth_getProof', [chain.storage, ['0x0'], number])

  assert.equal(keccak256(proof.accountProof[0]), block.stateRoot)
  const accountRlp = await verifyMerkleProof(getBytes(keccak256(chain.storage)), proof.accountProof.map(getBytes))
  assert.ok(accountRlp, 'the account proof proves no account')
  const [nonce, balance, storageRoot, codeHash] = RLP.decode(accountRlp).map((field) => hexlify(field))
  assert.equal(BigInt(nonce === '0x' ? 0 : nonce), BigInt(proof.nonce))
  assert.equal(BigInt(balance === '0x' ? 0 : balance), BigInt(proof.balance))
  assert.equal(storageRoot, proof.storageHash)
  assert.equal(codeHash, proof.codeHash)
  assert.equal(proof.codeHash, keccak256(Storage.deployedBytecode))
  assert.equal(proof.address.toLowerCase(), chain.storage.toLowerCase())

  assert.equal(proof.storageProof.length, 1)
  const [slot] = proof.storageProof
  assert.equal(BigInt(slot.value), 0x2an)
  assert.equal(keccak256(slot.proof[0]), proof.storageHash)
  const slotRlp = await verifyMerkleProof(getBytes(keccak256(zeroPadValue('0x', 32))), slot.proof.map(getBytes))
  assert.equal(BigInt(hexlify(RLP.decode(slotRlp))), 0x2an)

  // An account that does not exist: an exclusion proof with the empty-account fields.
  const absent = Wallet.createRandom().address
  const none = await checked('eth_getProof', [absent, [], number])
  assert.equal(keccak256(none.accountProof[0]), block.stateRoot)
  assert.equal(await verifyMerkleProof(getBytes(keccak256(absent)), none.accountProof.map(getBytes)), null)
  assert.equal(BigInt(none.balance), 0n)
  assert.equal(BigInt(none.nonce), 0n)
  assert.equal(none.codeHash, EMPTY_CODE_HASH)
  assert.equal(none.storageHash, EMPTY_TRIE_ROOT)
  // its slots are still answered, one entry per key asked, as geth answers them
  const noneSlots = await checked('eth_getProof', [absent, ['0x01', zeroPadValue('0x02', 32)], number])
  assert.deepEqual(noneSlots.storageProof, [
    // a key shorter than 32 bytes comes back as a quantity (geth's GetProof)
    { key: '0x1', value: '0x0', proof: [] },
    { key: zeroPadValue('0x02', 32), value: '0x0', proof: [] },
  ])
})

test('eth_call, eth_estimateGas, eth_createAccessList', async () => {
  const iface = new Interface(Storage.abi)
  const value = await checked('eth_call', [{ to: chain.storage, data: iface.encodeFunctionData('value') }, 'latest'])
  assert.equal(BigInt(value), 0x2an)
  const setData = iface.encodeFunctionData('set', [7])
  const gas = BigInt(await checked('eth_estimateGas', [{ from: DEV_ADDRESSES[1], to: chain.storage, data: setData }]))
  assert.ok(gas > 21000n && gas < 100_000n, `estimate ${gas}`)

  // geth's tracer (and execution-apis' tests/eth_createAccessList: create-al-contract, -multiple-reads,
  // -abi-revert) leaves the sender and the called contract out only as bare addresses: the slots the call
  // touches are listed, the called contract's too.
  const slot0 = zeroPadValue('0x', 32)
  const direct = await checked('eth_createAccessList', [{ from: DEV_ADDRESSES[1], to: chain.storage, data: setData }, 'latest'])
  assert.deepEqual(direct.accessList, [{ address: chain.storage.toLowerCase(), storageKeys: [slot0] }])
  assert.ok(BigInt(direct.gasUsed) > 21000n)
  const copyData = iface.encodeFunctionData('copyFrom', [chain.storage])
  const copied = await checked('eth_createAccessList', [{ from: DEV_ADDRESSES[1], to: chain.storage2, data: copyData }, 'latest'])
  const byAddress = Object.fromEntries(copied.accessList.map((item) => [item.address, item.storageKeys]))
  assert.deepEqual(byAddress, { [chain.storage.toLowerCase()]: [slot0], [chain.storage2.toLowerCase()]: [slot0] })
  // a transfer to an account without code touches no slot: nothing to list
  const transfer = await checked('eth_createAccessList', [{ from: DEV_ADDRESSES[1], to: DEV_ADDRESSES[2], value: '0x1' }, 'latest'])
  assert.deepEqual(transfer.accessList, [])
  assert.ok(BigInt(copied.gasUsed) > 21000n)
  const copyEstimate = BigInt(await checked('eth_estimateGas', [{ from: DEV_ADDRESSES[1], to: chain.storage2, data: copyData, accessList: copied.accessList }]))
  assert.ok(copyEstimate > 21000n, `estimate ${copyEstimate}`)
})

test("eth_createAccessList takes state overrides as its third parameter, as geth's does", async () => {
  const scratch = '0x00000000000000000000000000000000000a11ce'
  const slot5 = zeroPadValue('0x05', 32)
  // PUSH1 5 SLOAD STOP: reads slot 5 of the overridden code's own storage
  const overrides = { [scratch]: { code: '0x60055400' } }
  const listed = await checked('eth_createAccessList', [{ from: DEV_ADDRESSES[1], to: scratch }, 'latest', overrides])
  assert.deepEqual(listed.accessList, [{ address: scratch, storageKeys: [slot5] }])
  const plain = await checked('eth_createAccessList', [{ from: DEV_ADDRESSES[1], to: scratch }, 'latest'])
  assert.deepEqual(plain.accessList, [], 'without the override the address has no code')
  assert.ok(BigInt(listed.gasUsed) > BigInt(plain.gasUsed))
  const tooMany = await rpc(node.url, 'eth_createAccessList', [{ to: scratch }, 'latest', overrides, {}])
  assert.equal(tooMany.error?.code, -32602)
  assert.equal(tooMany.error?.message, 'too many arguments, want at most 3')
})

test('eth_getBlockByNumber (hashes and full), eth_getBlockByHash, eth_getBlockReceipts', async () => {
  const number = toQuantity(chain.emitReceipt.blockNumber)
  const byNumber = await checked('eth_getBlockByNumber', [number, false])
  assert.ok(byNumber.transactions.includes(chain.emitReceipt.hash))
  const full = await checked('eth_getBlockByNumber', [number, true])
  assert.equal(full.hash, byNumber.hash)
  assert.deepEqual(full.transactions.map((tx) => tx.hash), byNumber.transactions)
  const byHash = await checked('eth_getBlockByHash', [byNumber.hash, false])
  assert.deepEqual(byHash, byNumber)
  // geth's eth_getHeaderByNumber / ByHash: the block without its body fields (as newHeads sends it)
  const { transactions, uncles, size, withdrawals, ...headerFields } = byNumber
  assert.ok(transactions && uncles && size && withdrawals)
  assert.deepEqual(await call('eth_getHeaderByNumber', [number]), headerFields)
  assert.deepEqual(await call('eth_getHeaderByHash', [byNumber.hash]), headerFields)
  assert.equal(await call('eth_getHeaderByNumber', ['0xffffffff']), null)
  assert.equal(await call('eth_getHeaderByHash', [`0x${'ab'.repeat(32)}`]), null)
  assert.equal(await checked('eth_getBlockByNumber', ['0xffffffff', false]), null)
  await checked('eth_getBlockByNumber', ['latest', true])
  await checked('eth_getBlockByNumber', ['earliest', false])

  const receipts = await checked('eth_getBlockReceipts', [number])
  assert.equal(receipts.length, byNumber.transactions.length)
  const emitted = receipts.find((receipt) => receipt.transactionHash === chain.emitReceipt.hash)
  assert.equal(emitted.logs.length, 3)
  assert.equal(emitted.status, '0x1')
})

test('transactions by hash, by block hash and index, by block number and index; receipts', async () => {
  const receipt = chain.emitReceipt
  const tx = await checked('eth_getTransactionByHash', [receipt.hash])
  assert.equal(tx.blockHash, receipt.blockHash)
  assert.equal(tx.from.toLowerCase(), DEV_ADDRESSES[0].toLowerCase())
  const index = toQuantity(receipt.index)
  assert.deepEqual(await checked('eth_getTransactionByBlockHashAndIndex', [receipt.blockHash, index]), tx)
  assert.deepEqual(await checked('eth_getTransactionByBlockNumberAndIndex', [toQuantity(receipt.blockNumber), index]), tx)
  assert.equal(await checked('eth_getTransactionByBlockHashAndIndex', [receipt.blockHash, '0xff']), null)

  const fetched = await checked('eth_getTransactionReceipt', [receipt.hash])
  assert.equal(fetched.transactionHash, receipt.hash)
  assert.equal(fetched.logs.length, 3)
  for (const log of fetched.logs) validateSchema('Log', log)
  await checked('eth_getTransactionReceipt', [chain.transferReceipt.hash])
  const creation = await checked('eth_getTransactionReceipt', [chain.storageCreation])
  assert.equal(creation.to, null)
  assert.match(creation.contractAddress, /^0x[0-9a-f]{40}$/)
  assert.equal(await checked('eth_getTransactionByHash', [`0x${'ab'.repeat(32)}`]), null)
  assert.equal(await checked('eth_getTransactionReceipt', [`0x${'ab'.repeat(32)}`]), null)
})

test('block transaction counts and the uncle methods', async () => {
  const receipt = chain.emitReceipt
  const block = await call('eth_getBlockByHash', [receipt.blockHash, false])
  const count = toQuantity(block.transactions.length)
  assert.equal(await checked('eth_getBlockTransactionCountByNumber', [toQuantity(receipt.blockNumber)]), count)
  assert.equal(await checked('eth_getBlockTransactionCountByHash', [receipt.blockHash]), count)
  assert.equal(await call('eth_getUncleCountByBlockNumber', ['latest']), '0x0')
  assert.equal(await call('eth_getUncleCountByBlockHash', [receipt.blockHash]), '0x0')
  assert.equal(await call('eth_getUncleByBlockNumberAndIndex', ['latest', '0x0']), null)
})

test('eth_getLogs', async () => {
  const logs = await checked('eth_getLogs', [{ address: chain.reverter, fromBlock: '0x0', toBlock: 'latest' }])
  assert.equal(logs.length, 3)
  logs.forEach((log, i) => {
    assert.equal(BigInt(log.topics[2]), BigInt(i))
    assert.equal(log.transactionHash, chain.emitReceipt.hash)
  })
  const byHash = await checked('eth_getLogs', [{ blockHash: chain.emitReceipt.blockHash, topics: [null, null, zeroPadValue('0x01', 32)] }])
  assert.equal(byHash.length, 1)
  assert.deepEqual(byHash[0], logs[1])
  assert.deepEqual(await checked('eth_getLogs', [{ address: DEV_ADDRESSES[9], fromBlock: '0x0' }]), [])
})

test('log filters: eth_newFilter, eth_getFilterChanges, eth_getFilterLogs, eth_uninstallFilter', async () => {
  const id = await checked('eth_newFilter', [{ address: chain.reverter }])
  assert.deepEqual(await checked('eth_getFilterChanges', [id]), [])
  const wallet = new Wallet(DEV_KEYS[1], provider)
  const reverter = new ContractFactory(Reverter.abi, Reverter.bytecode).attach(chain.reverter).connect(wallet)
  const receipt = await (await reverter.emitMany(2)).wait()
  const changes = await checked('eth_getFilterChanges', [id])
  assert.equal(changes.length, 2)
  for (const log of changes) assert.equal(log.transactionHash, receipt.hash)
  const all = await checked('eth_getFilterLogs', [id])
  assert.equal(all.length, 2, 'the filter has no fromBlock, so it starts at latest when it was made')
  assert.equal(await checked('eth_uninstallFilter', [id]), true)
  assert.equal(await checked('eth_uninstallFilter', [id]), false)
  const gone = await rpc(node.url, 'eth_getFilterChanges', [id])
  assert.equal(gone.error?.code, -32000)
  assert.equal(gone.error?.message, 'filter not found')
})

test('eth_newBlockFilter and eth_newPendingTransactionFilter', async () => {
  const blocks = await checked('eth_newBlockFilter')
  const pending = await checked('eth_newPendingTransactionFilter')
  const head = BigInt(await call('eth_blockNumber'))
  const wallet = new Wallet(DEV_KEYS[2], provider)
  const tx = await wallet.sendTransaction({ to: DEV_ADDRESSES[9], value: 1n })
  await tx.wait()
  await waitForBlock(node.url, head + 1n)
  const hashes = await checked('eth_getFilterChanges', [blocks])
  assert.ok(hashes.length >= 1)
  for (const hash of hashes) validateSchema('hash32', hash)
  const newest = await call('eth_getBlockByNumber', [toQuantity(head + 1n), false])
  assert.ok(hashes.includes(newest.hash))
  const txHashes = await checked('eth_getFilterChanges', [pending])
  assert.ok(txHashes.includes(tx.hash), `pending filter missed ${tx.hash}: ${JSON.stringify(txHashes)}`)
  assert.equal(await call('eth_uninstallFilter', [blocks]), true)
  assert.equal(await call('eth_uninstallFilter', [pending]), true)
})

test('txpool_status, txpool_content, txpool_inspect with a queued transaction', async () => {
  const wallet = new Wallet(DEV_KEYS[3], provider)
  const next = await provider.getTransactionCount(wallet.address, 'pending')
  const block = await call('eth_getBlockByNumber', ['latest', false])
  const maxFeePerGas = BigInt(block.baseFeePerGas) * 2n + 10n ** 9n
  const raw = await wallet.signTransaction({
    type: 2,
    chainId: CHAIN_ID,
    nonce: next + 1,
    to: DEV_ADDRESSES[9],
    value: 5n,
    gasLimit: 21000n,
    maxFeePerGas,
    maxPriorityFeePerGas: 10n ** 9n,
  })
  const hash = await call('eth_sendRawTransaction', [raw])

  const status = await call('txpool_status')
  validateSchema('TxpoolStatus', status)
  assert.ok(BigInt(status.queued) >= 1n)

  const content = await call('txpool_content')
  validateSchema('TxpoolContent', content)
  const queuedByAddress = Object.entries(content.queued).find(([address]) => address.toLowerCase() === wallet.address.toLowerCase())
  assert.ok(queuedByAddress, `queued tx missing from txpool_content: ${JSON.stringify(content)}`)
  const queuedTx = queuedByAddress[1][String(next + 1)]
  assert.equal(queuedTx.hash, hash)
  assert.equal(queuedTx.blockHash, null)

  const inspect = await call('txpool_inspect')
  assert.deepEqual(Object.keys(inspect).sort(), ['pending', 'queued'])
  const summary = Object.entries(inspect.queued).find(([address]) => address.toLowerCase() === wallet.address.toLowerCase())?.[1]
  assert.ok(summary, `queued tx missing from txpool_inspect: ${JSON.stringify(inspect)}`)
  assert.equal(summary[String(next + 1)], `${DEV_ADDRESSES[9]}: 5 wei + 21000 gas × ${maxFeePerGas} wei`)

  // Filling the gap makes both executable; they leave the pool once mined.
  const filler = await wallet.sendTransaction({ to: DEV_ADDRESSES[9], value: 1n, nonce: next })
  await filler.wait()
  await waitForReceipt(node.url, hash)
})

test('BLOCKHASH inside eth_call reads the canonical hash of the block before the one it runs on', async () => {
  const head = await rpcResult(node.url, 'eth_getBlockByNumber', ['latest', false])
  const parent = await rpcResult(node.url, 'eth_getBlockByNumber', [toQuantity(BigInt(head.number) - 1n), false])
  // NUMBER PUSH1 1 SWAP1 SUB BLOCKHASH PUSH1 0 MSTORE PUSH1 32 PUSH1 0 RETURN
  const code = '0x4360019003406000526020 6000f3'.replace(' ', '')
  const probe = '0x00000000000000000000000000000000000b10c4'
  const result = await rpcResult(node.url, 'eth_call', [{ to: probe }, head.number, { [probe]: { code } }])
  assert.equal(result, parent.hash)
})
