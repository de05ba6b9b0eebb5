// keel db check and keel db repair: both need the node stopped (LevelDB admits one process); a running
// node is checked through a backup of it.

import { cpSync, existsSync } from 'node:fs'
import { join } from 'node:path'
import { ClassicLevel } from 'classic-level'
import { callAdmin } from '../../admin/admin-client.js'
import { checkChain } from '../../admin/db-check.js'
import type { DbCheckReport } from '../../admin/db-check.js'
import { isLockedError } from '../../admin/open-chain.js'
import { openChainLevel } from '../../chain/store/level.js'
import type { ChainLevel } from '../../chain/store/level.js'
import { Keys } from '../../chain/store/schema.js'
import { damagedTableFiles } from '../../chain/store/open-check.js'
import { createChainCommon } from '../../evm/common.js'
import { loadFastCrypto } from '../../evm/crypto.js'
import { validateGenesis } from '../../chain/genesis.js'
import { Refusal } from '../../operator/refusal.js'
import type { CliIo } from '../command.js'

const EXIT_PROBLEM = 1

async function refuseWhileRunning(dataDir: string, what: string): Promise<void> {
  if ((await callAdmin(dataDir, 'admin_dbStats')) !== undefined) {
    throw new Refusal(`a node is running on ${dataDir}: stop it first (${what}), or take a backup (keel backup DIR) and check that`)
  }
}

/** Opens for the check; a database LevelDB cannot open is itself the first problem. */
async function openForCheck(chainDir: string): Promise<ChainLevel | string> {
  try {
    return await openChainLevel(chainDir, { createIfMissing: false })
  } catch (err) {
    if (isLockedError(err)) throw new Refusal(`${chainDir} is locked by another process (a running node?): stop it first`)
    const cause = (err as { cause?: Error }).cause
    return `LevelDB cannot open the database: ${cause?.message ?? (err as Error).message}`
  }
}

function formatReport(r: DbCheckReport, chainDir: string): string {
  const lines = [
    `chain database     ${chainDir}`,
    r.head === undefined ? undefined : `head               #${r.head.number} ${r.head.hash}`,
    `blocks checked     ${r.blocks} (${r.transactions} transactions) in ${r.ms.blocks} ms`,
    `head state         ${r.stateNodes} trie nodes, ${r.accounts} accounts, ${r.contracts} contracts, ${r.storageSlots} storage slots in ${r.ms.state} ms`,
    `index entries      ${r.indexEntries} in ${r.ms.indexes} ms`,
    r.ok ? 'result             ok' : `FIRST PROBLEM      ${r.problem}`,
  ]
  return `${lines.filter((l) => l !== undefined).join('\n')}\n`
}

const HELP_AFTER_PROBLEM = (dataDir: string) =>
  `keel: the chain database is damaged. keel db repair --data-dir ${dataDir} lets LevelDB rebuild it (a copy of the folder is kept); or restore a backup: keel restore BACKUP_DIR --data-dir NEW_DIR\n`

const failed = (problem: string): DbCheckReport => ({
  ok: false,
  problem,
  blocks: 0, transactions: 0, stateNodes: 0, accounts: 0, contracts: 0, storageSlots: 0, indexEntries: 0,
  ms: { blocks: 0, state: 0, indexes: 0 },
})

async function checkFolder(chainDir: string, dataDir: string): Promise<DbCheckReport> {
  const opened = await openForCheck(chainDir)
  if (typeof opened === 'string') return failed(opened)
  try {
    // the table files first: LevelDB opens a folder with a truncated table and fails only on a read
    const bad = damagedTableFiles(opened, chainDir)
    if (bad.length > 0) return failed(`table file ${bad.join(', ')} is truncated or overwritten`)
    const crypto = await loadFastCrypto()
    const config = await opened.get(Keys.meta('config'))
    if (config === undefined) return failed('no stored genesis (m config)')
    const genesis = validateGenesis(JSON.parse(new TextDecoder().decode(config)), `stored in ${dataDir}`)
    return await checkChain(opened, { keccak: crypto.keccak256, common: createChainCommon(genesis, crypto.customCrypto) })
  } catch (err) {
    // a read that reached a damaged table file
    return failed(`a read failed: ${(err as Error).message}`)
  } finally {
    await opened.close()
  }
}

export async function dbCheck(dataDir: string, json: boolean, io: CliIo): Promise<number> {
  const chainDir = join(dataDir, 'chain')
  if (!existsSync(chainDir)) throw new Refusal(`no chain in ${dataDir} (no ${chainDir}); check --data-dir`)
  await refuseWhileRunning(dataDir, 'keel db check reads the database directly')
  const report = await checkFolder(chainDir, dataDir)
  io.stdout(json ? `${JSON.stringify({ chainDir, ...report }, null, 2)}\n` : formatReport(report, chainDir))
  if (!report.ok) io.stderr(HELP_AFTER_PROBLEM(dataDir))
  return report.ok ? 0 : EXIT_PROBLEM
}

export async function dbRepair(dataDir: string, io: CliIo): Promise<number> {
  const chainDir = join(dataDir, 'chain')
  if (!existsSync(chainDir)) throw new Refusal(`no chain in ${dataDir} (no ${chainDir}); check --data-dir`)
  await refuseWhileRunning(dataDir, 'LevelDB admits one process')
  // LevelDB's repair takes no lock: try the lock first, so that a node starting meanwhile is not raced
  try {
    const level = await openChainLevel(chainDir, { createIfMissing: false })
    await level.close()
  } catch (err) {
    if (isLockedError(err)) throw new Refusal(`${chainDir} is locked by another process (a running node?): stop it first`)
  }
  // repair rewrites the folder (it drops what it cannot read): the folder as it was stays beside it
  const kept = `${chainDir}.before-repair-${new Date().toISOString().replace(/[:.]/g, '-')}`
  cpSync(chainDir, kept, { recursive: true })
  io.stdout(`keel: copied ${chainDir} to ${kept}\n`)
  await ClassicLevel.repair(chainDir)
  io.stdout('keel: LevelDB repair done; checking the chain\n')
  const code = await dbCheck(dataDir, false, io)
  if (code === 0) io.stdout(`keel: the chain checks out; the node may start. Remove ${kept} once it runs as expected.\n`)
  return code
}
