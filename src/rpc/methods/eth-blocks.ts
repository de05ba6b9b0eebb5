// Blocks, transactions and receipts: the eth_getBlock*, eth_getTransaction*, eth_getRawTransaction*, eth_getUncle* family.

import { bytesToHex } from '@ethereumjs/util'
import type { TxWire } from '../../chain/messages.js'
import type { BlockRecord } from '../../chain/view.js'
import type { MethodHandler } from '../context.js'
import { RawJson } from '../context.js'
import { quantity } from '../../util/hex.js'
import * as p from '../params.js'
import { blockJson, blockReceiptsJson, headerJson, rawTransactionJson, receiptJson, transactionJson } from './chain-json.js'
import { resolveBlockOrNull } from './deps.js'
import type { MethodDeps } from './deps.js'

/** geth's answer of a raw-transaction getter that found nothing: a nil hexutil.Bytes, encoded "0x" */
const NO_BYTES = '0x'

type BlockLookup = (v: unknown, i: number) => Promise<BlockRecord | undefined>

/** The getters that exist twice, once addressing the block by number and once by hash. */
function blockGetters(kind: 'Number' | 'Hash', lookup: BlockLookup): Record<string, MethodHandler> {
  return {
    [`eth_getBlockBy${kind}`]: async (params) => {
      p.expectParams(params, 2, 2)
      const full = p.bool(params[1], 1)
      const block = await lookup(params[0], 0)
      return block === undefined ? null : blockJson(block, full)
    },
    // geth's eth namespace also serves the header alone
    [`eth_getHeaderBy${kind}`]: async (params) => {
      p.expectParams(params, 1, 1)
      const block = await lookup(params[0], 0)
      return block === undefined ? null : new RawJson(headerJson(block))
    },
    [`eth_getBlockTransactionCountBy${kind}`]: async (params) => {
      p.expectParams(params, 1, 1)
      const block = await lookup(params[0], 0)
      return block === undefined ? null : quantity(block.txHashes.length)
    },
    [`eth_getUncleCountByBlock${kind}`]: async (params) => {
      p.expectParams(params, 1, 1)
      return (await lookup(params[0], 0)) === undefined ? null : '0x0'
    },
    // post-merge blocks have no uncles: validate the arguments, answer null
    [`eth_getUncleByBlock${kind}AndIndex`]: async (params) => {
      p.expectParams(params, 2, 2)
      p.uint(params[1], 1)
      await lookup(params[0], 0)
      return null
    },
    [`eth_getTransactionByBlock${kind}AndIndex`]: async (params) => {
      p.expectParams(params, 2, 2)
      const index = p.uint(params[1], 1)
      const block = await lookup(params[0], 0)
      return block === undefined ? null : transactionJson(block, index)
    },
    // geth answers empty bytes ("0x"), not null, when there is no such block or transaction
    [`eth_getRawTransactionByBlock${kind}AndIndex`]: async (params) => {
      p.expectParams(params, 2, 2)
      const index = p.uint(params[1], 1)
      const block = await lookup(params[0], 0)
      return block === undefined || index >= block.txHashes.length ? NO_BYTES : bytesToHex(block.rawTx(index))
    },
  }
}

/** Where a mined transaction is: its block (undefined if the block is not stored) and position. */
type MinedTx = { block: BlockRecord | undefined; index: number }

export function blockMethods(deps: MethodDeps): Record<string, MethodHandler> {
  const view = deps.view
  const methods: Record<string, MethodHandler> = {
    ...blockGetters('Number', (v, i) => resolveBlockOrNull(view, p.blockTag(v, i))),
    ...blockGetters('Hash', (v, i) => view.blockByHash(p.hash32(v, i))),
    eth_getTransactionByHash: (params) => {
      p.expectParams(params, 1, 1)
      const hash = p.hash32(params[0], 0)
      const recent = view.recentTx(hash)
      return recent !== undefined ? transactionJson(recent.block, recent.index) : transactionByHash(hash)
    },
    eth_getRawTransactionByHash: (params) => {
      p.expectParams(params, 1, 1)
      const hash = p.hash32(params[0], 0)
      const recent = view.recentTx(hash)
      return recent !== undefined ? bytesToHex(recent.block.rawTx(recent.index)) : rawTransactionByHash(hash)
    },
    eth_getTransactionReceipt: (params) => {
      p.expectParams(params, 1, 1)
      const hash = p.hash32(params[0], 0)
      const recent = view.recentTx(hash)
      if (recent !== undefined) return receiptJson(recent.block, recent.index)
      return view.knownNotMined(hash) ? null : receiptByHash(hash)
    },
    eth_getBlockReceipts: async (params) => {
      p.expectParams(params, 1, 1)
      const block = await resolveBlockOrNull(view, p.blockSelector(params[0], 0))
      return block === undefined ? null : blockReceiptsJson(block)
    },
  }
  return methods

  /**
   * Where a transaction older than the recent-transaction index was mined: its block (undefined if the
   * block is not stored) and position; undefined when it was not mined.
   */
  async function minedAt(hash: string): Promise<MinedTx | undefined> {
    const loc = await view.txLocation(hash)
    return loc === undefined ? undefined : { block: await view.blockByNumber(loc.number), index: loc.index }
  }

  /** A transaction not mined yet, as the pool holds it. */
  function pooled(hash: string): Promise<TxWire | null> {
    return deps.producer.query<TxWire | null>({ q: 'get', hash })
  }

  /**
   * A transaction mined (its block and position) or pooled (as the pool holds it); undefined when neither.
   * After a pool miss the index is read again if a block was applied meanwhile: a transaction mined
   * between the two reads has left the pool, and the producer answers such a miss only after the block's
   * event (Producer.query), which the view has applied by then. With no block applied, the index cannot
   * show it (the view answers only up to its head).
   */
  async function findTx(hash: string): Promise<{ mined: MinedTx } | { wire: TxWire } | undefined> {
    const head = view.head.number
    const mined = await minedAt(hash)
    if (mined !== undefined) return { mined }
    const wire = await pooled(hash)
    if (wire !== null) return { wire }
    if (view.head.number === head) return undefined
    const minedMeanwhile = await minedAt(hash)
    return minedMeanwhile === undefined ? undefined : { mined: minedMeanwhile }
  }

  async function transactionByHash(hash: string): Promise<RawJson | null> {
    const found = await findTx(hash)
    if (found === undefined) return null
    if ('mined' in found) return found.mined.block === undefined ? null : transactionJson(found.mined.block, found.mined.index)
    return new RawJson(JSON.stringify(rawTransactionJson(found.wire.raw, found.wire.hash, found.wire.sender, null, deps.common)))
  }

  async function rawTransactionByHash(hash: string): Promise<string> {
    const found = await findTx(hash)
    if (found === undefined) return NO_BYTES
    if ('mined' in found) return found.mined.block === undefined ? NO_BYTES : bytesToHex(found.mined.block.rawTx(found.mined.index))
    return bytesToHex(found.wire.raw)
  }

  async function receiptByHash(hash: string): Promise<RawJson | null> {
    const mined = await minedAt(hash)
    return mined?.block === undefined ? null : receiptJson(mined.block, mined.index)
  }
}
