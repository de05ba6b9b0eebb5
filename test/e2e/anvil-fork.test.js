// Foundry's anvil forking Keel (`anvil --fork-url`, the fork backend `forge test --fork-url` uses too): alloy
// reads Keel's blocks, accounts, code and storage over JSON-RPC and deserialises them strictly, so a field
// in the wrong shape fails the fork. The forked chain must show Keel's state at the fork block, and
// transactions sent to the fork must stay there.

import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { after, before, test } from 'node:test'
import { Contract, ContractFactory, JsonRpcProvider, Wallet } from 'ethers'
import { compile } from '../helpers/contracts.js'
import { anvilBin, CHAIN_ID, DEV_KEYS, startNode, target, waitForLine } from '../helpers/node.js'

const { Token } = compile()
const HOLDER = '0x00000000000000000000000000000000000c0ffe'

let node
let keel
let anvil
let fork
let token

before(async () => {
  node = await startNode({ blockTime: 1 })
  keel = new JsonRpcProvider(node.url, CHAIN_ID, { staticNetwork: true, pollingInterval: 200 })
  const deployed = await new ContractFactory(Token.abi, Token.bytecode, new Wallet(DEV_KEYS[0], keel)).deploy()
  await deployed.waitForDeployment()
  token = await deployed.getAddress()
  await (await deployed.transfer(HOLDER, 1234n)).wait()
})

after(async () => {
  fork?.destroy()
  keel?.destroy()
  if (anvil !== undefined && anvil.exitCode === null) {
    const exited = new Promise((resolve) => anvil.once('exit', resolve))
    anvil.kill('SIGTERM')
    await exited
  }
  await node?.stop()
})

test('anvil --fork-url Keel: the fork starts from Keel\'s head with its blocks, code and storage', { skip: target !== 'keel' && 'forks the node under test' }, async () => {
  anvil = spawn(anvilBin, ['--fork-url', node.url, '--host', '127.0.0.1', '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] })
  const [, host, port] = await waitForLine(anvil, /Listening on ([\d.]+):(\d+)/, 30_000)
  fork = new JsonRpcProvider(`http://${host}:${port}`, CHAIN_ID, { staticNetwork: true, pollingInterval: 200 })

  assert.equal((await fork.getNetwork()).chainId, BigInt(CHAIN_ID))
  const forkBlock = await fork.getBlockNumber()
  const [ours, theirs] = await Promise.all([keel.getBlock(forkBlock), fork.getBlock(forkBlock)])
  assert.equal(theirs.hash, ours.hash, 'the fork block is Keel\'s')
  assert.equal(await fork.getCode(token), await keel.getCode(token))
  const onFork = new Contract(token, Token.abi, fork)
  assert.equal(await onFork.balanceOf(HOLDER), 1234n)

  // a transfer on the fork changes the fork only
  const wallet = new Wallet(DEV_KEYS[0], fork)
  const receipt = await (await new Contract(token, Token.abi, wallet).transfer(HOLDER, 1n)).wait()
  assert.equal(receipt.status, 1)
  assert.equal(await onFork.balanceOf(HOLDER), 1235n)
  assert.equal(await new Contract(token, Token.abi, keel).balanceOf(HOLDER), 1234n)
})
