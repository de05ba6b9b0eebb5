// `keel init`: writes the genesis block of a data folder without starting the node, exactly as the
// node's first start would (the producer writes genesis when the database has no head).

import { copyFileSync, existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { GENESIS_FILE, resolveGenesis } from '../chain/genesis.js'
import { Producer } from '../chain/producer.js'
import { openChainLevel } from '../chain/store/level.js'
import { decodeHead, Keys } from '../chain/store/schema.js'
import type { KeelConfig } from '../config/types.js'
import { Refusal } from '../operator/refusal.js'
import { bytesToHex } from '@ethereumjs/util'
import { isLockedError } from './open-chain.js'

export interface InitResult {
  dataDir: string
  chainId: number
  genesisHash: string
  stateRoot: string
  /** Set when the default genesis was used; the key is in <dataDir>/operator.key. */
  operatorAddress?: string
  createdOperatorKey: boolean
}

export async function initDataDir(config: KeelConfig): Promise<InitResult> {
  const { dataDir } = config
  const chainDir = join(dataDir, 'chain')
  if (existsSync(chainDir)) {
    let level
    try {
      level = await openChainLevel(chainDir, { createIfMissing: false })
    } catch (err) {
      if (isLockedError(err)) throw new Refusal(`a running node holds ${chainDir}; refusing to overwrite an existing chain`)
      throw new Refusal(`${chainDir} exists and is not a readable chain database; refusing to overwrite it`)
    }
    try {
      const head = await level.get(Keys.meta('head'))
      if (head !== undefined) {
        throw new Refusal(`${dataDir} already holds a chain (head block ${decodeHead(head).number}); refusing to overwrite it: use a new --data-dir, or remove ${chainDir} to start over`)
      }
    } finally {
      await level.close()
    }
  }
  const savedGenesis = join(dataDir, GENESIS_FILE)
  if (config.genesis !== undefined && !existsSync(config.genesis)) throw new Refusal(`cannot read genesis ${config.genesis}: no such file`)
  if (config.genesis !== undefined && existsSync(savedGenesis) && !readFileSync(savedGenesis).equals(readFileSync(config.genesis))) {
    throw new Refusal(`${savedGenesis} exists and differs from ${config.genesis}; use a new --data-dir`)
  }
  let resolved
  try {
    resolved = resolveGenesis({ dataDir, genesisFile: config.genesis, dev: false, chainId: config.chainId })
  } catch (err) {
    throw new Refusal((err as Error).message)
  }
  if (config.genesis !== undefined && !existsSync(savedGenesis)) copyFileSync(config.genesis, savedGenesis)

  const level = await openChainLevel(chainDir)
  try {
    const producer = await Producer.open(config, resolved.genesis, level, { onBlock: () => {}, onPendingTx: () => {}, onFatal: () => {} })
    const header = producer.headHeader
    await producer.close()
    return {
      dataDir,
      chainId: resolved.genesis.config.chainId,
      genesisHash: bytesToHex(header.hash()),
      stateRoot: bytesToHex(header.stateRoot),
      operatorAddress: resolved.operatorAddress,
      createdOperatorKey: resolved.createdOperatorKey,
    }
  } finally {
    await level.close()
  }
}
