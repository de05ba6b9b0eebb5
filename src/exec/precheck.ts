// geth's checks of a message before the EVM runs it (core/state_transition.go: preCheck, buyGas, then
// the intrinsic gas and the EIP-7623 floor), in its order and words. geth's API wraps what they reject:
// eth_call as "err: <reason> (supplied gas N)", eth_estimateGas as "failed with N gas: <reason>"; the
// engine adds the wrapping, so the checks throw a PrecheckError it can tell apart from a halt or revert.

import { toChecksumAddress } from '@ethereumjs/util'
import { ErrorCode, RpcError } from '../errors.js'
import type { MessageGas } from '../evm/intrinsic-gas.js'
import { DEFAULT_SENDER } from './types.js'
import type { ExecCallArgs } from './types.js'

/** Which of geth's core errors a check raised (eth_simulateV1 gives each its own code). */
export type PrecheckReason = 'nonceTooHigh' | 'nonceTooLow' | 'nonceMax' | 'tipAboveFeeCap' | 'feeCapTooLow' | 'insufficientFunds' | 'intrinsicGas' | 'floorDataGas' | 'rejected'

export class PrecheckError extends RpcError {
  constructor(
    message: string,
    readonly reason: PrecheckReason,
  ) {
    super(ErrorCode.Server, message)
    this.name = 'PrecheckError'
  }
}


/** A nonce is 64 bits: an account at the largest can send no more. */
export const MAX_NONCE = (1n << 64n) - 1n

/** preCheck's nonce checks: the message's nonce against the sender's, then the sender's against its bound. */
export function nonceCheck(from: string, nonce: bigint, stateNonce: bigint): PrecheckError | undefined {
  const address = toChecksumAddress(from)
  if (nonce > stateNonce) return new PrecheckError(`nonce too high: address ${address}, tx: ${nonce} state: ${stateNonce}`, 'nonceTooHigh')
  if (nonce < stateNonce) return new PrecheckError(`nonce too low: address ${address}, tx: ${nonce} state: ${stateNonce}`, 'nonceTooLow')
  if (stateNonce === MAX_NONCE) return new PrecheckError(`nonce has max value: address ${address}, nonce: ${stateNonce}`, 'nonceMax')
  return undefined
}

/**
 * A message that names no fee is not checked (eth_call's NoBaseFee) unless `always` (a validating
 * eth_simulateV1); one naming only a tip has a fee cap of zero.
 */
export function feeCheck(args: ExecCallArgs, baseFee: bigint, always = false): PrecheckError | undefined {
  const feeCap = args.gasPrice ?? args.maxFeePerGas ?? 0n
  const tip = args.gasPrice ?? args.maxPriorityFeePerGas ?? 0n
  if (feeCap === 0n && tip === 0n && !always) return undefined
  const from = toChecksumAddress(args.from ?? DEFAULT_SENDER)
  if (feeCap < tip) {
    return new PrecheckError(`max priority fee per gas higher than max fee per gas: address ${from}, maxPriorityFeePerGas: ${tip}, maxFeePerGas: ${feeCap}`, 'tipAboveFeeCap')
  }
  if (feeCap < baseFee) return new PrecheckError(`max fee per gas less than block base fee: address ${from}, maxFeePerGas: ${feeCap}, baseFee: ${baseFee}`, 'feeCapTooLow')
  return undefined
}

/** buyGas: the sender must afford gas limit * fee cap + value. */
export function insufficientFunds(from: string, have: bigint, want: bigint): PrecheckError {
  return new PrecheckError(`insufficient funds for gas * price + value: address ${toChecksumAddress(from)} have ${have} want ${want}`, 'insufficientFunds')
}

/** buyGas's check of a message with gas limit `gas`, fee cap `feeCap` and `value` against the sender's balance. */
export function fundsCheck(from: string, balance: bigint, gas: bigint, feeCap: bigint, value: bigint): PrecheckError | undefined {
  const want = gas * feeCap + value
  return balance < want ? insufficientFunds(from, balance, want) : undefined
}

/** The two floors under a message's gas limit: the intrinsic gas, then the EIP-7623 calldata floor. */
export function gasLimitCheck(gasLimit: bigint, gas: Pick<MessageGas, 'intrinsic' | 'minimum'>): PrecheckError | undefined {
  if (gasLimit < gas.intrinsic) return new PrecheckError(`intrinsic gas too low: have ${gasLimit}, want ${gas.intrinsic}`, 'intrinsicGas')
  if (gasLimit < gas.minimum) return new PrecheckError(`insufficient gas for floor data gas cost: have ${gasLimit}, want ${gas.minimum}`, 'floorDataGas')
  return undefined
}

/**
 * @ethereumjs appends block/tx context to its validation errors; clients want the short text. (The ones
 * geth words its own way, fees, funds and gas floors, are refused before runTx by the checks above.)
 */
export function cleanRunTxError(message: string): string {
  return message.replace(/\s*\(vm hf=.*$/s, '').replace(/\s*-> .*$/s, '').replace(/\s*\(block: .*$/s, '').replace(/\s*\(tx type: .*$/s, '')
}
