// What the EVM needs from a blockchain: BLOCKHASH reads the hash of a recent block by number. Keel has
// no @ethereumjs/blockchain; the canonical hashes come from the chain database (or a producer's memory).

import type { EVMMockBlockchainInterface } from '@ethereumjs/evm'

const UNKNOWN = new Uint8Array(32)

export function blockHashSource(hashOf: (number: bigint) => Promise<Uint8Array | undefined>): EVMMockBlockchainInterface {
  const source: EVMMockBlockchainInterface = {
    async getBlock(n: number) {
      const hash = (await hashOf(BigInt(n))) ?? UNKNOWN
      return { hash: () => hash }
    },
    async putBlock() {},
    shallowCopy: () => source,
  }
  return source
}
