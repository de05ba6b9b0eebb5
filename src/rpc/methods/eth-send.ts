// eth_sendRawTransaction: stateless checks and the one sender recovery happen here on the main thread;
// the producer thread then applies the stateful pool rules and answers. eth_sendRawTransactionSync
// (EIP-7966, as geth's) then waits for the receipt; automining (--block-time 0), eth_sendRawTransaction
// answers once the transaction's block is sealed.

import { admitRawTransaction } from '../../chain/tx-intake.js'
import { goDuration } from '../../util/go-duration.js'
import type { MethodHandler } from '../context.js'
import { invalidParams, RpcError } from '../../errors.js'
import * as p from '../params.js'
import { receiptJson } from './chain-json.js'
import type { MethodDeps } from './deps.js'
import { ReceiptWaiters } from './receipt-waiters.js'

/** geth's rpc.txsync.defaulttimeout and rpc.txsync.maxtimeout. */
const TX_SYNC_DEFAULT_TIMEOUT_MS = 20_000
const TX_SYNC_MAX_TIMEOUT_MS = 60_000
/** The most eth_sendRawTransaction waits, automining, for the block holding the transaction. */
const AUTOMINE_WAIT_MS = 2_000
/** geth's txSyncTimeoutError code; its data is the transaction hash. */
export const TX_SYNC_TIMEOUT_CODE = 4

/** The wait eth_sendRawTransactionSync's optional second parameter asks for (geth: *uint64 of milliseconds). */
function syncTimeoutMs(v: unknown): number {
  if (v === undefined || v === null) return TX_SYNC_DEFAULT_TIMEOUT_MS
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) {
    throw invalidParams(`invalid argument 1: json: cannot unmarshal ${typeof v === 'number' ? `number ${v}` : p.jsonKind(v)} into Go value of type uint64`)
  }
  if (v === 0) return TX_SYNC_DEFAULT_TIMEOUT_MS
  return v > TX_SYNC_MAX_TIMEOUT_MS ? TX_SYNC_MAX_TIMEOUT_MS : v
}

export function sendMethods(deps: MethodDeps): Record<string, MethodHandler> {
  const view = deps.view
  const waiters = new ReceiptWaiters()
  view.onHead((block) => waiters.blockArrived(block))

  const submit = async (raw: unknown): Promise<{ hash: string; nextBlock: boolean }> => {
    if (typeof raw !== 'string') p.data(raw, 0)
    const epoch = view.notMinedEpoch
    const accepted = await deps.producer.submit(admitRawTransaction(raw as string, deps.intake))
    // its receipt polls until it is mined are answered from memory, not the tx index
    view.acceptedNotMined(accepted.hash, epoch)
    return accepted
  }

  return {
    eth_sendRawTransaction: async (params) => {
      p.expectParams(params, 1, 1)
      const { hash, nextBlock } = await submit(params[0])
      // Automining, the hash is answered once the block holding the transaction is sealed, as anvil and
      // Hardhat answer it: a client that asks for the receipt next finds it. Answered at once, ethers'
      // wait() could miss that block (it asks for the receipt, then takes the block number as its
      // starting point) and, with no block after it, wait for ever.
      if (nextBlock && view.recentTx(hash) === undefined) {
        await waiters.wait(hash, AUTOMINE_WAIT_MS, () => new Error('not sealed yet')).catch(() => undefined)
      }
      return hash
    },
    eth_sendRawTransactionSync: async (params) => {
      p.expectParams(params, 1, 2)
      const timeoutMs = syncTimeoutMs(params[1])
      const { hash } = await submit(params[0])
      // already mined (a block can land between the pool's answer and this line)
      const recent = view.recentTx(hash)
      if (recent !== undefined) return receiptJson(recent.block, recent.index)
      return waiters.wait(hash, timeoutMs, () =>
        new RpcError(TX_SYNC_TIMEOUT_CODE, `The transaction was added to the transaction pool but wasn't processed in ${goDuration(timeoutMs)}`, hash),
      )
    },
  }
}
