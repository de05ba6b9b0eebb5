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
import { Capability } from '@ethereumjs/tx'
import type { TypedTransaction } from '@ethereumjs/tx'
import { Account, Address, equalsBytes, KECCAK256_NULL } from '@ethereumjs/util'
import type { VM } from '@ethereumjs/vm'
import { trustedHexToBytes } from '../util/hex.js'

/** Forks whose rules change what a transfer does (binary trees, block access lists, state gas). */
const EIPS_BEYOND_PLAIN = [7864, 7928, 8037]

/** Whether plain transfers may skip the EVM under this Common's current hardfork. */
export function plainTransfersApply(common: Common): boolean {
  return common.isActivatedEIP(1559) && EIPS_BEYOND_PLAIN.every((eip) => !common.isActivatedEIP(eip))
}

/**
 * Applies `tx` if it is a plain transfer that runTx would accept; returns the gas it used, or undefined
 * (nothing written) when runTx must handle it.
 */
export async function applyPlainTransfer(
  vm: VM,
  tx: TypedTransaction,
  senderHex: string,
  header: BlockHeader,
): Promise<bigint | undefined> {
  const to = tx.to
  if (tx.type > 2 || to === undefined || tx.data.length !== 0 || tx.value === 0n) return undefined
  const accessList = tx.supports(Capability.EIP2930AccessLists) ? (tx as { accessList: unknown[] }).accessList : []
  if (accessList.length !== 0) return undefined
  // a call to a precompile runs it (and costs its gas); an EVM that cannot tell is not trusted here
  if (vm.evm.getPrecompile === undefined || vm.evm.getPrecompile(to) !== undefined) return undefined
  const sender = new Address(trustedHexToBytes(senderHex))
  const coinbase = header.coinbase
  // one account playing two roles: leave the bookkeeping to runTx
  if (to.equals(sender) || to.equals(coinbase) || sender.equals(coinbase)) return undefined

  const gasUsed = tx.getIntrinsicGas()
  if (tx.gasLimit < gasUsed || tx.gasLimit > header.gasLimit) return undefined
  const baseFee = header.baseFeePerGas ?? 0n
  let gasPrice: bigint
  let priorityFee: bigint
  let maxCost = tx.value
  if ('maxFeePerGas' in tx) {
    if (tx.maxFeePerGas < baseFee) return undefined
    const headroom = tx.maxFeePerGas - baseFee
    priorityFee = tx.maxPriorityFeePerGas < headroom ? tx.maxPriorityFeePerGas : headroom
    gasPrice = baseFee + priorityFee
    maxCost += tx.gasLimit * tx.maxFeePerGas
  } else {
    gasPrice = (tx as { gasPrice: bigint }).gasPrice
    if (gasPrice < baseFee) return undefined
    priorityFee = gasPrice - baseFee
  }
  const upFrontCost = tx.gasLimit * gasPrice + tx.value

  const sm = vm.stateManager
  const from = await sm.getAccount(sender)
  if (from === undefined || !equalsBytes(from.codeHash, KECCAK256_NULL)) return undefined
  if (from.nonce !== tx.nonce || from.balance < upFrontCost || from.balance < maxCost) return undefined
  const recipient = await sm.getAccount(to)
  if (recipient !== undefined && !equalsBytes(recipient.codeHash, KECCAK256_NULL)) return undefined
  const miner = await sm.getAccount(coinbase)
  const minerBalance = (miner?.balance ?? 0n) + gasUsed * priorityFee
  // an empty coinbase would be deleted again at the end of the tx (EIP-161): runTx does that
  if (minerBalance === 0n && (miner === undefined || miner.isEmpty())) return undefined

  const senderBalance = from.balance - gasUsed * gasPrice - tx.value
  await sm.putAccount(sender, new Account(from.nonce + 1n, senderBalance, from.storageRoot, from.codeHash))
  await sm.putAccount(
    to,
    recipient === undefined
      ? new Account(0n, tx.value)
      : new Account(recipient.nonce, recipient.balance + tx.value, recipient.storageRoot, recipient.codeHash),
  )
  await sm.putAccount(
    coinbase,
    miner === undefined
      ? new Account(0n, minerBalance)
      : new Account(miner.nonce, minerBalance, miner.storageRoot, miner.codeHash),
  )
  return gasUsed
}
