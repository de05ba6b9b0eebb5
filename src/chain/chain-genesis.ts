// The genesis a node starts with: the one stored with the chain, or for a new data folder the one given
// (--genesis), --dev's, or a default funding a new operator key.

import { join } from 'node:path'
import type { KeelConfig } from '../config/types.js'
import type { GethGenesis } from '../evm/geth-genesis.js'
import { resolveGenesis, validateGenesis } from './genesis.js'
import { openChainForStart } from './store/open-check.js'
import { Keys } from './store/schema.js'

export interface ChainGenesis {
  genesis: GethGenesis
  /** the operator address of a new default genesis */
  operatorAddress?: string
  /** whether a new operator key was generated and saved */
  created: boolean
}

/** The genesis of this data folder: the one stored with the chain wins over anything passed again. */
export async function chainGenesis(config: KeelConfig): Promise<ChainGenesis> {
  // refuses a damaged database before anything can write to it (store/open-check.ts)
  const level = await openChainForStart(join(config.dataDir, 'chain'))
  try {
    const stored = await level.get(Keys.meta('config'))
    if (stored !== undefined) {
      const genesis = validateGenesis(JSON.parse(new TextDecoder().decode(stored)), `stored in ${config.dataDir}`)
      if (config.genesis !== undefined) {
        const given = resolveGenesis({ dataDir: config.dataDir, genesisFile: config.genesis, dev: false, chainId: config.chainId }).genesis
        if (JSON.stringify(given.config) !== JSON.stringify(genesis.config) || JSON.stringify(given.alloc) !== JSON.stringify(genesis.alloc)) {
          throw new Error(`${config.dataDir} already holds a chain with a different genesis; use a new --data-dir to start another chain`)
        }
      }
      return { genesis, created: false }
    }
  } finally {
    await level.close()
  }
  const resolved = resolveGenesis({ dataDir: config.dataDir, genesisFile: config.genesis, dev: config.dev, chainId: config.chainId })
  return { genesis: resolved.genesis, operatorAddress: resolved.operatorAddress, created: resolved.createdOperatorKey }
}
