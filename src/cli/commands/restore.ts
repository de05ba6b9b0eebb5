// keel restore <dir> [--data-dir DIR]: put a backup into a data folder that holds no chain; a node
// started there serves the backup's head and state.

import { resolve } from 'node:path'
import { restoreChain } from '../../admin/restore.js'
import { UsageError } from '../args.js'
import { RESTORE_COMMAND } from './summaries.js'
import type { CliCommand } from '../command.js'
import { nodeConfig, refusalsExit2, commandArgs } from '../command-support.js'

const FLAGS = ['help', 'data-dir', 'config'] as const

export const restoreCommand: CliCommand = {
  ...RESTORE_COMMAND,
  async run(argv, io) {
    const args = commandArgs(restoreCommand, argv, io, FLAGS)
    if (args === undefined) return 0
    const { flags, positionals } = args
    if (positionals.length !== 1) throw new UsageError('usage: keel restore <dir> [--data-dir DIR]')
    const source = resolve(io.cwd, positionals[0]!)
    const { dataDir } = nodeConfig(flags, ['data-dir'], io)
    return refusalsExit2(io, async () => {
      const manifest = await restoreChain(source, dataDir)
      io.stdout(
        `restored ${source} into ${dataDir}\n` +
          `head #${manifest.head.number} ${manifest.head.hash}\n` +
          `state root ${manifest.head.stateRoot}\n`,
      )
      return 0
    })
  },
}
