// The main thread's transaction intake, optimised by V8 before the first burst of eth_sendRawTransaction.
// A fresh node's first burst of transfers ran ~10% slower than one after V8 had optimised decoding,
// validation and sender recovery (measured in commit 3585216, bench/README.md there). After start-up the
// node decodes a few signed transfers of a throwaway key, over and over, in short slices between
// requests: the decoded transactions are dropped, so nothing reaches the pool, the chain or the metrics.

import { createFeeMarket1559Tx, createLegacyTx } from '@ethereumjs/tx'
import { bytesToHex } from '@ethereumjs/util'
import { admitRawTransaction } from './tx-intake.js'
import type { IntakeContext } from './tx-intake.js'
import { signNatively } from '../evm/crypto.js'
import type { FastCrypto } from '../evm/crypto.js'

type Sign = FastCrypto['secp256k1']['ecdsaSign']

/** Enough decodes for V8 to optimise the path: ~0.23 s of the main thread, ~0.3 s of CPU with V8's compiler threads. */
export const INTAKE_WARM_UP_DECODES = 1500
const DECODES_PER_TURN = 20
const THROWAWAY_KEY = new Uint8Array(32).fill(7)
const RECIPIENT = `0x${'00'.repeat(19)}07` as const

export interface WarmUp {
  /** Resolves once every decode ran, or at once after stop(). */
  readonly done: Promise<void>
  stop(): void
}

/**
 * Starts decoding in slices on later turns of the event loop; requests keep their turns in between.
 * `sign` is the native secp256k1's (see signNatively).
 */
export function startIntakeWarmUp(ctx: IntakeContext, sign: Sign, decodes = INTAKE_WARM_UP_DECODES): WarmUp {
  let raws: string[] | undefined
  let left = decodes
  let stopped = false
  let finish!: () => void
  const done = new Promise<void>((resolve) => (finish = resolve))
  const slice = (): void => {
    if (stopped) return finish()
    try {
      raws ??= signedTransfers(ctx, sign)
      for (let i = 0; i < DECODES_PER_TURN && left > 0; i++, left--) admitRawTransaction(raws[left % raws.length]!, ctx)
    } catch {
      // a context that refuses these transfers (a fee cap below their fee): nothing to warm
      left = 0
    }
    if (left > 0) setImmediate(slice)
    else finish()
  }
  setImmediate(slice)
  return {
    done,
    stop: () => {
      stopped = true
    },
  }
}

/** EIP-1559 and EIP-155 legacy transfers, the kinds wallets send, valid for this chain. */
function signedTransfers(ctx: IntakeContext, sign: Sign): string[] {
  const raws: string[] = []
  const fee = 10n ** 9n
  for (let nonce = 0n; nonce < 8n; nonce++) {
    const tx =
      nonce < 6n
        ? createFeeMarket1559Tx(
            { chainId: ctx.chainId, nonce, maxPriorityFeePerGas: fee, maxFeePerGas: 2n * fee, gasLimit: 21_000n, to: RECIPIENT, value: 1n },
            { common: ctx.common },
          )
        : createLegacyTx({ nonce, gasPrice: 2n * fee, gasLimit: 21_000n, to: RECIPIENT, value: 1n }, { common: ctx.common })
    raws.push(bytesToHex(signNatively(tx, THROWAWAY_KEY, sign)))
  }
  return raws
}
