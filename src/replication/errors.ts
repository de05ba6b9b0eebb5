// Why a replica refused a block, or a producer could not publish: a code for logs, metrics and tests,
// and a message that names the block and what did not match.

export type ReplicationErrorCode =
  /** the message does not decode as a block message */
  | 'malformed'
  /** the block does not follow the replica's head (parent hash or number) */
  | 'not-next'
  /** the header, transactions root or receipts root does not match the block's content */
  | 'bad-block'
  /** a trie node whose key is not the hash of its value, or a key outside the state tables */
  | 'bad-write-set'
  /** the header's state root is neither in the write set nor in the database */
  | 'missing-state-root'
  /** re-executed, the block does not give the header's state root (--replica-verify execute) */
  | 'state-root-mismatch'
  /** the stream holds blocks of another chain or another producer */
  | 'fenced'
  /** the stream no longer holds the block the replica needs next (retention) */
  | 'gap'

export class ReplicationError extends Error {
  readonly code: ReplicationErrorCode
  constructor(code: ReplicationErrorCode, message: string) {
    super(message)
    this.name = 'ReplicationError'
    this.code = code
  }
}
