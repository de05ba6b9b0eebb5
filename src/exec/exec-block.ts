// The block context a call runs in, taken from a header (structured-clone safe for the workers).

import { createBlockHeader } from '@ethereumjs/block'
import type { BlockHeader, HeaderData } from '@ethereumjs/block'
import type { Common } from '@ethereumjs/common'
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

/**
 * The header of a block calls run in (eth_call's, a simulated one): not checked as a sealed header
 * would be, and with `blobBaseFee` set, BLOBBASEFEE reads it instead of the price the header's excess
 * blob gas gives (such a header is left unfrozen to take the override).
 */
export function callHeader(data: HeaderData, common: Common, blobBaseFee: bigint | undefined): BlockHeader {
  const header = createBlockHeader(data, { common, skipConsensusFormatValidation: true, freeze: blobBaseFee === undefined })
  if (blobBaseFee !== undefined) header.getBlobGasPrice = () => blobBaseFee
  return header
}
