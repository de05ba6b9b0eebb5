// Genesis: anvil's dev keys, the default operator genesis, validation messages, and a geth-format
// genesis.json served end to end (alloc balance, nonce, code and storage; chain id from the file).

import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, statSync, writeFileSync, readFileSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createMPT } from '@ethereumjs/mpt'
import { Account, bytesToHex, hexToBytes, setLengthLeft } from '@ethereumjs/util'
import { keccak_256 as keccak256 } from '@noble/hashes/sha3.js'
import { RLP } from '@ethereumjs/rlp'
import { DEV_ADDRESSES, resolveGenesis, validateGenesis } from '../../dist/chain/genesis.js'
import { HISTORY_STORAGE } from '../../dist/chain/system-contracts.js'

const CREATE2_ADDRESS = '0x4e59b44847b379578588920ca78fbf26c0b4956c'
const CREATE2_CODE = '0x7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe03601600081602082378035828234f58015156039578182fd5b8082525050506014600cf3'
import { DEV_ADDRESSES as DERIVED_DEV_ADDRESSES, DEV_KEYS, startNode } from '../helpers/node.js'
import { rpcResult } from '../helpers/rpc.js'

let work
before(() => {
  work = mkdtempSync(join(tmpdir(), 'keel-genesis-'))
})
after(() => rmSync(work, { recursive: true, force: true }))

test('--dev funds the ten accounts anvil and Hardhat fund', () => {
  assert.equal(DEV_ADDRESSES.length, 10)
  assert.equal(DEV_ADDRESSES[0], '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266')
  assert.equal(DEV_ADDRESSES[1], '0x70997970c51812dc3a010c7d01b50e0d17dc79c8')
  assert.equal(DEV_ADDRESSES[9], '0xa0ee7a142d267c1f36714e4a8f75612f20a79720')
  // the written-out list is the mnemonic's derivation (ethers' BIP-39/BIP-32, m/44'/60'/0'/0/i)
  assert.deepEqual(DEV_ADDRESSES, DERIVED_DEV_ADDRESSES.map((a) => a.toLowerCase()))
  assert.equal(DEV_KEYS[0], '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80')
  const genesis = resolveGenesis({ dataDir: join(work, 'dev'), dev: true, chainId: 24589 }).genesis
  // and EIP-2935's history storage contract, deployed as geth --dev and anvil deploy it, and the CREATE2
  // deployer anvil deploys (its code as on mainnet at the same address)
  assert.deepEqual(Object.keys(genesis.alloc), [HISTORY_STORAGE.address, CREATE2_ADDRESS, ...DEV_ADDRESSES])
  for (const address of DEV_ADDRESSES) assert.equal(BigInt(genesis.alloc[address].balance), 10_000n * 10n ** 18n)
  assert.deepEqual(genesis.alloc[HISTORY_STORAGE.address], { balance: '0x0', nonce: '0x1', code: HISTORY_STORAGE.code })
  assert.deepEqual(genesis.alloc[CREATE2_ADDRESS], { balance: '0x0', nonce: '0x1', code: CREATE2_CODE })
})

test('the default genesis credits a new operator key kept with 0600 permissions, once', () => {
  const dataDir = join(work, 'default')
  const first = resolveGenesis({ dataDir, dev: false, chainId: 24589 })
  assert.equal(first.createdOperatorKey, true)
  assert.match(first.operatorAddress, /^0x[0-9a-f]{40}$/)
  const keyFile = join(dataDir, 'operator.key')
  assert.equal(statSync(keyFile).mode & 0o777, 0o600)
  assert.deepEqual(Object.keys(first.genesis.alloc), [HISTORY_STORAGE.address, CREATE2_ADDRESS, first.operatorAddress])
  assert.equal(first.genesis.config.chainId, 24589)
  // a second start reads the same genesis and key back
  const second = resolveGenesis({ dataDir, dev: false, chainId: 24589 })
  assert.equal(second.createdOperatorKey, false)
  assert.equal(second.operatorAddress, first.operatorAddress)
  assert.deepEqual(second.genesis, JSON.parse(readFileSync(join(dataDir, 'genesis.json'), 'utf8')))
})

test('a malformed genesis is refused with a message naming the field', () => {
  const base = { config: { chainId: 7 }, gasLimit: '0x1c9c380', alloc: {} }
  const refuse = (g, message) => assert.throws(() => validateGenesis(g, 'g.json'), (err) => err.message === `genesis g.json: ${message}`)
  refuse([], 'expected a JSON object')
  refuse({ ...base, config: undefined }, 'missing "config" object')
  refuse({ ...base, config: { chainId: -1 } }, 'config.chainId must be a positive integer')
  refuse({ ...base, gasLimit: 'lots' }, '"gasLimit" must be a hex or decimal string')
  refuse({ ...base, extraData: 'zz' }, '"extraData" must be 0x-prefixed hex')
  refuse({ ...base, extraData: `0x${'00'.repeat(33)}` }, '"extraData" is longer than 32 bytes')
  refuse({ ...base, alloc: { nope: {} } }, 'alloc: "nope" is not an address')
  refuse({ ...base, alloc: { ['0x' + '11'.repeat(20)]: { balance: 'much' } } }, `alloc.0x${'11'.repeat(20)}.balance must be a hex or decimal string`)
  assert.equal(validateGenesis(base, 'g.json').config.chainId, 7)
})

test('a geth-format genesis.json: its chain id, and balances, nonces, code and storage from alloc', async () => {
  const contract = '0x' + '42'.repeat(20)
  const holder = '0x' + '24'.repeat(20)
  const code = '0x6080604052600080fd'
  const genesis = {
    config: {
      chainId: 777, homesteadBlock: 0, eip150Block: 0, eip155Block: 0, eip158Block: 0, byzantiumBlock: 0,
      constantinopleBlock: 0, petersburgBlock: 0, istanbulBlock: 0, berlinBlock: 0, londonBlock: 0,
      mergeNetsplitBlock: 0, terminalTotalDifficulty: 0, shanghaiTime: 0, cancunTime: 0, pragueTime: 0,
    },
    nonce: '0x0',
    timestamp: '0x0',
    extraData: '0x6b65656c',
    gasLimit: '0x1c9c380',
    difficulty: '0x0',
    baseFeePerGas: '0x7',
    alloc: {
      [holder]: { balance: '1000000000000000000000', nonce: '0x5' },
      [contract.slice(2)]: { balance: '0x1', code, storage: { '0x0': '0x2a', '0x01': '0x' + 'ff'.repeat(32) } },
    },
  }
  const file = join(work, 'genesis-777.json')
  writeFileSync(file, JSON.stringify(genesis))
  const dataDir = join(work, 'chain-777')
  const node = await startNode({ dev: false, dataDir, args: ['--genesis', file] })
  try {
    assert.equal(await rpcResult(node.url, 'eth_chainId'), '0x309')
    assert.equal(await rpcResult(node.url, 'net_version'), '777')
    assert.equal(await rpcResult(node.url, 'eth_getBalance', [holder, '0x0']), '0x3635c9adc5dea00000')
    assert.equal(await rpcResult(node.url, 'eth_getTransactionCount', [holder, '0x0']), '0x5')
    assert.equal(await rpcResult(node.url, 'eth_getCode', [contract, '0x0']), code)
    assert.equal(await rpcResult(node.url, 'eth_getStorageAt', [contract, '0x0', '0x0']), '0x' + '2a'.padStart(64, '0'))
    assert.equal(await rpcResult(node.url, 'eth_getStorageAt', [contract, '0x1', 'latest']), '0x' + 'ff'.repeat(32))
    const block0 = await rpcResult(node.url, 'eth_getBlockByNumber', ['0x0', false])
    assert.equal(block0.extraData, '0x6b65656c')
    assert.equal(block0.gasLimit, '0x1c9c380')
    assert.equal(block0.baseFeePerGas, '0x7')
    // the genesis state root covers exactly the allocated accounts: rebuild it independently
    const storage = await createMPT({ useKeyHashing: true })
    await storage.put(setLengthLeft(hexToBytes('0x00'), 32), RLP.encode(hexToBytes('0x2a')))
    await storage.put(setLengthLeft(hexToBytes('0x01'), 32), RLP.encode(hexToBytes('0x' + 'ff'.repeat(32))))
    const state = await createMPT({ useKeyHashing: true })
    await state.put(hexToBytes(holder), new Account(5n, 10n ** 21n).serialize())
    await state.put(hexToBytes(contract), new Account(0n, 1n, storage.root(), keccak256(hexToBytes(code))).serialize())
    assert.equal(block0.stateRoot, bytesToHex(state.root()))
    assert.ok(!existsSync(join(node.dataDir, 'operator.key')), 'no operator key is made for a given genesis')
    // the same data folder cannot be restarted with a different genesis
    const other = join(work, 'genesis-778.json')
    writeFileSync(other, JSON.stringify({ ...genesis, config: { ...genesis.config, chainId: 778 } }))
    await node.stop()
    await assert.rejects(
      startNode({ dev: false, dataDir, args: ['--genesis', other] }),
      /already holds a chain with a different genesis/,
    )
  } finally {
    await node.stop()
  }
})

test('a chain whose base fee is 0 still gets sane fee suggestions, and wallets can send with them', async () => {
  const { JsonRpcProvider, Wallet } = await import('ethers')
  const key = '0x' + '5a'.repeat(32)
  const sender = new Wallet(key)
  const genesis = {
    config: { chainId: 24589, londonBlock: 0, eip155Block: 0, eip158Block: 0, terminalTotalDifficulty: 0, shanghaiTime: 0, cancunTime: 0, pragueTime: 0, osakaTime: 0,
      homesteadBlock: 0, eip150Block: 0, byzantiumBlock: 0, constantinopleBlock: 0, petersburgBlock: 0, istanbulBlock: 0, berlinBlock: 0, mergeNetsplitBlock: 0 },
    gasLimit: '0x3938700',
    baseFeePerGas: '0x0',
    alloc: { [sender.address]: { balance: '0xde0b6b3a7640000' } },
  }
  const file = join(work, 'genesis-free.json')
  writeFileSync(file, JSON.stringify(genesis))
  const node = await startNode({ dev: false, blockTime: 0, args: ['--genesis', file] })
  try {
    assert.equal(BigInt((await rpcResult(node.url, 'eth_getBlockByNumber', ['latest', false])).baseFeePerGas), 0n)
    const tip = BigInt(await rpcResult(node.url, 'eth_maxPriorityFeePerGas'))
    const gasPrice = BigInt(await rpcResult(node.url, 'eth_gasPrice'))
    assert.ok(tip > 0n, 'a positive tip suggestion even with no fee market')
    assert.equal(gasPrice, tip, 'gas price = base fee (0) + suggested tip')
    const history = await rpcResult(node.url, 'eth_feeHistory', ['0x1', 'latest', [50]])
    assert.deepEqual(history.baseFeePerGas.map(BigInt), [0n, 0n])
    const provider = new JsonRpcProvider(node.url, 24589, { staticNetwork: true })
    // ethers reads a zero base fee as "no EIP-1559" and prices with eth_gasPrice: that must be usable
    const fees = await provider.getFeeData()
    assert.equal(fees.gasPrice, gasPrice)
    const legacy = await (await sender.connect(provider).sendTransaction({ to: '0x' + '77'.repeat(20), value: 1n })).wait()
    assert.equal(legacy.status, 1)
    // viem keeps EIP-1559 and adds eth_maxPriorityFeePerGas to the zero base fee
    const { createPublicClient, createWalletClient, defineChain, http } = await import('viem')
    const { privateKeyToAccount } = await import('viem/accounts')
    const chain = defineChain({ id: 24589, name: 'Keel', nativeCurrency: { name: 'Keel', symbol: 'KEEL', decimals: 18 }, rpcUrls: { default: { http: [node.url] } } })
    const publicClient = createPublicClient({ chain, transport: http() })
    const estimate = await publicClient.estimateFeesPerGas()
    assert.ok(estimate.maxPriorityFeePerGas > 0n && estimate.maxFeePerGas >= estimate.maxPriorityFeePerGas)
    const wallet = createWalletClient({ chain, transport: http(), account: privateKeyToAccount(key) })
    const hash = await wallet.sendTransaction({ to: '0x' + '77'.repeat(20), value: 1n })
    assert.equal((await publicClient.waitForTransactionReceipt({ hash })).status, 'success')
    provider.destroy()
  } finally {
    await node.stop()
  }
})
