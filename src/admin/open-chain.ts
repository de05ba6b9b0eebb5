// Opening a data folder's chain database from an operator command, with clear refusals for the two
// usual mistakes: no chain there yet, or a running node holding LevelDB's lock.

import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { openChainLevel } from '../chain/store/level.js'
import type { ChainLevel } from '../chain/store/level.js'
import { Refusal } from '../operator/refusal.js'

export function isLockedError(err: unknown): boolean {
  return (err as { cause?: { code?: string } })?.cause?.code === 'LEVEL_LOCKED'
}

export async function openExistingChain(dataDir: string): Promise<ChainLevel> {
  const chainDir = join(dataDir, 'chain')
  if (!existsSync(chainDir)) throw new Refusal(`no chain in ${dataDir} (no ${chainDir}); check --data-dir`)
  try {
    return await openChainLevel(chainDir, { createIfMissing: false })
  } catch (err) {
    if (isLockedError(err)) {
      throw new Refusal(`${chainDir} is locked by a running node whose admin socket could not be reached (${join(dataDir, 'admin.sock')})`)
    }
    throw err
  }
}
