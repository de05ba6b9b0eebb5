// What `keel help` lists for each operator command. The commands themselves are loaded only when run:
// their modules reach the chain and key-file code, which `keel start` would otherwise load for nothing.

import type { CommandSummary } from '../help.js'

export interface NamedCommandSummary extends CommandSummary {
  name: string
}

const command = (name: string, usage: string, summary: string): NamedCommandSummary => ({ name, usage, summary })

export const INIT_COMMAND = command(
  'init',
  'init [--genesis FILE] [--data-dir DIR]',
  'create a data folder from a genesis.json (default: a new operator key funds the treasury) without starting',
)
export const IMPORT_COMMAND = command(
  'import',
  'import FILE... [--genesis FILE] [--data-dir DIR]',
  'import blocks from geth-format chain files (.gz too), executing and checking each one; resumes where it stopped',
)
export const EXPORT_COMMAND = command(
  'export',
  'export FILE [--from N] [--to M] [--data-dir DIR]',
  'write blocks in geth\'s chain file format (.gz: gzipped), also while the node runs',
)
export const CREDIT_COMMAND = command(
  'credit',
  'credit <address> <amount> [--unit ether|gwei|wei] [--rpc URL] [--data-dir DIR | --keystore FILE]',
  'send native token from the operator (treasury) key to an address and print its new balance',
)
export const ACCOUNT_COMMAND = command(
  'account',
  'account new | import <0xKEY> | import --from-operator-key | list [--data-dir DIR]',
  'manage operator keys (Web3 Secret Storage v3 keystore files)',
)
export const DB_COMMAND = command(
  'db',
  'db stats|check|repair [--data-dir DIR] [--json]',
  'chain database: statistics (also while the node runs); check walks every block and the head state; repair runs LevelDB\'s repair on a copy-kept folder',
)
export const BACKUP_COMMAND = command(
  'backup',
  'backup <dir> [--data-dir DIR]',
  'copy the chain (consistent, also while the node runs), genesis and keys into a new folder',
)
export const RESTORE_COMMAND = command(
  'restore',
  'restore <dir> [--data-dir DIR]',
  'restore a backup into a data folder without a chain (the node must not be running there)',
)
