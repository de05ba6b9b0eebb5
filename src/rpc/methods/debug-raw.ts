// geth's debug getters of consensus encodings (execution-apis' debug_getRawHeader, debug_getRawBlock,
// debug_getRawReceipts, debug_getRawTransaction and debug_getBadBlocks): the bytes a block, its header,
// its receipts or a transaction hash to, as another client would import them.

import { RLP } from '@ethereumjs/rlp'
import type { Input } from '@ethereumjs/rlp'
import { bigIntToUnpaddedBytes } from '@ethereumjs/util'
import type { BlockRecord } from '../../chain/view.js'
import { encodeBlockRlp } from '../../chain/block-rlp.js'
import type { MethodHandler } from '../context.js'
import { serverError } from '../../errors.js'
import { receiptBloom } from '../../json/receipt.js'
import { bytesToHex } from '../../util/hex.js'
import * as p from '../params.js'
import { resolveBlockOrNull } from './deps.js'
import type { MethodDeps } from './deps.js'
import { blockMemo } from './chain-json.js'

const SUCCESS = Uint8Array.of(1)
const FAILURE = new Uint8Array(0)

/** @param rawTransaction eth_getRawTransactionByHash's handler: geth's debug_getRawTransaction answers the same */
export function debugRawMethods(deps: MethodDeps, rawTransaction: MethodHandler): Record<string, MethodHandler> {
  const view = deps.view

  const blockAt = async (v: unknown): Promise<BlockRecord> => {
    const selector = p.blockSelector(v, 0)
    const block = await resolveBlockOrNull(view, selector)
    if (block === undefined) throw serverError(selector.kind === 'hash' ? `block ${selector.hash} not found` : 'header not found')
    return block
  }

  return {
    debug_getRawHeader: async (params) => {
      p.expectParams(params, 1, 1)
      return bytesToHex((await blockAt(params[0])).header.serialize())
    },
    debug_getRawBlock: async (params) => {
      p.expectParams(params, 1, 1)
      const block = await blockAt(params[0])
      return blockMemo(block, 'raw:block', () => bytesToHex(blockRlp(block)))
    },
    debug_getRawReceipts: async (params) => {
      p.expectParams(params, 1, 1)
      const block = await blockAt(params[0])
      return blockMemo(block, 'raw:receipts', () => rawReceipts(block))
    },
    debug_getRawTransaction: rawTransaction,
    // a single producer seals every block it has: none was ever refused
    debug_getBadBlocks: (params) => {
      p.expectParams(params, 0, 0)
      return []
    },
  }
}

/** The block as geth encodes it: header, transactions, uncles, withdrawals. */
function blockRlp(block: BlockRecord): Uint8Array {
  const txs: Uint8Array[] = new Array(block.txHashes.length)
  for (let i = 0; i < txs.length; i++) txs[i] = block.rawTx(i)
  const body = { txs, senders: [], uncles: [...block.uncles], withdrawals: [...block.withdrawals] }
  return encodeBlockRlp(block.header.serialize(), body, block.header.withdrawalsRoot !== undefined)
}

/** Each receipt's EIP-2718 encoding: [status, cumulative gas, bloom, logs], after its type byte if typed. */
function rawReceipts(block: BlockRecord): string[] {
  const receipts = block.receipts()
  return receipts.map((receipt, i) => {
    const raw = block.rawTx(i)
    const payload = RLP.encode([
      receipt.root ?? (receipt.status === 1 ? SUCCESS : FAILURE),
      bigIntToUnpaddedBytes(receipt.cumulativeGasUsed),
      receiptBloom(receipt.logs, block.header.common),
      receipt.logs as Input,
    ])
    if (raw.length === 0 || raw[0] >= 0x80) return bytesToHex(payload)
    const typed = new Uint8Array(payload.length + 1)
    typed[0] = raw[0]
    typed.set(payload, 1)
    return bytesToHex(typed)
  })
}
