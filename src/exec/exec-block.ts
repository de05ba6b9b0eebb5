// The block context a call runs in, taken from a header (structured-clone safe for the workers).

import type { BlockHeader } from '@ethereumjs/block'
import { bytesToHex } from '@ethereumjs/util'
import type { ExecBlock } from './types.js'

// One context per header: the calls of a block share it, so a pool task carrying several of them
// clones it once (structured clone keeps shared references), and the hex is computed once.
const byHeader = new WeakMap<BlockHeader, ExecBlock>()

export function execBlockOf(header: BlockHeader, hash?: string): ExecBlock {
  let block = byHeader.get(header)
  if (block === undefined) {
    block = {
      number: header.number,
      hash: hash ?? bytesToHex(header.hash()),
      parentHash: bytesToHex(header.parentHash),
      timestamp: header.timestamp,
      baseFeePerGas: header.baseFeePerGas ?? 0n,
      gasLimit: header.gasLimit,
      coinbase: bytesToHex(header.coinbase.bytes),
      prevRandao: bytesToHex(header.mixHash),
      stateRoot: bytesToHex(header.stateRoot),
    }
    byHeader.set(header, block)
  }
  return block
}
