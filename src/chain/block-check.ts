// A block that came from elsewhere, run on its parent's state and checked against its header field by
// field: what `keel import` does with each block of a chain file, and what a replica with
// `--replica-verify execute` does with each block of the stream. The caller owns the VM's state: on a
// mismatch the state has moved on, and the caller discards it or sets the parent's root again.
//
// The seal of a proof-of-work block is not checked (as `geth import` with a fake ethash), its difficulty
// is; its block and uncle rewards are paid (runBlock).

import type { Block, BlockHeader } from '@ethereumjs/block'
import { ConsensusType } from '@ethereumjs/common'
import { RLP } from '@ethereumjs/rlp'
import { isBlob4844Tx } from '@ethereumjs/tx'
import { bytesToHex, equalsBytes, KECCAK256_RLP } from '@ethereumjs/util'
import { runBlock } from '@ethereumjs/vm'
import type { RunBlockResult, VM } from '@ethereumjs/vm'

/** A header field that executing the block does not give. */
export class BlockMismatch extends Error {
  constructor(
    readonly number: bigint,
    readonly field: string,
    message: string,
  ) {
    super(message)
    this.name = 'BlockMismatch'
  }
}

const show = (v: Uint8Array | bigint | undefined): string => (v === undefined ? 'none' : typeof v === 'bigint' ? v.toString() : bytesToHex(v))

export async function runCheckedBlock(vm: VM, block: Block, parent: BlockHeader): Promise<RunBlockResult> {
  const header = block.header
  const at = `block ${header.number} (${bytesToHex(block.hash())})`
  const mismatch = (field: string, expected: Uint8Array | bigint | undefined, got: Uint8Array | bigint | undefined): never => {
    throw new BlockMismatch(header.number, field, `${at}: ${field} mismatch: the header says ${show(expected)}, executing the block gives ${show(got)}`)
  }
  const c = block.common
  // what the block's contents decide before anything runs
  const txRoot = block.transactions.length === 0 ? KECCAK256_RLP : await block.genTxTrie()
  if (!equalsBytes(txRoot, header.transactionsTrie)) mismatch('transactionsRoot', header.transactionsTrie, txRoot)
  if (!block.uncleHashIsValid()) mismatch('sha3Uncles', header.uncleHash, c.customCrypto.keccak256!(RLP.encode(block.uncleHeaders.map((u) => u.raw()))))
  if (c.isActivatedEIP(4895) && !(await block.withdrawalsTrieIsValid())) mismatch('withdrawalsRoot', header.withdrawalsRoot, undefined)
  if (header.gasUsed > header.gasLimit) mismatch('gasUsed', header.gasLimit, header.gasUsed)
  try {
    header.validateGasLimit(parent)
  } catch {
    throw new BlockMismatch(header.number, 'gasLimit', `${at}: gasLimit ${header.gasLimit} moves more than 1/1024 from its parent's ${parent.gasLimit}`)
  }
  // the seal is not checked, the difficulty it was sealed at is (as geth's fake ethash does)
  const difficulty = c.consensusType() === ConsensusType.ProofOfWork ? header.ethashCanonicalDifficulty(parent) : 0n
  if (header.difficulty !== difficulty) mismatch('difficulty', header.difficulty, difficulty)
  if (c.isActivatedEIP(1559)) {
    // the London block's base fee is the initial one; later ones follow from the parent
    const expected = parent.common.isActivatedEIP(1559) ? parent.calcNextBaseFee() : c.param('initialBaseFee')
    if (header.baseFeePerGas !== expected) mismatch('baseFeePerGas', header.baseFeePerGas, expected)
  }
  if (c.isActivatedEIP(4844)) {
    const perBlob = c.param('blobGasPerBlob')
    let blobGas = 0n
    for (const tx of block.transactions) if (isBlob4844Tx(tx)) blobGas += BigInt(tx.blobVersionedHashes.length) * perBlob
    if (header.blobGasUsed !== blobGas) mismatch('blobGasUsed', header.blobGasUsed, blobGas)
    const excess = parent.common.isActivatedEIP(4844) ? parent.calcNextExcessBlobGas(c) : 0n
    if (header.excessBlobGas !== excess) mismatch('excessBlobGas', header.excessBlobGas, excess)
  }
  let result: RunBlockResult
  try {
    result = await runBlock(vm, {
      block,
      // the fields are computed and compared here, one by one, rather than refused in a lump
      generate: true,
      skipBlockValidation: true,
      skipHeaderValidation: true,
      skipHardForkValidation: true,
      setHardfork: true,
      clearCache: false,
    })
  } catch (err) {
    throw new BlockMismatch(header.number, 'execution', `${at}: does not execute: ${(err as Error).message}`)
  }
  if (!equalsBytes(result.stateRoot, header.stateRoot)) mismatch('stateRoot', header.stateRoot, result.stateRoot)
  if (!equalsBytes(result.receiptsRoot, header.receiptTrie)) mismatch('receiptsRoot', header.receiptTrie, result.receiptsRoot)
  if (!equalsBytes(result.logsBloom, header.logsBloom)) mismatch('logsBloom', header.logsBloom, result.logsBloom)
  if (result.gasUsed !== header.gasUsed) mismatch('gasUsed', header.gasUsed, result.gasUsed)
  if (c.isActivatedEIP(7685) && (result.requestsHash === undefined || header.requestsHash === undefined || !equalsBytes(result.requestsHash, header.requestsHash))) {
    mismatch('requestsHash', header.requestsHash, result.requestsHash)
  }
  return result
}
