// Restoring a backup made by backupChain into a data folder that holds no chain yet: the LevelDB copy,
// the genesis, the operator key and keystores, then a check that the restored head is the manifest's.

import { chmodSync, cpSync, existsSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { GENESIS_FILE, OPERATOR_KEY_FILE } from '../chain/genesis.js'
import { openChainLevel } from '../chain/store/level.js'
import { Keys } from '../chain/store/schema.js'
import { decodeHead } from '../chain/store/schema.js'
import { Refusal } from '../operator/refusal.js'
import { BACKUP_FORMAT, MANIFEST_FILE } from './backup.js'
import type { BackupManifest } from './backup.js'
import { chainStats } from './db-stats.js'
import { isLockedError } from './open-chain.js'

export function readManifest(backupDir: string): BackupManifest {
  const path = join(backupDir, MANIFEST_FILE)
  let manifest: BackupManifest
  try {
    manifest = JSON.parse(readFileSync(path, 'utf8')) as BackupManifest
  } catch {
    throw new Refusal(`${backupDir} is not a Keel backup (no readable ${MANIFEST_FILE})`)
  }
  if (manifest.format !== BACKUP_FORMAT) throw new Refusal(`${path}: unknown backup format ${String(manifest.format)}`)
  if (!existsSync(join(backupDir, 'chain'))) throw new Refusal(`${backupDir} has no chain/ folder`)
  return manifest
}

/** Refuses a data folder that holds a chain with a head (or whose chain a running node has locked). */
async function checkNoChain(dataDir: string): Promise<void> {
  const chainDir = join(dataDir, 'chain')
  if (!existsSync(chainDir) || readdirSync(chainDir).length === 0) return
  let level
  try {
    level = await openChainLevel(chainDir, { createIfMissing: false })
  } catch (err) {
    if (isLockedError(err)) throw new Refusal(`a running node holds ${chainDir}; stop it and restore into a folder without a chain`)
    throw new Refusal(`${chainDir} exists and is not a readable chain database; restore into a new --data-dir`)
  }
  try {
    const head = await level.get(Keys.meta('head'))
    if (head !== undefined) {
      throw new Refusal(`${dataDir} already holds a chain (head block ${decodeHead(head).number}); refusing to overwrite it: restore into a new --data-dir`)
    }
  } finally {
    await level.close()
  }
}

function sameFile(a: string, b: string): boolean {
  return readFileSync(a).equals(readFileSync(b))
}

export async function restoreChain(backupDir: string, dataDir: string): Promise<BackupManifest> {
  const manifest = readManifest(backupDir)
  await checkNoChain(dataDir)
  for (const name of [GENESIS_FILE, OPERATOR_KEY_FILE]) {
    const mine = join(dataDir, name)
    if (existsSync(join(backupDir, name)) && existsSync(mine) && !sameFile(join(backupDir, name), mine)) {
      throw new Refusal(`${mine} differs from the backup's; restore into a new --data-dir`)
    }
  }
  const chainDir = join(dataDir, 'chain')
  rmSync(chainDir, { recursive: true, force: true })
  cpSync(join(backupDir, 'chain'), chainDir, { recursive: true })
  rmSync(join(chainDir, 'LOCK'), { force: true })
  for (const name of [GENESIS_FILE, OPERATOR_KEY_FILE]) {
    if (!existsSync(join(backupDir, name))) continue
    cpSync(join(backupDir, name), join(dataDir, name))
    if (name === OPERATOR_KEY_FILE) chmodSync(join(dataDir, name), 0o600)
  }
  if (existsSync(join(backupDir, 'keystore'))) cpSync(join(backupDir, 'keystore'), join(dataDir, 'keystore'), { recursive: true, force: false })

  const level = await openChainLevel(chainDir, { createIfMissing: false })
  try {
    const restored = await chainStats(level, dataDir)
    if (restored.head?.hash !== manifest.head.hash || restored.head.stateRoot !== manifest.head.stateRoot) {
      throw new Error(`restored head ${restored.head?.hash ?? '(none)'} does not match the backup manifest's ${manifest.head.hash}`)
    }
  } finally {
    await level.close()
  }
  return manifest
}
