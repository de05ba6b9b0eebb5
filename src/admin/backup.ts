// A consistent copy of the chain while the node runs: every key is read from one LevelDB snapshot, and
// the producer writes each block (state, header, body, receipts, head pointer) in one batch, so the copy
// holds whole blocks up to the snapshot's head. The copy is a fresh LevelDB plus the genesis, the
// operator key and keystores of the data folder, and a manifest (keel-backup.json) naming the head.

import { chmodSync, copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { isAbsolute, join, relative } from 'node:path'
import { ClassicLevel } from 'classic-level'
import { GENESIS_FILE, OPERATOR_KEY_FILE } from '../chain/genesis.js'
import type { ChainLevel } from '../chain/store/level.js'
import { chainStats } from './db-stats.js'
import { Refusal } from '../operator/refusal.js'
import { eventLoopTurn } from '../util/time-slicer.js'

export const MANIFEST_FILE = 'keel-backup.json'
export const BACKUP_FORMAT = 'keel-backup/1'
const KEYSTORE_DIR = 'keystore'
const BATCH_BYTES = 4 << 20

export interface BackupManifest {
  format: typeof BACKUP_FORMAT
  createdAt: string
  sourceDataDir: string
  chainId: number | null
  genesisHash: string | null
  head: { number: string; hash: string; stateRoot: string }
  entries: number
  bytes: number
  /** Files besides chain/ that were copied from the data folder. */
  files: string[]
}

function isEmptyDir(dir: string): boolean {
  return readdirSync(dir).length === 0
}

/** Refuses a target that exists and is not empty, or that lies inside the data folder's chain. */
export function checkBackupTarget(targetDir: string, dataDir: string): void {
  if (!isAbsolute(targetDir)) throw new Refusal(`backup folder must be an absolute path: ${targetDir}`)
  const inside = relative(join(dataDir, 'chain'), targetDir)
  if (inside === '' || (!inside.startsWith('..') && !isAbsolute(inside))) throw new Refusal(`backup folder ${targetDir} lies inside the chain database`)
  if (existsSync(targetDir) && !isEmptyDir(targetDir)) throw new Refusal(`backup folder ${targetDir} exists and is not empty`)
}

export async function backupChain(level: ChainLevel, dataDir: string, targetDir: string): Promise<BackupManifest> {
  checkBackupTarget(targetDir, dataDir)
  const createdTarget = !existsSync(targetDir)
  mkdirSync(targetDir, { recursive: true, mode: 0o700 })
  const snapshot = level.snapshot()
  let copy: ClassicLevel<Uint8Array, Uint8Array> | undefined
  try {
    copy = new ClassicLevel<Uint8Array, Uint8Array>(join(targetDir, 'chain'), { keyEncoding: 'view', valueEncoding: 'view', errorIfExists: true })
    await copy.open()
    let entries = 0
    let bytes = 0
    const iterator = level.iterator({ snapshot })
    try {
      for (;;) {
        const rows = await iterator.nextv(1000)
        if (rows.length === 0) break
        const batch = copy.batch()
        let batchBytes = 0
        for (const [key, value] of rows) {
          batch.put(key, value)
          batchBytes += key.length + value.length
        }
        await batch.write()
        entries += rows.length
        bytes += batchBytes
        if (batchBytes > BATCH_BYTES) await eventLoopTurn()
      }
    } finally {
      await iterator.close()
    }
    const copied = await chainStats(copy as ChainLevel, targetDir)
    await copy.close()
    copy = undefined
    if (copied.head === null) throw new Error('the chain database has no head: nothing to back up')

    const files: string[] = []
    for (const name of [GENESIS_FILE, OPERATOR_KEY_FILE]) {
      if (!existsSync(join(dataDir, name))) continue
      copyFileSync(join(dataDir, name), join(targetDir, name))
      if (name === OPERATOR_KEY_FILE) chmodSync(join(targetDir, name), 0o600)
      files.push(name)
    }
    if (existsSync(join(dataDir, KEYSTORE_DIR))) {
      cpSync(join(dataDir, KEYSTORE_DIR), join(targetDir, KEYSTORE_DIR), { recursive: true })
      files.push(KEYSTORE_DIR)
    }
    const manifest: BackupManifest = {
      format: BACKUP_FORMAT,
      createdAt: new Date().toISOString(),
      sourceDataDir: dataDir,
      chainId: copied.chainId,
      genesisHash: copied.genesisHash,
      head: { number: copied.head.number, hash: copied.head.hash, stateRoot: copied.head.stateRoot },
      entries,
      bytes,
      files,
    }
    writeFileSync(join(targetDir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`)
    return manifest
  } catch (err) {
    if (copy !== undefined) await copy.close().catch(() => {})
    if (createdTarget) rmSync(targetDir, { recursive: true, force: true })
    else for (const name of readdirSync(targetDir)) rmSync(join(targetDir, name), { recursive: true, force: true })
    throw err
  } finally {
    await snapshot.close()
  }
}
