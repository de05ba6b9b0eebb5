// keel export FILE [--from N] [--to M] [--data-dir DIR]: blocks in geth's chain file format, taken by the
// running node itself when there is one (it holds the database), else read directly.

import { resolve } from 'node:path'
import { callAdmin } from '../../admin/admin-client.js'
import { openExistingChain } from '../../admin/open-chain.js'
import { exportChain } from '../../import/exporter.js'
import type { ExportResult } from '../../import/exporter.js'
import { Refusal } from '../../operator/refusal.js'
import { UsageError } from '../args.js'
import { EXPORT_COMMAND } from './summaries.js'
import type { CliCommand } from '../command.js'
import { nodeConfig, refusalsExit2, commandArgs, stringFlag } from '../command-support.js'

const FLAGS = ['help', 'data-dir', 'from', 'to', 'config'] as const

const HELP = [
  '',
  '  FILE               the file to write (must not exist); a name ending in .gz is gzipped',
  '  --from N           first block (default 0, the genesis block, as geth exports it)',
  '  --to M             last block (default the head)',
  '  --data-dir DIR     the data folder (default ./data); a node running there takes the export itself',
  '',
].join('\n')

function blockNumber(flags: Record<string, string | boolean>, name: string): bigint | undefined {
  const v = stringFlag(flags, name)
  if (v === undefined) return undefined
  if (!/^(0x[0-9a-fA-F]+|[0-9]+)$/.test(v)) throw new UsageError(`--${name} must be a block number, got "${v}"`)
  return BigInt(v)
}

export const exportCommand: CliCommand = {
  ...EXPORT_COMMAND,
  async run(argv, io) {
    const args = commandArgs(exportCommand, argv, io, FLAGS, { help: HELP })
    if (args === undefined) return 0
    const { flags, positionals } = args
    if (positionals.length !== 1) throw new UsageError('usage: keel export FILE [--from N] [--to M] [--data-dir DIR]')
    const file = resolve(io.cwd, positionals[0]!)
    const from = blockNumber(flags, 'from')
    const to = blockNumber(flags, 'to')
    const { dataDir } = nodeConfig(flags, ['data-dir'], io)
    return refusalsExit2(io, async () => {
      let result: ExportResult
      const live = await callAdmin<ExportResult>(dataDir, 'admin_export', [file, from?.toString() ?? null, to?.toString() ?? null])
      if (live !== undefined) {
        result = live.result
      } else {
        const level = await openExistingChain(dataDir)
        try {
          result = await exportChain(level, file, { from, to })
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new Refusal(`${file}.partial exists: another export is writing it, or remove it`)
          throw err
        } finally {
          await level.close()
        }
      }
      io.stdout(`exported blocks ${result.from}-${result.to} (${result.blocks} blocks, ${result.bytes} bytes) to ${result.file}${live === undefined ? '' : ' (taken by the running node)'}\nlast ${result.lastHash}\n`)
      return 0
    })
  },
}
