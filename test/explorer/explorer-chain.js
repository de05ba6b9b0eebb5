// The chain the explorer tests look at, built the same way on Keel and on anvil: every transaction is
// signed here with fixed nonces, fees and gas limits, so that both chains hold byte-identical
// transactions (same hashes, same contract addresses) in the same groups, one group a block.
//
// What it holds: a token and a transfer of it; a factory that CREATE2s a child that stays and one that
// selfdestructs in the transaction that made it; value passed down calls nested three deep; reverts
// with a reason and with a custom error; a block of 30 transfers to one address, which then gets 8
// more in each of four blocks (62 transactions: more than one page of 25 both ways).

import { Interface, Wallet, getCreate2Address, getCreateAddress, keccak256 } from 'ethers'
import { compile } from '../helpers/contracts.js'
import { CHAIN_ID, DEV_KEYS } from '../helpers/node.js'
import { rpcBatch, rpcResult } from '../helpers/rpc.js'

const GWEI = 10n ** 9n
export const HISTORY = '0x00000000000000000000000000000000000a11ce'
export const BENEFICIARY = '0x00000000000000000000000000000000000000be'
export const RELAY_SINK = '0x00000000000000000000000000000000000005ec'
export const SALT_KEPT = `0x${'01'.repeat(32)}`
export const SALT_KILLED = `0x${'02'.repeat(32)}`

/**
 * Builds the chain at `url`. `seal(hashes)` returns once every transaction of the group is mined (Keel:
 * its block timer; anvil: evm_mine) and must put the group in one block.
 */
export async function buildExplorerChain(url, seal) {
  const { Token, Factory, Relay, Child } = compile()
  const wallets = DEV_KEYS.slice(1, 6).map((k) => new Wallet(k))
  const [deployer, alice, ...senders] = wallets
  const nonces = new Map()
  const sign = async (wallet, fields) => {
    const nonce = nonces.get(wallet.address) ?? 0
    nonces.set(wallet.address, nonce + 1)
    return wallet.signTransaction({ type: 2, chainId: CHAIN_ID, nonce, maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: GWEI, gasLimit: 1_000_000n, value: 0n, ...fields })
  }
  const group = async (raws) => {
    await seal.prepare?.()
    const hashes = await rpcBatch(url, raws.map((raw) => ['eth_sendRawTransaction', [raw]]))
    await seal(hashes)
    const receipts = await rpcBatch(url, hashes.map((h) => ['eth_getTransactionReceipt', [h]]))
    const block = receipts[0].blockNumber
    if (!receipts.every((r) => r.blockNumber === block)) throw new Error(`a group of ${raws.length} transactions was split across blocks`)
    // in block order (a block orders senders by their tips, not by arrival)
    receipts.sort((a, b) => Number(a.transactionIndex) - Number(b.transactionIndex))
    return { hashes: receipts.map((r) => r.transactionHash), sent: hashes, block: Number(block), receipts }
  }

  const token = getCreateAddress({ from: deployer.address, nonce: 0 })
  const factory = getCreateAddress({ from: deployer.address, nonce: 1 })
  const relay = getCreateAddress({ from: deployer.address, nonce: 2 })
  const deploys = await group([
    await sign(deployer, { data: Token.bytecode, gasLimit: 3_000_000n }),
    await sign(deployer, { data: Factory.bytecode, gasLimit: 3_000_000n }),
    await sign(deployer, { data: Relay.bytecode, gasLimit: 3_000_000n }),
  ])

  const tokenAbi = new Interface(Token.abi)
  const factoryAbi = new Interface(Factory.abi)
  const relayAbi = new Interface(Relay.abi)
  const childInit = keccak256(Child.bytecode)
  const kept = getCreate2Address(factory, SALT_KEPT, childInit)
  const killed = getCreate2Address(factory, SALT_KILLED, childInit)
  const calls = await group([
    await sign(deployer, { to: token, data: tokenAbi.encodeFunctionData('transfer', [alice.address, 5n * 10n ** 18n]), gasLimit: 100_000n }),
    await sign(alice, { to: factory, data: factoryAbi.encodeFunctionData('make', [SALT_KEPT]), gasLimit: 500_000n }),
    await sign(alice, { to: factory, data: factoryAbi.encodeFunctionData('makeAndKill', [SALT_KILLED, BENEFICIARY]), value: 1000n, gasLimit: 500_000n }),
    await sign(alice, { to: relay, data: relayAbi.encodeFunctionData('relay', [relay, RELAY_SINK, 3]), value: 80n, gasLimit: 300_000n }),
    await sign(alice, { to: relay, data: relayAbi.encodeFunctionData('failWithReason'), gasLimit: 100_000n }),
    await sign(alice, { to: relay, data: relayAbi.encodeFunctionData('failWithError'), gasLimit: 100_000n }),
  ])
  const [tokenTransfer, make, makeAndKill, relayed, revertReason, revertCustom] = calls.sent

  // 30 transfers to HISTORY in one block (plain transfers: no EVM), from three senders
  const big = []
  for (let i = 0; i < 30; i++) big.push(await sign(senders[i % 3], { to: HISTORY, value: BigInt(i + 1), gasLimit: 21_000n }))
  const bigBlock = await group(big)
  const later = []
  for (let b = 0; b < 4; b++) {
    const raws = []
    for (let i = 0; i < 8; i++) raws.push(await sign(senders[i % 3], { to: HISTORY, value: BigInt(100 + b * 8 + i), gasLimit: 21_000n }))
    later.push(await group(raws))
  }
  return {
    deployer: deployer.address.toLowerCase(),
    alice: alice.address.toLowerCase(),
    senders: senders.map((w) => w.address.toLowerCase()),
    token: token.toLowerCase(),
    factory: factory.toLowerCase(),
    relay: relay.toLowerCase(),
    kept: kept.toLowerCase(),
    killed: killed.toLowerCase(),
    deploys,
    calls,
    tx: { tokenTransfer, make, makeAndKill, relayed, revertReason, revertCustom },
    bigBlock,
    later,
    /** HISTORY's transactions, oldest first */
    history: [...bigBlock.hashes, ...later.flatMap((g) => g.hashes)],
  }
}

/**
 * Keel: waits for the group's receipts (the block timer seals it). The group is sent just after a block
 * was sealed, so that the whole of it is pooled before the next one.
 */
export function keelSeal(url) {
  const seal = async (hashes) => {
    const deadline = Date.now() + 20_000
    while (Date.now() < deadline) {
      const receipts = await rpcBatch(url, hashes.map((h) => ['eth_getTransactionReceipt', [h]]))
      if (receipts.every((r) => r !== null)) return
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    throw new Error('the group was not mined in 20 s')
  }
  // a transfer of another account's, mined: a block was just sealed, and the next is a block time away
  const pacer = new Wallet(DEV_KEYS[8])
  seal.prepare = async () => {
    const nonce = Number(await rpcResult(url, 'eth_getTransactionCount', [pacer.address, 'pending']))
    const raw = await pacer.signTransaction({ type: 2, chainId: CHAIN_ID, nonce, maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: GWEI, gasLimit: 21_000n, to: '0x00000000000000000000000000000000000000a0', value: 1n })
    await seal([await rpcResult(url, 'eth_sendRawTransaction', [raw])])
  }
  return seal
}

/** anvil started with --no-mining: one evm_mine per group. */
export function anvilSeal(url) {
  return async () => {
    await rpcResult(url, 'evm_mine', [])
  }
}
