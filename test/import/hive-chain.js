// The hive test chain (test/fixtures/execution-apis: tests/ and chain/, copied from ethereum/execution-apis,
// SOURCE.md): its files and its blocks as chain.rlp holds them, decoded independently of Keel (hash =
// keccak of the header's RLP).

import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { RLP } from '@ethereumjs/rlp'
import { bytesToHex } from '@ethereumjs/util'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { repoRoot } from '../helpers/keel-cli.js'

export const HIVE = join(repoRoot, 'test', 'fixtures', 'execution-apis', 'tests')
/** the state at the chain's head: every account's balance, nonce, code and storage */
export const HIVE_HEAD_STATE = join(HIVE, '..', 'chain', 'headstate.json')
export const HIVE_GENESIS = join(HIVE, 'genesis.json')
export const HIVE_CHAIN = join(HIVE, 'chain.rlp')

/** Each block of chain.rlp: its bytes, where they start, number, hash and state root. */
export function hiveBlocks() {
  const bytes = new Uint8Array(readFileSync(HIVE_CHAIN))
  const blocks = []
  let rest = bytes
  let offset = 0
  while (rest.length > 0) {
    const { data, remainder } = RLP.decode(rest, true)
    const length = rest.length - remainder.length
    const header = data[0]
    blocks.push({
      raw: rest.subarray(0, length),
      offset,
      number: BigInt(bytesToHex(header[8]) === '0x' ? 0 : bytesToHex(header[8])),
      hash: bytesToHex(keccak_256(RLP.encode(header))),
      stateRoot: bytesToHex(header[3]),
    })
    offset += length
    rest = remainder
  }
  return blocks
}
