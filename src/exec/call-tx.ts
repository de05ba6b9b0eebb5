// The transaction object a call runs as: built from the call's fields for the engine's common, with the
// sender the call names (there is no signature to recover one from).

import type { Common } from '@ethereumjs/common'
import { createTx } from '@ethereumjs/tx'
import type { TxOptions, TypedTransaction } from '@ethereumjs/tx'
import type { Address } from '@ethereumjs/util'

export function createCallTx(common: Common, txData: Record<string, unknown>, from: Address, opts: { allowUnlimitedInitCodeSize?: boolean } = {}): TypedTransaction {
  // keelNoGasLimitCap (patches/): a call may carry more gas than EIP-7825 lets a transaction carry
  const txOpts: TxOptions & { keelNoGasLimitCap: boolean } = {
    common,
    freeze: false,
    allowUnlimitedInitCodeSize: opts.allowUnlimitedInitCodeSize ?? false,
    keelNoGasLimitCap: true,
  }
  const tx = createTx(txData as never, txOpts)
  ;(tx as { getSenderAddress: () => Address }).getSenderAddress = () => from
  return tx
}
