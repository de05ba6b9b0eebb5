// eth_fillTransaction: a transaction's missing fields filled as geth's TransactionArgs.setDefaults fills
// them (fees from the tip oracle, the sender's pending nonce, gas from an estimate at the head, the chain
// id), returned unsigned, for the caller to sign and send: `raw` (the EIP-2718 encoding with empty
// signature values) and `tx` (geth's JSON of a transaction).

import { createTx } from '@ethereumjs/tx'
import type { TypedTransaction } from '@ethereumjs/tx'
import { stripTxContext } from '../../chain/tx-intake.js'
import { authorizationListData } from '../../exec/authorization-data.js'
import { DEFAULT_SENDER } from '../../exec/types.js'
import type { MethodHandler } from '../context.js'
import { serverError } from '../../errors.js'
import { accessListJson, authorizationListJson } from '../../json/transaction.js'
import { bytesToHex, quantity } from '../../util/hex.js'
import * as p from '../params.js'
import { callClientOf, resolveStateBlock } from './deps.js'
import type { MethodDeps } from './deps.js'
import { toTask, unwrap } from './eth-exec.js'
import type { TipOracle } from './tip-oracle.js'

export function fillMethods(deps: MethodDeps, tips: TipOracle): Record<string, MethodHandler> {
  const chainId = BigInt(deps.config.chainId)
  return {
    eth_fillTransaction: async (params, ctx) => {
      p.expectParams(params, 1, 1)
      const req = p.callRequest(params[0], 0, { chainId })
      if (req.blobVersionedHashes !== undefined) throw serverError('transaction type not supported')
      await setFeeDefaults(req, tips, deps.view.head.baseFeePerGas)
      const from = req.from ?? DEFAULT_SENDER
      const nonce = req.nonce ?? (await deps.producer.pendingNonce(from))
      if (req.to === null && (req.input === undefined || req.input.length === 0)) throw serverError('contract creation without any data provided')
      if (req.authorizationList !== undefined) {
        if (req.to === null) throw serverError('EIP-7702 transaction cannot be used to create contract')
        if (req.authorizationList.length === 0) throw serverError('set code tx must have at least one authorization tuple')
      }
      let gas = req.gas
      if (gas === undefined) {
        // as geth: the estimate sees the fees and the value, not the nonce
        const block = await resolveStateBlock(deps.view, p.LATEST)
        const estimate = unwrap(await deps.executor.run(toTask('estimateGas', { ...req, nonce: undefined }, block), callClientOf(deps, ctx)))
        if (estimate.kind !== 'estimateGas') throw serverError('gas estimation failed')
        gas = estimate.gas
      }
      const tx = unsignedTx(req, { chainId, nonce, gas }, deps)
      const raw = tx.serialize()
      return { raw: bytesToHex(raw), tx: txJson(tx, deps.keccak(raw)) }
    },
  }
}

/** geth's setFeeDefaults with London active: a complete fee choice is checked, a partial one completed. */
async function setFeeDefaults(req: p.CallRequest, tips: TipOracle, headBaseFee: bigint): Promise<void> {
  if (req.gasPrice !== undefined) {
    if (req.gasPrice === 0n) throw serverError('gasPrice must be non-zero after london fork')
    return
  }
  if (req.maxFeePerGas !== undefined && req.maxPriorityFeePerGas !== undefined && req.maxFeePerGas === 0n) {
    throw serverError('maxFeePerGas must be non-zero')
  }
  // the max fee leaves room for the base fee to double
  req.maxPriorityFeePerGas ??= await tips.suggest()
  req.maxFeePerGas ??= req.maxPriorityFeePerGas + 2n * headBaseFee
  if (req.maxFeePerGas < req.maxPriorityFeePerGas) {
    throw serverError(`maxFeePerGas (${quantity(req.maxFeePerGas)}) < maxPriorityFeePerGas (${quantity(req.maxPriorityFeePerGas)})`)
  }
}

/** geth's ToTransaction: set code if authorizations, else 1559 if a max fee, else 2930 if an access list, else legacy. */
function unsignedTx(req: p.CallRequest, filled: { chainId: bigint; nonce: bigint; gas: bigint }, deps: MethodDeps): TypedTransaction {
  const base = {
    chainId: filled.chainId,
    nonce: filled.nonce,
    gasLimit: filled.gas,
    to: req.to ?? undefined,
    value: req.value ?? 0n,
    data: req.input ?? new Uint8Array(),
  }
  let data: Record<string, unknown>
  if (req.authorizationList !== undefined) {
    data = {
      ...base,
      type: 4,
      maxFeePerGas: req.maxFeePerGas,
      maxPriorityFeePerGas: req.maxPriorityFeePerGas,
      accessList: req.accessList ?? [],
      authorizationList: authorizationListData(req.authorizationList),
    }
  } else if (req.maxFeePerGas !== undefined) {
    data = { ...base, type: 2, maxFeePerGas: req.maxFeePerGas, maxPriorityFeePerGas: req.maxPriorityFeePerGas, accessList: req.accessList ?? [] }
  } else if (req.accessList !== undefined) {
    data = { ...base, type: 1, gasPrice: req.gasPrice, accessList: req.accessList }
  } else {
    data = { ...base, type: 0, gasPrice: req.gasPrice }
  }
  try {
    return createTx(data as never, { common: deps.common, freeze: false })
  } catch (err) {
    // what @ethereumjs refuses to encode (a nonce of 2^64-1, gas × fee cap past 2^256-1)
    throw serverError(stripTxContext((err as Error).message))
  }
}

/**
 * geth's JSON of a types.Transaction (no sender: it is not signed), with empty signature values and the
 * hash of this unsigned encoding; a fee-market transaction also names `gasPrice` (= its max fee), which
 * execution-apis' unsigned transaction schemas require.
 */
function txJson(tx: TypedTransaction, hash: Uint8Array): Record<string, unknown> {
  const out: Record<string, unknown> = { type: quantity(tx.type) }
  if (tx.type !== 0) out.chainId = quantity(tx.common.chainId())
  out.nonce = quantity(tx.nonce)
  out.to = tx.to === undefined ? null : tx.to.toString()
  out.gas = quantity(tx.gasLimit)
  if ('gasPrice' in tx) out.gasPrice = quantity(tx.gasPrice)
  if ('maxFeePerGas' in tx) {
    out.maxPriorityFeePerGas = quantity(tx.maxPriorityFeePerGas)
    out.maxFeePerGas = quantity(tx.maxFeePerGas)
    out.gasPrice = quantity(tx.maxFeePerGas)
  }
  out.value = quantity(tx.value)
  out.input = bytesToHex(tx.data)
  if ('accessList' in tx) out.accessList = accessListJson(tx.accessList)
  if ('authorizationList' in tx) out.authorizationList = authorizationListJson(tx.authorizationList)
  out.v = '0x0'
  out.r = '0x0'
  out.s = '0x0'
  if (tx.type !== 0) out.yParity = '0x0'
  out.hash = bytesToHex(hash)
  return out
}
