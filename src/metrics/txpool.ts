// Txpool metrics: sizes (asked from the producer thread at scrape time) and admission results. Rejections
// are counted where every one of them surfaces, the eth_sendRawTransaction handler on the main thread
// (main-thread intake checks and the producer's pool rules alike), by a bounded reason.

import type { MethodHandler } from '../rpc/context.js'
import { TX_SYNC_TIMEOUT_CODE } from '../rpc/methods/eth-send.js'
import type { CollectableGauge, MetricsRegistry } from './registry.js'

/** geth error text prefix -> reason label. First match wins, so longer prefixes come first. */
const REASONS: ReadonlyArray<readonly [prefix: string, reason: string]> = [
  ['nonce too low', 'nonce_too_low'],
  ['nonce too high', 'nonce_too_high'],
  ['nonce has max value', 'nonce_max'],
  ['already known', 'already_known'],
  ['replacement transaction underpriced', 'replacement_underpriced'],
  ['transaction underpriced', 'underpriced'],
  ['insufficient funds', 'insufficient_funds'],
  ['intrinsic gas too low', 'intrinsic_gas_too_low'],
  ['insufficient gas for floor data gas cost', 'floor_data_gas_too_low'],
  ['max fee per gas less than block base fee', 'fee_cap_below_base_fee'],
  ['max priority fee per gas higher than max fee per gas', 'tip_above_fee_cap'],
  ['exceeds block gas limit', 'exceeds_block_gas_limit'],
  ['transaction gas limit too high', 'gas_limit_too_high'],
  ['oversized data', 'oversized_data'],
  ['max initcode size exceeded', 'initcode_too_large'],
  ['invalid sender', 'invalid_sender'],
  ['only replay-protected', 'not_replay_protected'],
  ['tx fee (', 'fee_cap_exceeded'],
  ['transaction type not supported', 'type_not_supported'],
  ['set code tx must have at least one authorization', 'empty_authorization_list'],
  ['txpool is full', 'pool_full'],
  ['account limit exceeded', 'account_limit'],
  ['invalid transaction', 'invalid_transaction'],
  ['node is shutting down', 'shutting_down'],
]

export const TX_REJECT_REASONS: readonly string[] = [...REASONS.map(([, reason]) => reason), 'invalid_params', 'other']

/** The bounded reason label of a rejected transaction. */
export function txRejectReason(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code
  if (code === -32602) return 'invalid_params'
  const message = (err as { message?: unknown } | null)?.message
  if (typeof message !== 'string') return 'other'
  for (const [prefix, reason] of REASONS) if (message.startsWith(prefix)) return reason
  return 'other'
}

export class TxPoolMetrics {
  readonly pending: CollectableGauge
  readonly queued: CollectableGauge
  readonly accepted
  readonly rejected

  constructor(private readonly register: MetricsRegistry) {
    this.pending = register.gauge({ name: 'keel_txpool_pending', help: 'Executable transactions in the pool' })
    this.queued = register.gauge({ name: 'keel_txpool_queued', help: 'Transactions in the pool waiting for a nonce gap to close' })
    this.accepted = register.counter({ name: 'keel_txpool_accepted_total', help: 'Transactions accepted into the pool' })
    this.rejected = register.counter<'reason'>({
      name: 'keel_txpool_rejected_total',
      help: 'Transactions refused at submission, by reason',
      labelNames: ['reason'],
    })
  }

  /** How submitted transactions travel to the producer thread: messages, and the transactions they carried. */
  bindSubmits(submits: { readonly batches: number; readonly items: number }): void {
    this.register.externalCounter({
      name: 'keel_txpool_submit_batches_total',
      help: 'Messages that carried submitted transactions to the block producer thread (one at a time; what arrives meanwhile waits for the next)',
      read: () => submits.batches,
    })
    this.register.externalCounter({
      name: 'keel_txpool_submit_batched_transactions_total',
      help: 'Transactions those messages carried (divided by keel_txpool_submit_batches_total: the batch size)',
      read: () => submits.items,
    })
  }

  /** Wraps the transaction submission methods of a method group to count acceptances and rejections. */
  instrument(group: Record<string, MethodHandler>): Record<string, MethodHandler> {
    const out: Record<string, MethodHandler> = { ...group }
    for (const name of ['eth_sendRawTransaction', 'eth_sendTransaction', 'eth_sendRawTransactionSync']) {
      const handler = group[name]
      if (handler === undefined) continue
      out[name] = async (params, ctx) => {
        try {
          const result = await handler(params, ctx)
          this.accepted.inc()
          return result
        } catch (err) {
          // eth_sendRawTransactionSync's timeout: the pool took the transaction, it was not mined in time
          if ((err as { code?: unknown } | null)?.code === TX_SYNC_TIMEOUT_CODE) this.accepted.inc()
          else this.rejected.inc({ reason: txRejectReason(err) })
          throw err
        }
      }
    }
    return out
  }
}
