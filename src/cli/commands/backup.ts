// keel backup <dir> [--data-dir DIR]: a consistent copy of the chain, taken by the running node itself
// (through its admin socket) or directly from the database when no node runs.

import { resolve } from 'node:path'
import { callAdmin } from '../../admin/admin-client.js'
import { backupChain, checkBackupTarget } from '../../admin/backup.js'
import type { BackupManifest } from '../../admin/backup.js'
import { openExistingChain } from '../../admin/open-chain.js'
import { UsageError } from '../args.js'
import { BACKUP_COMMAND } from './summaries.js'
import type { CliCommand } from '../command.js'
import { nodeConfig, refusalsExit2, commandArgs } from '../command-support.js'

const FLAGS = ['help', 'data-dir', 'config'] as const

export const backupCommand: CliCommand = {
  ...BACKUP_COMMAND,
  async run(argv, io) {
    const args = commandArgs(backupCommand, argv, io, FLAGS)
    if (args === undefined) return 0
    const { flags, positionals } = args
    if (positionals.length !== 1) throw new UsageError('usage: keel backup <dir> [--data-dir DIR]')
    const target = resolve(io.cwd, positionals[0]!)
    const { dataDir } = nodeConfig(flags, ['data-dir'], io)
    return refusalsExit2(io, async () => {
      checkBackupTarget(target, dataDir)
      let manifest: BackupManifest
      const live = await callAdmin<BackupManifest>(dataDir, 'admin_backup', [target])
      if (live !== undefined) {
        manifest = live.result
      } else {
        const level = await openExistingChain(dataDir)
        try {
          manifest = await backupChain(level, dataDir, target)
        } finally {
          await level.close()
        }
      }
      io.stdout(
        `backed up ${dataDir} to ${target}${live === undefined ? '' : ' (taken by the running node)'}\n` +
          `head #${manifest.head.number} ${manifest.head.hash}\n` +
          `state root ${manifest.head.stateRoot}\n` +
          `${manifest.entries} entries, ${manifest.bytes} bytes${manifest.files.length > 0 ? `; also ${manifest.files.join(', ')}` : ''}\n`,
      )
      return 0
    })
  },
}
