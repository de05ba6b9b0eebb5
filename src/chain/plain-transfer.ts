// Plain value transfers applied without the EVM. When an externally owned account sends value, with no
// calldata and no access list, to an account without code that is not a precompile, the state
// transition is fixed: the sender pays the intrinsic gas at the effective gas price plus the value and
// its nonce moves on, the recipient gets the value, the coinbase gets the priority fee. runTx reaches
// the same state through a journal checkpoint, warm-address sets, a call frame and the gas dimensions
// of future forks (~130 of the ~300 µs a native transfer cost to seal; ~70 this way). Anything outside
// that case, and anything runTx would refuse (nonce, funds, fee cap), is left to runTx, which then
// decides exactly as before.
// test/chain/plain-transfer.test.js builds the same blocks both ways and compares every root.

import type { BlockHeader } from '@ethereumjs/block'
import type { Common } from '@ethereumjs/common'
import { Account, Address, equalsBytes, KECCAK256_NULL } from '@ethereumjs/util'
import type { VM } from '@ethereumjs/vm'
import { trustedHexToBytes } from '../util/hex.js'
import { messageGas } from '../evm/intrinsic-gas.js'
import type { PooledTx } from './pooled-tx.js'

const EMPTY = new Uint8Array(0)

/** Forks whose rules change what a transfer does (binary trees, block access lists, state gas). */
const EIPS_BEYOND_PLAIN = [7864, 7928, 8037]

/**
 * The gas a plain transfer uses under this Common's current hardfork (the intrinsic gas of a message
 * without calldata or access list), once a block; undefined when plain transfers must take runTx (forks
 * that change what a transfer does or how a message is priced).
 */
export function plainTransferGas(common: Common): bigint | undefined {
  if (!common.isActivatedEIP(1559) || EIPS_BEYOND_PLAIN.some((eip) => common.isActivatedEIP(eip))) return undefined
  return messageGas(common, EMPTY, undefined)?.intrinsic
}

/**
 * Applies `ptx` if it is a plain transfer that runTx would accept; returns the gas it used (`gasUsed`,
 * plainTransferGas's), or undefined (nothing written) when runTx must handle it. Works from the pool's
 * fields: no transaction object.
 */
export async function applyPlainTransfer(vm: VM, ptx: PooledTx, header: BlockHeader, gasUsed: bigint): Promise<bigint | undefined> {
  const to = ptx.to
  if (ptx.type > 2 || to === undefined || ptx.dataLength !== 0 || ptx.value === 0n || ptx.accessListLength !== 0) return undefined
  const toAddress = new Address(to)
  // a call to a precompile runs it (and costs its gas); an EVM that cannot tell is not trusted here
  if (vm.evm.getPrecompile === undefined || vm.evm.getPrecompile(toAddress) !== undefined) return undefined
  const sender = new Address(trustedHexToBytes(ptx.sender))
  const coinbase = header.coinbase
  // one account playing two roles: leave the bookkeeping to runTx
  if (toAddress.equals(sender) || toAddress.equals(coinbase) || sender.equals(coinbase)) return undefined
  if (ptx.gasLimit < gasUsed || ptx.gasLimit > header.gasLimit) return undefined
  const baseFee = header.baseFeePerGas ?? 0n
  // legacy and 2930: both fee fields are the gas price, so the tip is the price above the base fee
  if (ptx.maxFeePerGas < baseFee) return undefined
  const headroom = ptx.maxFeePerGas - baseFee
  const priorityFee = ptx.maxPriorityFeePerGas < headroom ? ptx.maxPriorityFeePerGas : headroom
  const gasPrice = baseFee + priorityFee
  // the most the sender may be charged (runTx checks the balance against it for a 1559 fee cap)
  const maxCost = ptx.cost
  const upFrontCost = ptx.gasLimit * gasPrice + ptx.value

  const sm = vm.stateManager
  const from = await sm.getAccount(sender)
  if (from === undefined || !equalsBytes(from.codeHash, KECCAK256_NULL)) return undefined
  if (from.nonce !== ptx.nonce || from.balance < upFrontCost || from.balance < maxCost) return undefined
  const recipient = await sm.getAccount(toAddress)
  if (recipient !== undefined && !equalsBytes(recipient.codeHash, KECCAK256_NULL)) return undefined
  const miner = await sm.getAccount(coinbase)
  const minerBalance = (miner?.balance ?? 0n) + gasUsed * priorityFee
  // an empty coinbase would be deleted again at the end of the tx (EIP-161): runTx does that
  if (minerBalance === 0n && (miner === undefined || miner.isEmpty())) return undefined

  const senderBalance = from.balance - gasUsed * gasPrice - ptx.value
  await sm.putAccount(sender, new Account(from.nonce + 1n, senderBalance, from.storageRoot, from.codeHash))
  await sm.putAccount(
    toAddress,
    recipient === undefined
      ? new Account(0n, ptx.value)
      : new Account(recipient.nonce, recipient.balance + ptx.value, recipient.storageRoot, recipient.codeHash),
  )
  await sm.putAccount(
    coinbase,
    miner === undefined
      ? new Account(0n, minerBalance)
      : new Account(miner.nonce, minerBalance, miner.storageRoot, miner.codeHash),
  )
  return gasUsed
}
