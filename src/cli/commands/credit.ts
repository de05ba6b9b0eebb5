// keel credit <address> <amount>: transfer native token from the operator (treasury) key to an address
// through a running node, wait for the receipt and print the new balance.

import { resolve } from 'node:path'
import { toChecksumAddress } from '@ethereumjs/util'
import { checkAddress } from '../../operator/address.js'
import { credit } from '../../operator/credit.js'
import { loadSigningKey } from '../../operator/key-files.js'
import { formatAmount, parseAmount, parseUnit } from '../../operator/units.js'
import { parseArgs, UsageError } from '../args.js'
import { formatCommandUsage } from '../help.js'
import { CREDIT_COMMAND } from './summaries.js'
import type { CliCommand } from '../command.js'
import { nodeConfig, refusalsExit2, rejectUnknownFlags, stringFlag } from '../command-support.js'
import { PASSPHRASE_FILE_FLAG, passphraseSource } from '../passphrase.js'

const DEFAULT_RPC = 'http://127.0.0.1:8545'
const DEFAULT_TIMEOUT_SECONDS = 60
const FLAGS = ['help', 'unit', 'rpc', 'data-dir', 'keystore', PASSPHRASE_FILE_FLAG, 'timeout', 'config'] as const

/** A negative amount such as -5 is a positional here, not an unknown short option. */
function splitArgs(argv: string[]): { flags: Record<string, string | boolean>; positionals: string[] } {
  const negatives: string[] = []
  const masked = argv.map((arg) => {
    if (!/^-(\d|\.\d)/.test(arg)) return arg
    negatives.push(arg)
    return `\u0000${negatives.length - 1}`
  })
  const { flags, positionals } = parseArgs(masked, { booleanFlags: new Set(['help']), shortFlags: { h: 'help' } })
  const unmask = (v: string): string => (v.startsWith('\u0000') ? negatives[Number(v.slice(1))]! : v)
  for (const [k, v] of Object.entries(flags)) if (typeof v === 'string') flags[k] = unmask(v)
  return { flags, positionals: positionals.map(unmask) }
}

export const creditCommand: CliCommand = {
  ...CREDIT_COMMAND,
  async run(argv, io) {
    const { flags, positionals } = splitArgs(argv)
    if ('help' in flags) {
      io.stdout(
        formatCommandUsage(creditCommand, false) +
          [
            '',
            `  --unit ether|gwei|wei       unit of <amount> (default ether; 18 decimals)`,
            `  --rpc URL                   the node's JSON-RPC endpoint (default ${DEFAULT_RPC})`,
            `  --data-dir DIR              data folder whose operator.key (or single keystore) signs (default ./data)`,
            `  --keystore FILE             sign with this v3 keystore instead`,
            `  --${PASSPHRASE_FILE_FLAG} FILE      keystore passphrase (else KEEL_PASSPHRASE, else a prompt)`,
            `  --timeout SECONDS           how long to wait for the receipt (default ${DEFAULT_TIMEOUT_SECONDS})`,
            '',
          ].join('\n'),
      )
      return 0
    }
    rejectUnknownFlags(flags, FLAGS, 'credit')
    if (positionals.length !== 2) throw new UsageError('usage: keel credit <address> <amount> [--unit ether|gwei|wei]; see keel help credit')
    return refusalsExit2(io, async () => {
      const [addressText, amountText] = positionals as [string, string]
      const to = checkAddress(addressText)
      const unit = parseUnit(stringFlag(flags, 'unit') ?? 'ether')
      const amountWei = parseAmount(amountText, unit)
      const timeoutText = stringFlag(flags, 'timeout') ?? String(DEFAULT_TIMEOUT_SECONDS)
      const timeout = Number(timeoutText)
      if (!Number.isFinite(timeout) || timeout <= 0) throw new UsageError(`invalid --timeout "${timeoutText}": expected a positive number of seconds`)
      const rpcUrl = stringFlag(flags, 'rpc') ?? DEFAULT_RPC
      if (!/^https?:\/\//.test(rpcUrl)) throw new UsageError(`invalid --rpc "${rpcUrl}": expected an http:// or https:// URL`)

      const keystore = stringFlag(flags, 'keystore')
      const { dataDir } = nodeConfig(flags, ['data-dir'], io)
      const passphrases = passphraseSource(flags, io)
      const signer = await loadSigningKey({
        dataDir,
        keystore: keystore === undefined ? undefined : resolve(io.cwd, keystore),
        passphrase: (purpose) => passphrases.get(purpose),
      })
      const result = await credit({ rpcUrl, privateKey: signer.privateKey, from: signer.address, to, amountWei, timeoutMs: timeout * 1000 })
      io.stdout(
        `credited ${formatAmount(amountWei)} ether to ${to} from ${toChecksumAddress(signer.address)}\n` +
          `transaction ${result.txHash} in block ${result.blockNumber}\n` +
          `new balance of ${to}: ${formatAmount(result.newBalanceWei)} ether (${result.newBalanceWei} wei)\n`,
      )
      return 0
    })
  },
}
