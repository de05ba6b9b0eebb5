// The block context a call runs in, taken from a header (structured-clone safe for the workers).

import type { BlockHeader } from '@ethereumjs/block'
import { bytesToHex } from '@ethereumjs/util'
import type { ExecBlock } from './types.js'

export function execBlockOf(header: BlockHeader, hash: string = bytesToHex(header.hash())): ExecBlock {
  return {
    number: header.number,
    hash,
    parentHash: bytesToHex(header.parentHash),
    timestamp: header.timestamp,
    baseFeePerGas: header.baseFeePerGas ?? 0n,
    gasLimit: header.gasLimit,
    coinbase: bytesToHex(header.coinbase.bytes),
    prevRandao: bytesToHex(header.mixHash),
    stateRoot: bytesToHex(header.stateRoot),
  }
}
