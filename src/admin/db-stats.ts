// What `keel db stats` reports: sizes on disk and per table, the head, and counts of blocks, mined
// transactions and pooled transactions, read from one snapshot of the chain database.

import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { RLP } from '@ethereumjs/rlp'
import { bytesToBigInt, bytesToHex } from '@ethereumjs/util'
import type { ChainLevel } from '../chain/store/level.js'
import { decodeHead, Keys, Prefix } from '../chain/store/schema.js'

export interface DbStats {
  dataDir: string
  chainDir: string
  /** Bytes of the LevelDB files on disk. */
  diskBytes: number
  head: { number: string; hash: string; stateRoot: string; timestamp: string } | null
  genesisHash: string | null
  chainId: number | null
  blocks: string
  transactions: number
  pooledTransactions: number
  /** LevelDB's estimate of each table's size on disk (data still in the write buffer counts as 0). */
  tableBytes: Record<string, number>
}

const TABLES: Record<string, number> = {
  state: Prefix.trie,
  headers: Prefix.header,
  bodies: Prefix.body,
  receipts: Prefix.receipts,
  blooms: Prefix.bloom,
  canonicalHashes: Prefix.canonicalHash,
  blockNumbers: Prefix.blockNumber,
  txLookups: Prefix.txLookup,
  pooledTxs: Prefix.pooledTx,
  explorerAppearances: Prefix.appearance,
  explorerSenderNonces: Prefix.senderNonce,
  explorerCreators: Prefix.creator,
  meta: Prefix.meta,
}

export function directoryBytes(dir: string): number {
  let total = 0
  let names: string[]
  try {
    names = readdirSync(dir)
  } catch {
    return 0
  }
  for (const name of names) {
    const stat = statSync(join(dir, name), { throwIfNoEntry: false })
    if (stat === undefined) continue
    total += stat.isDirectory() ? directoryBytes(join(dir, name)) : stat.size
  }
  return total
}

async function countKeys(level: ChainLevel, prefix: number, snapshot: ReturnType<ChainLevel['snapshot']>): Promise<number> {
  let count = 0
  const keys = level.keys({ gte: Uint8Array.of(prefix), lt: Uint8Array.of(prefix + 1), snapshot })
  try {
    for (;;) {
      const batch = await keys.nextv(10_000)
      if (batch.length === 0) return count
      count += batch.length
    }
  } finally {
    await keys.close()
  }
}

export async function chainStats(level: ChainLevel, dataDir: string): Promise<DbStats> {
  const chainDir = join(dataDir, 'chain')
  const snapshot = level.snapshot()
  try {
    const [headBytes, genesisBytes, configBytes] = await level.getMany([Keys.meta('head'), Keys.meta('genesis'), Keys.meta('config')], { snapshot })
    let head: DbStats['head'] = null
    if (headBytes !== undefined) {
      const { number, hash } = decodeHead(headBytes)
      const headerRlp = await level.get(Keys.header(number), { snapshot })
      // header RLP fields: [parentHash, uncleHash, coinbase, stateRoot, ..., timestamp at 11, ...]
      const fields = headerRlp === undefined ? undefined : (RLP.decode(headerRlp) as Uint8Array[])
      head = {
        number: number.toString(),
        hash: bytesToHex(hash),
        stateRoot: fields === undefined ? '' : bytesToHex(fields[3]!),
        timestamp: fields === undefined ? '' : new Date(Number(bytesToBigInt(fields[11]!)) * 1000).toISOString(),
      }
    }
    const chainId = configBytes === undefined ? null : (JSON.parse(new TextDecoder().decode(configBytes)) as { config: { chainId: number } }).config.chainId
    const tableBytes: Record<string, number> = {}
    for (const [name, prefix] of Object.entries(TABLES)) {
      tableBytes[name] = await level.approximateSize(Uint8Array.of(prefix), Uint8Array.of(prefix + 1))
    }
    return {
      dataDir,
      chainDir,
      diskBytes: directoryBytes(chainDir),
      head,
      genesisHash: genesisBytes === undefined ? null : bytesToHex(genesisBytes),
      chainId,
      blocks: head === null ? '0' : (BigInt(head.number) + 1n).toString(),
      transactions: await countKeys(level, Prefix.txLookup, snapshot),
      pooledTransactions: await countKeys(level, Prefix.pooledTx, snapshot),
      tableBytes,
    }
  } finally {
    await snapshot.close()
  }
}
