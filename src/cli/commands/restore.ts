// keel restore <dir> [--data-dir DIR]: put a backup into a data folder that holds no chain; a node
// started there serves the backup's head and state.

import { resolve } from 'node:path'
import { restoreChain } from '../../admin/restore.js'
import { parseArgs, UsageError } from '../args.js'
import { formatCommandUsage } from '../help.js'
import type { CliCommand } from '../main.js'
import { nodeConfig, refusalsExit2, rejectUnknownFlags } from '../command-support.js'

const FLAGS = ['help', 'data-dir', 'config'] as const

export const restoreCommand: CliCommand = {
  name: 'restore',
  usage: 'restore <dir> [--data-dir DIR]',
  summary: 'restore a backup into a data folder without a chain (the node must not be running there)',
  async run(argv, io) {
    const { flags, positionals } = parseArgs(argv, { booleanFlags: new Set(['help']), shortFlags: { h: 'help' } })
    if ('help' in flags) {
      io.stdout(formatCommandUsage(restoreCommand, false))
      return 0
    }
    rejectUnknownFlags(flags, FLAGS, 'restore')
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
