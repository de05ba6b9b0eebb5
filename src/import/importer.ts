// keel import: the blocks of geth-format chain files executed one by one onto a data folder's chain and
// written with the keys a sealed block has (block-record.ts), so that `keel start` then serves them. A
// block already in the chain is skipped when it is the same block (a second run resumes where the first
// stopped), and refused when it is another; a block that fails a check stops the import with every block
// before it kept.

import { createBlockHeaderFromRLP } from '@ethereumjs/block'
import type { BlockHeader } from '@ethereumjs/block'
import type { Common } from '@ethereumjs/common'
import { bytesToHex, equalsBytes } from '@ethereumjs/util'
import { pushBlockRecord } from '../chain/block-record.js'
import type { ChainLevel } from '../chain/store/level.js'
import { decodeHead, Keys } from '../chain/store/schema.js'
import type { LevelOp } from '../chain/store/state-db.js'
import { writeBatch } from '../chain/store/write-batch.js'
import { blockHashSource } from '../evm/block-hashes.js'
import { openChainFile } from './chain-file.js'
import { BlockExecutor } from './block-executor.js'
import { ImportError } from './import-error.js'

export interface ImportProgress {
  file: string
  /** blocks executed and written by this run */
  imported: number
  /** blocks of the files that the chain already held */
  skipped: number
  txs: number
  gas: bigint
  head: bigint
  /** fraction of the current file read (0..1) */
  fileFraction: number
  fileIndex: number
  files: number
}

export interface ImportResult extends ImportProgress {
  headHash: string
  ms: number
}

export async function importChainFiles(
  level: ChainLevel,
  common: Common,
  files: readonly string[],
  onProgress: (p: ImportProgress) => void = () => {},
): Promise<ImportResult> {
  const started = Date.now()
  const stored = await level.get(Keys.meta('head'))
  if (stored === undefined) throw new ImportError('the data folder has no genesis block')
  let head = await headerAt(level, common, decodeHead(stored).number)
  let headHash = head.hash()
  const genesisHash = (await level.get(Keys.canonicalHash(0n)))!
  const executor = await BlockExecutor.open(level, common, blockHashSource((n) => level.get(Keys.canonicalHash(n))), head.stateRoot)
  const progress: ImportProgress = { file: '', imported: 0, skipped: 0, txs: 0, gas: 0n, head: head.number, fileFraction: 0, fileIndex: 0, files: files.length }
  for (let f = 0; f < files.length; f++) {
    const file = openChainFile(files[f])
    progress.file = files[f]
    progress.fileIndex = f
    for await (const raw of file.blocks()) {
      const block = executor.decode(raw.rlp, `${files[f]} at byte ${raw.offset}`)
      const number = block.header.number
      const hash = block.hash()
      const at = `block ${number} (${bytesToHex(hash)})`
      if (number <= head.number) {
        const have = await level.get(Keys.canonicalHash(number))
        if (have !== undefined && equalsBytes(have, hash)) {
          progress.skipped++
          continue
        }
        if (number === 0n) throw new ImportError(`wrong genesis: the file's block 0 is ${bytesToHex(hash)}, the data folder's genesis is ${bytesToHex(genesisHash)}`, 0n)
        throw new ImportError(`${at}: the data folder holds another block ${number} (${have === undefined ? 'none' : bytesToHex(have)}): a different chain`, number)
      }
      if (number > head.number + 1n) {
        throw new ImportError(`${at}: missing parent: the chain ends at block ${head.number} and the file has no block ${head.number + 1n} before this one`, number)
      }
      if (!equalsBytes(block.header.parentHash, headHash)) {
        if (number === 1n) {
          throw new ImportError(`wrong genesis: block 1 builds on ${bytesToHex(block.header.parentHash)}, the data folder's genesis is ${bytesToHex(genesisHash)} (the chain file needs the genesis.json it was made with)`, 1n)
        }
        throw new ImportError(`${at}: missing parent: its parent hash ${bytesToHex(block.header.parentHash)} is not block ${head.number} (${bytesToHex(headHash)})`, number)
      }
      if (block.header.timestamp <= head.timestamp) {
        throw new ImportError(`${at}: timestamp ${block.header.timestamp} is not after its parent's (${head.timestamp})`, number)
      }
      const executed = await executor.execute(block, head)
      const ops: LevelOp[] = [...executed.trieOps, ...executed.indexOps]
      await pushBlockRecord(ops, executed.record)
      await writeBatch(level, ops)
      executor.written()
      head = block.header
      headHash = hash
      progress.imported++
      progress.txs += executed.txCount
      progress.gas += executed.gasUsed
      progress.head = number
      progress.fileFraction = file.size === 0 ? 1 : Math.min(1, file.readBytes() / file.size)
      onProgress(progress)
    }
  }
  return { ...progress, headHash: bytesToHex(headHash), ms: Date.now() - started }
}

async function headerAt(level: ChainLevel, common: Common, number: bigint): Promise<BlockHeader> {
  const rlp = await level.get(Keys.header(number))
  if (rlp === undefined) throw new ImportError(`database corrupt: block ${number} has no header`)
  return createBlockHeaderFromRLP(rlp, { common, setHardfork: true })
}
