// keel import FILE... [--genesis FILE] [--data-dir DIR]: geth-format chain files (RLP blocks back to back,
// gzip for .gz) executed and checked block by block onto a data folder's chain.

import { UsageError } from '../args.js'
import { IMPORT_COMMAND } from './summaries.js'
import type { CliCommand } from '../command.js'
import { nodeConfig, refusalsExit2, commandArgs } from '../command-support.js'

const FLAGS = ['help', 'genesis', 'data-dir', 'config'] as const

const HELP = [
  '',
  '  FILE...            chain files in geth\'s export format (`geth export`, `keel export`); .gz is gunzipped',
  '  --genesis FILE     the genesis.json the chain was made with (needed when DIR has no chain yet)',
  '  --data-dir DIR     the data folder to import into (default ./data); must not be in use by a node',
  '',
  '  Every block is executed on its parent\'s state and checked against its header (state, receipts,',
  '  transactions and withdrawals roots, logs bloom, gas used, blob gas, requests hash). Proof-of-work',
  '  seals are not checked (their rewards are paid). A failing block stops the import; the blocks before',
  '  it stay, and running the command again resumes after them.',
  '',
].join('\n')

const PROGRESS_EVERY_MS = 1_000

export const importCommand: CliCommand = {
  ...IMPORT_COMMAND,
  async run(argv, io) {
    const args = commandArgs(importCommand, argv, io, FLAGS, { help: HELP })
    if (args === undefined) return 0
    const { flags, positionals } = args
    if (positionals.length === 0) throw new UsageError('keel import needs at least one chain file; see keel help import')
    const config = nodeConfig(flags, ['data-dir', 'genesis'], io)
    return refusalsExit2(io, async () => {
      // loaded on demand: the EVM, which the other commands do not need
      const { runImport } = await import('../../import/run-import.js')
      const { ImportError } = await import('../../import/import-error.js')
      const tty = process.stderr.isTTY === true
      const started = Date.now()
      let shown = 0
      const show = (p: { imported: number; txs: number; head: bigint; fileFraction: number; fileIndex: number; files: number }, final = false): void => {
        const now = Date.now()
        if (!tty || (!final && now - shown < PROGRESS_EVERY_MS)) return
        shown = now
        const secs = Math.max(0.001, (now - started) / 1000)
        const done = (p.fileIndex + p.fileFraction) / p.files
        const eta = done > 0 && done < 1 ? ` ETA ${Math.round((secs / done) * (1 - done))} s` : ''
        io.stderr(`\rimported ${p.imported} blocks (head ${p.head}), ${(p.imported / secs).toFixed(1)} blocks/s, ${(p.txs / secs).toFixed(0)} tx/s${eta}   ${final ? '\n' : ''}`)
      }
      try {
        const result = await runImport(config, positionals, (p) => show(p))
        show(result, true)
        const secs = Math.max(0.001, result.ms / 1000)
        io.stdout(
          `imported ${result.imported} blocks (${result.skipped} already in the chain), ${result.txs} transactions, ${result.gas} gas in ${secs.toFixed(1)} s\n` +
            `head ${result.head} ${result.headHash}\n`,
        )
        return 0
      } catch (err) {
        if (!(err instanceof ImportError)) throw err
        if (tty) io.stderr('\n')
        io.stderr(`keel: import stopped: ${err.message}\n`)
        return 1
      }
    })
  },
}
