// The deterministic CREATE2 deployer (0x4e59b448…956C), which Foundry's `forge script` deploys
// `new C{salt: s}()` through: Keel's own geneses hold it, as anvil's does, and with
// --rpc-allow-unprotected-txs (geth's --rpc.allow-unprotected-txs) a chain whose genesis lacks it can
// take its keyless pre-EIP-155 deployment transaction, which is refused without the option. Driven with
// viem, as a deployment script would.

import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { concat, getContractAddress, keccak256, pad, parseEther, toHex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { devGenesis } from '../../dist/chain/genesis.js'
import { CHAIN_ID, DEV_KEYS, startNode, target } from '../helpers/node.js'
import { rpc, rpcResult, waitForReceipt } from '../helpers/rpc.js'
import { validateMethodResult } from '../helpers/schema.js'
import { httpClients } from '../helpers/viem.js'

const DEPLOYER = '0x4e59b44847b379578588920ca78fbf26c0b4956c'
/** Its runtime code, as on mainnet and in anvil's genesis. */
const DEPLOYER_CODE = '0x7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe03601600081602082378035828234f58015156039578182fd5b8082525050506014600cf3'
/** The keyless deployment: legacy, v = 27, r = s = 0x2222…, nonce 0, 100 gwei, gas 100,000 (github.com/Arachnid/deterministic-deployment-proxy). */
const DEPLOYMENT_TX = '0xf8a58085174876e800830186a08080b853604580600e600039806000f350fe7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe03601600081602082378035828234f58015156039578182fd5b8082525050506014600cf31ba02222222222222222222222222222222222222222222222222222222222222222a02222222222222222222222222222222222222222222222222222222222222222'
const DEPLOYMENT_SIGNER = '0x3fab184622dc19b6109349b94811493bf2a45362'

/** Init code of a contract whose runtime (PUSH1 42, MSTORE, RETURN 32 bytes) answers 42 to any call. */
const RUNTIME = '0x602a60005260206000f3'
const INIT_CODE = `0x600a600c600039600a6000f3${RUNTIME.slice(2)}`

/** The nodes running (a restart replaces its handle in place) */
const nodes = []
const dirs = []
after(async () => {
  for (const node of nodes) await node.stop()
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

test('--dev: the CREATE2 deployer is in the genesis and deploys at the address CREATE2 gives', async () => {
  const node = await startNode({ blockTime: 1 })
  nodes.push(node)
  assert.equal(await rpcResult(node.url, 'eth_getCode', [DEPLOYER, 'latest']), DEPLOYER_CODE)
  assert.equal(await rpcResult(node.url, 'eth_getCode', [DEPLOYER, '0x0']), DEPLOYER_CODE, 'from the genesis block on')

  const { publicClient, walletClient } = httpClients(node.url, privateKeyToAccount(DEV_KEYS[3]))
  const salt = keccak256(toHex('keel create2 e2e'))
  const predicted = getContractAddress({ opcode: 'CREATE2', from: DEPLOYER, salt, bytecode: INIT_CODE })
  // the deployer answers the address it deploys at, 20 bytes
  const answered = await publicClient.call({ to: DEPLOYER, data: concat([salt, INIT_CODE]) })
  assert.equal(answered.data, predicted.toLowerCase())

  // a contract's nonce starts at 1 (EIP-161), as the deployer's did on mainnet; anvil's genesis gives it 0
  const nonceBefore = await publicClient.getTransactionCount({ address: DEPLOYER })
  assert.equal(nonceBefore, target === 'keel' ? 1 : 0)
  const hash = await walletClient.sendTransaction({ to: DEPLOYER, data: concat([salt, INIT_CODE]) })
  const receipt = await publicClient.waitForTransactionReceipt({ hash, timeout: 20_000 })
  assert.equal(receipt.status, 'success')
  assert.equal(receipt.contractAddress, null, 'a call to the deployer, not a creation')
  assert.equal(await publicClient.getCode({ address: predicted }), RUNTIME)
  const fortyTwo = await publicClient.call({ to: predicted, data: '0x' })
  assert.equal(BigInt(fortyTwo.data), 42n)
  assert.equal(await publicClient.getTransactionCount({ address: DEPLOYER }), nonceBefore + 1, 'CREATE2 advances the creator\'s nonce')

  // the same salt and code again: the address is taken, the deployer reverts, and nothing is sent
  const again = await rpc(node.url, 'eth_estimateGas', [{ from: walletClient.account.address, to: DEPLOYER, data: concat([salt, INIT_CODE]) }])
  assert.equal(again.error?.code, 3, JSON.stringify(again))
  assert.equal(again.error.message, 'execution reverted')
})

test('--rpc-allow-unprotected-txs: the keyless deployment of the CREATE2 deployer, refused without it', { skip: target !== 'keel' && 'a Keel genesis file' }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-create2-'))
  dirs.push(dir)
  const genesis = devGenesis(CHAIN_ID)
  delete genesis.alloc[DEPLOYER]
  const file = join(dir, 'genesis.json')
  writeFileSync(file, JSON.stringify(genesis))
  let node = await startNode({ blockTime: 1, args: ['--genesis', file] })
  nodes.push(node)
  assert.equal(await rpcResult(node.url, 'eth_getCode', [DEPLOYER, 'latest']), '0x')

  // the signer needs gas price × gas = 0.01 ether
  const { publicClient, walletClient } = httpClients(node.url, privateKeyToAccount(DEV_KEYS[5]))
  const funding = await walletClient.sendTransaction({ to: DEPLOYMENT_SIGNER, value: parseEther('0.01') })
  await publicClient.waitForTransactionReceipt({ hash: funding, timeout: 20_000 })

  const refused = await rpc(node.url, 'eth_sendRawTransaction', [DEPLOYMENT_TX])
  assert.deepEqual(refused.error, { code: -32000, message: 'only replay-protected (EIP-155) transactions allowed over RPC' })
  assert.equal(await rpcResult(node.url, 'eth_getTransactionCount', [DEPLOYMENT_SIGNER, 'pending']), '0x0', 'nothing pooled')

  node = await node.restart({ args: ['--genesis', file, '--rpc-allow-unprotected-txs'] })
  nodes[nodes.length - 1] = node
  const { publicClient: client } = httpClients(node.url, privateKeyToAccount(DEV_KEYS[5]))
  const hash = await rpcResult(node.url, 'eth_sendRawTransaction', [DEPLOYMENT_TX])
  assert.equal(hash, keccak256(DEPLOYMENT_TX))
  const receipt = await waitForReceipt(node.url, hash)
  assert.equal(receipt.status, '0x1')
  assert.equal(receipt.from, DEPLOYMENT_SIGNER)
  assert.equal(receipt.contractAddress, DEPLOYER)
  assert.equal(await rpcResult(node.url, 'eth_getCode', [DEPLOYER, 'latest']), DEPLOYER_CODE)
  assert.equal(await rpcResult(node.url, 'eth_getBalance', [DEPLOYMENT_SIGNER, 'latest']), toHex(parseEther('0.01') - BigInt(receipt.gasUsed) * 100_000_000_000n))

  // as geth shows an unprotected transaction: no chainId, v 27 or 28
  const tx = await rpcResult(node.url, 'eth_getTransactionByHash', [hash])
  validateMethodResult('eth_getTransactionByHash', tx)
  assert.equal(tx.type, '0x0')
  assert.equal('chainId' in tx, false)
  assert.equal(tx.v, '0x1b')
  assert.equal(tx.r, `0x${'22'.repeat(32)}`)
  assert.equal(tx.s, `0x${'22'.repeat(32)}`)
  assert.equal(tx.from, DEPLOYMENT_SIGNER)
  assert.equal(await rpcResult(node.url, 'eth_getRawTransactionByHash', [hash]), DEPLOYMENT_TX)
  const viemTx = await client.getTransaction({ hash })
  assert.equal(viemTx.chainId, undefined)
  assert.equal(viemTx.v, 27n)

  // a deployment through it works as on a --dev chain
  const { walletClient: deployerUser } = httpClients(node.url, privateKeyToAccount(DEV_KEYS[6]))
  const salt = pad('0x01', { size: 32 })
  const sent = await deployerUser.sendTransaction({ to: DEPLOYER, data: concat([salt, INIT_CODE]) })
  assert.equal((await client.waitForTransactionReceipt({ hash: sent, timeout: 20_000 })).status, 'success')
  assert.equal(await client.getCode({ address: getContractAddress({ opcode: 'CREATE2', from: DEPLOYER, salt, bytecode: INIT_CODE }) }), RUNTIME)
})
