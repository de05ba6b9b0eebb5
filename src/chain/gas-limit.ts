// The gas limit of the block the producer seals next: the parent's, moved toward the operator's
// --block-gas-limit by at most parent / 1024 - 1 a block (geth's core.CalcGasLimit for its
// --miner.gaslimit), so that every node checking the 1/1024 rule (replicas, `keel import`, geth) accepts
// it.

/** Blocks move their gas limit by less than 1/GAS_LIMIT_BOUND_DIVISOR of the parent's (the yellow paper's rule). */
export const GAS_LIMIT_BOUND_DIVISOR = 1024n
/** The lowest gas limit a block may have (geth's params.MinGasLimit). */
export const MIN_GAS_LIMIT = 5000n
/** The highest gas limit a block may have (geth's params.MaxGasLimit). */
export const MAX_GAS_LIMIT = (1n << 63n) - 1n

/** The next block's gas limit, from its parent's and the target; a target of 0 keeps the parent's. */
export function nextGasLimit(parentGasLimit: bigint, target: bigint): bigint {
  if (target === 0n) return parentGasLimit
  const desired = target < MIN_GAS_LIMIT ? MIN_GAS_LIMIT : target
  const delta = parentGasLimit / GAS_LIMIT_BOUND_DIVISOR - 1n
  if (parentGasLimit < desired) {
    const limit = parentGasLimit + delta
    return limit > desired ? desired : limit
  }
  if (parentGasLimit > desired) {
    const limit = parentGasLimit - delta
    return limit < desired ? desired : limit
  }
  return parentGasLimit
}
