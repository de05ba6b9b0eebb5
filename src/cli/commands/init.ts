// keel init [--genesis FILE] [--data-dir DIR]: create a data folder's chain from a genesis without
// starting the node; refuses a folder that already holds a chain.

import { toChecksumAddress } from '@ethereumjs/util'
import { parseArgs, UsageError } from '../args.js'
import { formatCommandUsage } from '../help.js'
import type { CliCommand } from '../main.js'
import { nodeConfig, refusalsExit2, rejectUnknownFlags } from '../command-support.js'

const FLAGS = ['help', 'genesis', 'data-dir', 'chain-id', 'config'] as const

export const initCommand: CliCommand = {
  name: 'init',
  usage: 'init [--genesis FILE] [--data-dir DIR]',
  summary: 'create a data folder from a genesis.json (default: a new operator key funds the treasury) without starting',
  async run(argv, io) {
    const { flags, positionals } = parseArgs(argv, { booleanFlags: new Set(['help']), shortFlags: { h: 'help' } })
    if ('help' in flags) {
      io.stdout(
        formatCommandUsage(initCommand, false) +
          [
            '',
            '  --genesis FILE     geth-format genesis.json (copied to DIR/genesis.json); without it, a new',
            '                     operator key (DIR/operator.key) is funded with 1,000,000,000 tokens',
            '  --data-dir DIR     the folder to create (default ./data)',
            '  --chain-id N       chain id of the default genesis (default 24589)',
            '',
          ].join('\n'),
      )
      return 0
    }
    rejectUnknownFlags(flags, FLAGS, 'init')
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
