// keel credit against a real node started without --dev (so it generates operator.key and funds it).

import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { Wallet, getAddress } from 'ethers'
import { startNode } from '../helpers/node.js'
import { rpcResult } from '../helpers/rpc.js'
import { keelCli } from '../helpers/keel-cli.js'
import { formatAmount } from '../../dist/operator/units.js'

const ETHER = 10n ** 18n
let node
let operator

before(async () => {
  node = await startNode({ dev: false, blockTime: 0, args: ['--metrics-port', '0'] })
  operator = new Wallet(readFileSync(join(node.dataDir, 'operator.key'), 'utf8').trim()).address
  assert.match(node.stdout(), new RegExp(`operator address ${operator.toLowerCase()}`), 'the node funds the key it generated')
})
after(async () => {
  await node?.stop()
})

const credit = (args, opts) => keelCli(['credit', ...args, '--rpc', node.url, '--data-dir', node.dataDir], opts)
const balance = async (address) => BigInt(await rpcResult(node.url, 'eth_getBalance', [address, 'latest']))
const nonce = async (address) => BigInt(await rpcResult(node.url, 'eth_getTransactionCount', [address, 'latest']))

test('credits a fresh address, waits for the receipt and prints the new balance', async () => {
  const to = Wallet.createRandom().address
  const { code, stdout, stderr } = await credit([to, '1.5'])
  assert.equal(stderr, '')
  assert.equal(code, 0)
  assert.equal(await balance(to), 15n * ETHER / 10n)
  assert.match(stdout, new RegExp(`^credited 1\\.5 ether to ${to} from ${getAddress(operator)}\\n`))
  assert.match(stdout, /^transaction 0x[0-9a-f]{64} in block \d+$/m)
  assert.match(stdout, new RegExp(`^new balance of ${to}: 1\\.5 ether \\(1500000000000000000 wei\\)$`, 'm'))
  const txHash = /transaction (0x[0-9a-f]{64})/.exec(stdout)[1]
  const tx = await rpcResult(node.url, 'eth_getTransactionByHash', [txHash])
  assert.equal(tx.type, '0x2', 'an EIP-1559 transaction')
  assert.equal(tx.from.toLowerCase(), operator.toLowerCase())
})

test('--unit gwei and --unit wei, and an all-lowercase address (no checksum to check)', async () => {
  const to = Wallet.createRandom().address.toLowerCase()
  assert.equal((await credit([to, '2', '--unit', 'gwei'])).code, 0)
  assert.equal((await credit([to, '7', '--unit', 'wei'])).code, 0)
  assert.equal(await balance(to), 2n * 10n ** 9n + 7n)
})

test('refusals: exact messages, exit code 2, and no transaction sent', async () => {
  const nonceBefore = await nonce(operator)
  const good = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8'
  const badChecksum = '0x70997970C51812dc3A010C7d01b50e0d17dc79c8'
  const treasury = await balance(operator)
  const block = await rpcResult(node.url, 'eth_getBlockByNumber', ['latest', false])
  const tip = BigInt(await rpcResult(node.url, 'eth_maxPriorityFeePerGas'))
  const maxGasCost = 21_000n * (2n * BigInt(block.baseFeePerGas) + tip)
  const op = getAddress(operator)
  const cases = [
    [[badChecksum, '1'], `keel: invalid address "${badChecksum}": wrong EIP-55 checksum (mistyped?); check the address, or give it all in lowercase to skip the check\n`],
    [['0x7099', '1'], 'keel: invalid address "0x7099": expected 0x followed by 40 hex digits\n'],
    [[good, '0'], 'keel: amount must be greater than zero (got 0)\n'],
    [[good, '0.000'], 'keel: amount must be greater than zero (got 0.000)\n'],
    [[good, '-1'], 'keel: amount must be greater than zero (got -1)\n'],
    [[good, 'lots'], 'keel: invalid amount "lots": expected a decimal number of ether\n'],
    [[good, '1.5', '--unit', 'wei'], 'keel: invalid amount "1.5": wei amounts are whole numbers\n'],
    [[good, '0.0000000001', '--unit', 'gwei'], 'keel: invalid amount "0.0000000001": gwei has at most 9 decimals\n'],
    [[good, '1', '--unit', 'finney'], 'keel: invalid --unit "finney": expected ether, gwei or wei\n'],
    [[good, formatAmount(treasury + 1n)],
      `keel: amount ${formatAmount(treasury + 1n)} ether is above the treasury balance: ${op} holds ${formatAmount(treasury)} ether\n`],
    [[good, formatAmount(treasury)],
      `keel: amount ${formatAmount(treasury)} ether plus up to ${formatAmount(maxGasCost)} ether of gas is above the treasury balance: ${op} holds ${formatAmount(treasury)} ether\n`],
  ]
  for (const [args, message] of cases) {
    const { code, stdout, stderr } = await credit(args)
    assert.equal(stderr, message, args.join(' '))
    assert.equal(code, 2, args.join(' '))
    assert.equal(stdout, '')
  }
  assert.equal(await nonce(operator), nonceBefore, 'no refused credit sent a transaction')
})

test('usage errors exit 2; an unreachable node exits 1 with a clear message', async () => {
  const missing = await credit(['0x70997970C51812dc3A010C7d01b50e0d17dc79C8'])
  assert.equal(missing.code, 2)
  assert.match(missing.stderr, /^keel: usage: keel credit <address> <amount>/)
  const unknown = await credit(['0x70997970C51812dc3A010C7d01b50e0d17dc79C8', '1', '--fast'])
  assert.equal(unknown.code, 2)
  assert.equal(unknown.stderr, 'keel: unknown option --fast for keel credit; see keel help credit\n')
  const closedPort = await new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
  const down = await keelCli(['credit', '0x70997970C51812dc3A010C7d01b50e0d17dc79C8', '1', '--rpc', `http://127.0.0.1:${closedPort}`, '--data-dir', node.dataDir])
  assert.equal(down.code, 1)
  assert.equal(down.stderr, `keel: cannot reach the node at http://127.0.0.1:${closedPort} (ECONNREFUSED); is it running? (--rpc URL)\n`)
})

test('a data folder without an operator key is refused', async () => {
  const { code, stderr } = await keelCli(['credit', '0x70997970C51812dc3A010C7d01b50e0d17dc79C8', '1', '--rpc', node.url, '--data-dir', join(node.dataDir, 'nowhere')])
  assert.equal(code, 2)
  assert.equal(stderr, `keel: no operator key: neither ${join(node.dataDir, 'nowhere', 'operator.key')} nor a keystore in ${join(node.dataDir, 'nowhere', 'keystore')}; pass --data-dir or --keystore FILE\n`)
})

test('credits with the operator key converted into a keystore (--keystore, --passphrase-file)', async () => {
  const pass = join(node.dataDir, 'pass.txt')
  writeFileSync(pass, 'correct horse\n')
  const imported = await keelCli(['account', 'import', '--from-operator-key', '--light-kdf', '--data-dir', node.dataDir, '--passphrase-file', pass])
  assert.equal(imported.code, 0, imported.stderr)
  const keystore = /^keystore (.+)$/m.exec(imported.stdout)[1]
  const to = Wallet.createRandom().address
  const ok = await credit([to, '0.25', '--keystore', keystore, '--passphrase-file', pass])
  assert.equal(ok.code, 0, ok.stderr)
  assert.equal(await balance(to), ETHER / 4n)
  const wrong = await credit([to, '0.25', '--keystore', keystore], { env: { KEEL_PASSPHRASE: 'wrong' } })
  assert.equal(wrong.code, 2)
  assert.equal(wrong.stderr, `keel: wrong passphrase for ${keystore} (keystore MAC mismatch)\n`)
})
