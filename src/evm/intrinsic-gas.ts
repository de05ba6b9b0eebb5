// The gas a message to an existing address pays before any code runs (EIP-2028 calldata, EIP-2930
// access list), and the EIP-7623 calldata floor, computed without building a transaction object:
// eth_call, the eth_estimateGas probes and the intake of a signed call or transfer need only these two
// numbers. Forks that change the formula (EIP-2780 recipient gas, EIP-7976/7981 floors, EIP-8037 state
// gas) are not covered: the caller then takes the transaction path.

import type { Common } from '@ethereumjs/common'

const UNCOVERED_EIPS = [2780, 7976, 7981, 8037, 8038]

export interface MessageGas {
  /** charged before execution */
  intrinsic: bigint
  /** the least gas limit a transaction carrying this message may have: max(intrinsic, calldata floor) */
  minimum: bigint
  /** the least gas it is charged after refunds: the EIP-7623 calldata floor (0 before Prague) */
  floor: bigint
}

/** undefined when the active fork prices messages in a way this does not model. */
export function messageGas(common: Common, data: Uint8Array, accessList: readonly { readonly storageKeys: readonly unknown[] }[] | undefined): MessageGas | undefined {
  for (const eip of UNCOVERED_EIPS) if (common.isActivatedEIP(eip)) return undefined
  let zeros = 0
  for (let i = 0; i < data.length; i++) if (data[i] === 0) zeros++
  const nonZeros = data.length - zeros
  const base = common.param('txGas')
  let intrinsic = base + BigInt(zeros) * common.param('txDataZeroGas') + BigInt(nonZeros) * common.param('txDataNonZeroGas')
  if (accessList !== undefined && accessList.length > 0) {
    let keys = 0
    for (const item of accessList) keys += item.storageKeys.length
    intrinsic += BigInt(accessList.length) * common.param('accessListAddressGas') + BigInt(keys) * common.param('accessListStorageKeyGas')
  }
  let floor = 0n
  if (common.isActivatedEIP(7623)) {
    const tokens = BigInt(zeros + nonZeros * 4)
    floor = base + tokens * common.param('totalCostFloorPerToken')
  }
  return { intrinsic, minimum: floor > intrinsic ? floor : intrinsic, floor }
}
