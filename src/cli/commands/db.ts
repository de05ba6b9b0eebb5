// keel db stats [--data-dir DIR] [--json]: sizes, head and counts of a data folder's chain, asked of the
// running node through its admin socket, or read from the database directly when no node runs.
// keel db check: walks the stopped node's chain (admin/db-check.ts) and reports the first problem.
// keel db repair: LevelDB's repair on the stopped node's chain, after copying the folder aside.

import { callAdmin } from '../../admin/admin-client.js'
import { adminSocketPath } from '../../admin/admin-socket.js'
import { chainStats } from '../../admin/db-stats.js'
import type { DbStats } from '../../admin/db-stats.js'
import { openExistingChain } from '../../admin/open-chain.js'
import { UsageError } from '../args.js'
import { DB_COMMAND } from './summaries.js'
import type { CliCommand } from '../command.js'
import { nodeConfig, refusalsExit2, commandArgs } from '../command-support.js'

const FLAGS = ['help', 'data-dir', 'json', 'config'] as const

export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB']
  let value = bytes
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(1)} ${units[unit]}`
}

function formatStats(stats: DbStats, source: string): string {
  const tables = Object.entries(stats.tableBytes)
    .filter(([, bytes]) => bytes > 0)
    .map(([name, bytes]) => `${name} ${formatBytes(bytes)}`)
    .join(', ')
  const lines = [
    `data dir           ${stats.dataDir}`,
    `source             ${source}`,
    `chain database     ${stats.chainDir}, ${formatBytes(stats.diskBytes)} on disk`,
    `chain id           ${stats.chainId ?? '(unknown)'}`,
    `genesis            ${stats.genesisHash ?? '(none)'}`,
    stats.head === null
      ? 'head               (none: no genesis written yet)'
      : `head               #${stats.head.number} ${stats.head.hash} (${stats.head.timestamp})`,
    stats.head === null ? undefined : `state root         ${stats.head.stateRoot}`,
    `blocks             ${stats.blocks}`,
    `transactions       ${stats.transactions}`,
    `pooled txs         ${stats.pooledTransactions}`,
    `tables (approx.)   ${tables === '' ? '(all still in the write buffer)' : tables}`,
  ]
  return `${lines.filter((l) => l !== undefined).join('\n')}\n`
}

export const dbCommand: CliCommand = {
  ...DB_COMMAND,
  async run(argv, io) {
    const args = commandArgs(dbCommand, argv, io, FLAGS, { booleanFlags: ['json'] })
    if (args === undefined) return 0
    const { flags, positionals } = args
    if (!['stats', 'check', 'repair'].includes(positionals[0] ?? '') || positionals.length > 1) {
      throw new UsageError(positionals.length === 0 ? 'missing subcommand: keel db stats|check|repair' : `unknown subcommand "${positionals.join(' ')}" for keel db; expected stats, check or repair`)
    }
    const { dataDir } = nodeConfig(flags, ['data-dir'], io)
    if (positionals[0] === 'check') return refusalsExit2(io, async () => (await import('./db-check.js')).dbCheck(dataDir, flags.json === true, io))
    if (positionals[0] === 'repair') return refusalsExit2(io, async () => (await import('./db-check.js')).dbRepair(dataDir, io))
    return refusalsExit2(io, async () => {
      let stats: DbStats
      let source: string
      const live = await callAdmin<DbStats>(dataDir, 'admin_dbStats')
      if (live !== undefined) {
        stats = live.result
        source = `running node (admin socket ${adminSocketPath(dataDir)})`
      } else {
        const level = await openExistingChain(dataDir)
        try {
          stats = await chainStats(level, dataDir)
        } finally {
          await level.close()
        }
        source = 'database opened directly (no node running)'
      }
      io.stdout(flags.json === true ? `${JSON.stringify({ ...stats, source }, null, 2)}\n` : formatStats(stats, source))
      return 0
    })
  },
}
