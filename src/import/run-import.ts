// What `keel import` does around the importer: the data folder's chain (its genesis written first when the
// folder is new, from --genesis), the chain's Common with the VM's parameters, and the database handle.

import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { chainGenesis } from '../chain/chain-genesis.js'
import { openChainLevel } from '../chain/store/level.js'
import { Keys } from '../chain/store/schema.js'
import type { KeelConfig } from '../config/types.js'
import { createChainCommon } from '../evm/common.js'
import { loadFastCrypto } from '../evm/crypto.js'
import { importEthereumjsModule } from '../evm/evm-internals.js'
import type { CommonParams } from '../evm/params-memo.js'
import { assertEvmPatched } from '../evm/speedups.js'
import { initDataDir } from '../admin/init-chain.js'
import { isLockedError } from '../admin/open-chain.js'
import { Refusal } from '../operator/refusal.js'
import { importChainFiles } from './importer.js'
import type { ImportProgress, ImportResult } from './importer.js'

export async function runImport(config: KeelConfig, files: readonly string[], onProgress?: (p: ImportProgress) => void): Promise<ImportResult> {
  for (const file of files) if (!existsSync(file)) throw new Refusal(`cannot read ${file}: no such file`)
  const chainDir = join(config.dataDir, 'chain')
  if (!(await hasChain(chainDir))) {
    if (config.genesis === undefined && !existsSync(join(config.dataDir, 'genesis.json'))) {
      throw new Refusal(`${config.dataDir} has no chain yet: give the genesis the chain file was made with (--genesis FILE)`)
    }
    await initDataDir(config.genesis === undefined ? { ...config, genesis: join(config.dataDir, 'genesis.json') } : config)
  }
  let genesis
  try {
    genesis = (await chainGenesis(config)).genesis
  } catch (err) {
    throw new Refusal((err as Error).message)
  }
  const crypto = await loadFastCrypto()
  assertEvmPatched()
  const { paramsVM } = await importEthereumjsModule<{ paramsVM: CommonParams }>('@ethereumjs/vm', 'params.js')
  const common = createChainCommon(genesis, crypto.customCrypto, paramsVM)
  let level
  try {
    level = await openChainLevel(chainDir, { cacheSize: 64 << 20, writeBufferSize: 32 << 20 })
  } catch (err) {
    if (isLockedError(err)) throw new Refusal(`a running node holds ${chainDir}: stop it before importing`)
    throw err
  }
  try {
    return await importChainFiles(level, common, files, onProgress)
  } finally {
    await level.close()
  }
}

async function hasChain(chainDir: string): Promise<boolean> {
  if (!existsSync(chainDir)) return false
  let level
  try {
    level = await openChainLevel(chainDir, { createIfMissing: false })
  } catch (err) {
    if (isLockedError(err)) throw new Refusal(`a running node holds ${chainDir}: stop it before importing`)
    throw err
  }
  try {
    return (await level.get(Keys.meta('head'))) !== undefined
  } finally {
    await level.close()
  }
}
