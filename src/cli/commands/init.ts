// keel init [--genesis FILE] [--data-dir DIR]: create a data folder's chain from a genesis without
// starting the node; refuses a folder that already holds a chain.

import { toChecksumAddress } from '@ethereumjs/util'
import { UsageError } from '../args.js'
import { INIT_COMMAND } from './summaries.js'
import type { CliCommand } from '../command.js'
import { nodeConfig, refusalsExit2, commandArgs } from '../command-support.js'

const FLAGS = ['help', 'genesis', 'data-dir', 'chain-id', 'config'] as const

const HELP = [
  '',
  '  --genesis FILE     geth-format genesis.json (copied to DIR/genesis.json); without it, a new',
  '                     operator key (DIR/operator.key) is funded with 1,000,000,000 tokens',
  '  --data-dir DIR     the folder to create (default ./data)',
  '  --chain-id N       chain id of the default genesis (default 24589)',
  '',
].join('\n')

export const initCommand: CliCommand = {
  ...INIT_COMMAND,
  async run(argv, io) {
    const args = commandArgs(initCommand, argv, io, FLAGS, { help: HELP })
    if (args === undefined) return 0
    const { flags, positionals } = args
    if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}" for keel init; see keel help init`)
    const config = nodeConfig(flags, ['data-dir', 'genesis', 'chain-id'], io)
    return refusalsExit2(io, async () => {
      // loaded on demand: it pulls in the EVM, which the other commands do not need
      const { initDataDir } = await import('../../admin/init-chain.js')
      const result = await initDataDir(config)
      io.stdout(
        `initialised ${result.dataDir}\n` +
          `chain id ${result.chainId}, genesis ${result.genesisHash}, state root ${result.stateRoot}\n` +
          (result.operatorAddress === undefined
            ? ''
            : `operator address ${toChecksumAddress(result.operatorAddress)}${result.createdOperatorKey ? ' (new key in operator.key)' : ''}\n`),
      )
      return 0
    })
  },
}
