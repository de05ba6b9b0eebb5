// The Otterscan namespace at API level 8, with Erigon's shapes and semantics (Erigon is the reference
// implementation: rpc/jsonrpc/otterscan_*.go), and erigon_getHeaderByNumber, which Otterscan probes.
// Address history, transactions by sender and nonce and contract creators are reads of the explorer's
// indexes (indexes/); traces run the transaction again in the call pool with geth's callTracer and are
// reshaped as Erigon's tracers shape them (json/ots-trace.ts). Block numbers, page numbers, page sizes
// and nonces arrive from Otterscan as JSON numbers; hex and tags are accepted too. trace_replayTransaction
// serves the State tab's stateDiff (OpenEthereum's shape, as Erigon gives it) from geth's prestateTracer
// in diff mode; its other trace types are not served.

import { Address, bytesToHex, equalsBytes, hexToBytes, KECCAK256_NULL } from '@ethereumjs/util'
import { gasUsedAt } from '../../chain/receipts.js'
import { readTxFields } from '../../chain/tx-fields.js'
import type { BlockRecord } from '../../chain/view.js'
import { invalidParams, serverError } from '../../errors.js'
import type { StateReader } from '../../exec/state-reader.js'
import { indexedFrom, indexesComplete } from '../../indexes/progress.js'
import { appearancesAfter, appearancesBefore, creatorOf, txBySenderAndNonce } from '../../indexes/reader.js'
import type { AppearancePage } from '../../indexes/reader.js'
import { otsInternalOperations, otsTraceEntries, otsTransactionError } from '../../json/ots-trace.js'
import type { CallTracerFrame } from '../../json/ots-trace.js'
import { parityStateDiff } from '../../json/parity-state-diff.js'
import type { PrestateDiff } from '../../json/parity-state-diff.js'
import { LruMap } from '../../util/lru.js'
import { quantity } from '../../util/hex.js'
import { RawJson } from '../context.js'
import type { MethodHandler, RequestContext } from '../context.js'
import * as p from '../params.js'
import { traceOptions } from '../trace-config.js'
import { blockPrefix } from './block-prefix.js'
import { blockJson, blockMemo, headerJson, receiptTextsBetween, transactionJson } from './chain-json.js'
import { callClientOf, resolveBlockOrNull, resolveStateBlock } from './deps.js'
import type { MethodDeps } from './deps.js'
import { unwrap } from './eth-exec.js'

/** Erigon's API level for Otterscan 2.x (the UI refuses a node below 8). */
const API_LEVEL = 8
/** Erigon's --ots.search.max.pagesize default: the most transactions an address-history page asks for. */
export const MAX_SEARCH_PAGE_SIZE = 25
/** Erigon reads ots_getBlockTransactions' page number and size as uint8. */
const MAX_BLOCK_PAGE = 255
/** Call traces of transactions kept for the three views of one transaction page (a mined trace never changes). */
const TRACE_CACHE = 256
/** Erigon's issuance object on a chain without block rewards. */
const NO_ISSUANCE = { blockReward: '0x0', uncleReward: '0x0', issuance: '0x0' }

export function otsMethods(deps: MethodDeps, state: StateReader): Record<string, MethodHandler> {
  const view = deps.view
  const level = view.level
  const limits = { maxTimeoutMs: deps.config.rpcEvmTimeoutMs, maxBytes: deps.config.batchResponseMaxSize }
  const callTracer = traceOptions({ tracer: 'callTracer' }, 0, 'TraceConfig', limits)
  const stateDiffTracer = traceOptions({ tracer: 'muxTracer', tracerConfig: { callTracer: { onlyTopCall: true }, prestateTracer: { diffMode: true } } }, 0, 'TraceConfig', limits)
  const traces = new LruMap<string, Promise<CallTracerFrame>>(TRACE_CACHE)
  /** the index mark, read until the indexes are complete (then it never moves again) */
  let complete = false

  const block = async (v: unknown, i: number): Promise<BlockRecord | undefined> => resolveBlockOrNull(view, p.lenientBlockTag(v, i))

  /** Throws unless the indexes reach down to block `lowest`. */
  const needIndexesFrom = async (lowest: bigint): Promise<void> => {
    if (complete) return
    const from = (await indexedFrom(level)) ?? 0n
    if (indexesComplete(from)) {
      complete = true
      return
    }
    if (lowest < from) throw indexesBuilding(from)
  }

  /** A mined transaction's block and position; undefined when it was not mined. */
  const minedTx = async (hash: string): Promise<{ block: BlockRecord; index: number } | undefined> => {
    const recent = view.recentTx(hash)
    if (recent !== undefined) return recent
    const at = await view.txLocation(hash)
    const b = at === undefined ? undefined : await view.blockByNumber(at.number)
    return at === undefined || b === undefined ? undefined : { block: b, index: at.index }
  }

  /** `hash` run again in the call pool with `options`: the tracer's JSON. */
  const traceOf = async (hash: string, options: typeof callTracer, ctx: RequestContext): Promise<unknown> => {
    const found = await minedTx(hash)
    if (found === undefined) throw serverError('transaction not found')
    if (found.block.number === 0n) throw serverError('genesis is not traceable')
    const prefix = await blockPrefix(view, found.block, found.index + 1)
    const result = unwrap(await deps.executor.run({ kind: 'traceBlock', mode: 'transaction', ...prefix, traced: [found.index], options }, callClientOf(deps, ctx)))
    if (result.kind !== 'trace') throw serverError('tracing failed')
    return JSON.parse(result.json)
  }

  /** The transaction's callTracer tree, run once in the call pool and kept. */
  const callTrace = (hash: string, ctx: RequestContext): Promise<CallTracerFrame> => {
    let trace = traces.get(hash)
    if (trace === undefined) {
      trace = traceOf(hash, callTracer, ctx) as Promise<CallTracerFrame>
      traces.set(hash, trace)
      // a failure (a timeout under load, say) is not kept
      trace.catch(() => traces.delete(hash))
    }
    return trace
  }

  /** An address-history page as Erigon answers it: transactions and receipts (with logs and `timestamp`), newest first. */
  const searchAnswer = async (page: AppearancePage, firstPage: boolean, lastPage: boolean): Promise<RawJson> => {
    const txs: string[] = []
    const receipts: string[] = []
    for (const { number, index } of page.items) {
      const b = await view.blockByNumber(number)
      const tx = b === undefined ? null : transactionJson(b, index)
      if (b === undefined || tx === null) throw serverError(`block ${number} transaction ${index} is indexed but not stored`)
      const [receipt] = receiptTextsBetween(b, index, index + 1)
      txs.push(tx.json)
      receipts.push(`${receipt.slice(0, -1)},"timestamp":${b.header.timestamp}}`)
    }
    return new RawJson(`{"txs":[${txs.join(',')}],"receipts":[${receipts.join(',')}],"firstPage":${firstPage},"lastPage":${lastPage}}`)
  }

  const searchParams = (params: readonly unknown[]): { address: Uint8Array; number: bigint; pageSize: number } => {
    p.expectParams(params, 3, 3)
    const address = hexToBytes(p.address(params[0], 0) as `0x${string}`)
    const number = BigInt(p.lenientUint(params[1], 1))
    const pageSize = p.lenientUint(params[2], 2)
    if (pageSize > MAX_SEARCH_PAGE_SIZE) throw serverError(`max allowed page size: ${MAX_SEARCH_PAGE_SIZE}`)
    return { address, number, pageSize }
  }

  return {
    ots_getApiLevel: (params) => {
      p.expectParams(params, 0, 0)
      return API_LEVEL
    },

    erigon_getHeaderByNumber: async (params) => {
      p.expectParams(params, 1, 1)
      const ref = p.lenientBlockTag(params[0], 0)
      const b = await resolveBlockOrNull(view, ref)
      if (b === undefined) throw serverError(`block header not found: ${ref.kind === 'number' ? ref.number : ref.tag}`)
      return new RawJson(headerJson(b))
    },

    ots_getBlockDetails: async (params) => {
      p.expectParams(params, 1, 1)
      const b = await block(params[0], 0)
      return b === undefined ? null : blockDetails(b)
    },

    ots_getBlockDetailsByHash: async (params) => {
      p.expectParams(params, 1, 1)
      const b = await view.blockByHash(p.hash32(params[0], 0))
      return b === undefined ? null : blockDetails(b)
    },

    ots_getBlockTransactions: async (params) => {
      p.expectParams(params, 3, 3)
      const pageNumber = p.lenientUint(params[1], 1)
      const pageSize = p.lenientUint(params[2], 2)
      if (pageNumber > MAX_BLOCK_PAGE) throw invalidParams(`invalid argument 1: page number ${pageNumber} is over ${MAX_BLOCK_PAGE}`)
      if (pageSize > MAX_BLOCK_PAGE) throw invalidParams(`invalid argument 2: page size ${pageSize} is over ${MAX_BLOCK_PAGE}`)
      const b = await block(params[0], 0)
      return b === undefined ? null : blockTransactions(b, pageNumber, pageSize)
    },

    ots_searchTransactionsBefore: async (params) => {
      const { address, number, pageSize } = searchParams(params)
      const head = view.head.number
      // 0: from the newest block; otherwise strictly before the block named
      const before = number === 0n || number > head ? head + 1n : number
      const page = await appearancesBefore(level, address, before, 0n, pageSize)
      // the page reaches down to where the indexes end without knowing what lies below
      if (!page.hasMore) await needIndexesFrom(0n)
      return searchAnswer(page, number === 0n, !page.hasMore)
    },

    ots_searchTransactionsAfter: async (params) => {
      const { address, number, pageSize } = searchParams(params)
      await needIndexesFrom(number + 1n)
      const page = await appearancesAfter(level, address, number, view.head.number, pageSize)
      return searchAnswer(page, !page.hasMore, number === 0n)
    },

    ots_getTransactionBySenderAndNonce: async (params) => {
      p.expectParams(params, 2, 2)
      const sender = hexToBytes(p.address(params[0], 0) as `0x${string}`)
      const nonce = BigInt(p.lenientUint(params[1], 1))
      const hash = await txBySenderAndNonce(level, sender, nonce)
      if (hash === undefined) {
        await needIndexesFrom(0n)
        return null
      }
      const hex = bytesToHex(hash)
      return (await minedTx(hex)) === undefined ? null : hex
    },

    ots_getContractCreator: async (params) => {
      p.expectParams(params, 1, 1)
      const address = p.address(params[0], 0)
      // an account without code now has no creator to report (an EOA, nothing, or a destroyed contract)
      const sm = await state.at((await view.headRecord()).header.stateRoot)
      const account = await sm.getAccount(new Address(hexToBytes(address as `0x${string}`)))
      if (account === undefined || equalsBytes(account.codeHash, KECCAK256_NULL)) return null
      const created = await creatorOf(level, hexToBytes(address as `0x${string}`))
      if (created === undefined) {
        await needIndexesFrom(0n)
        // in the genesis: created by no transaction
        return null
      }
      return { hash: bytesToHex(created.hash), creator: bytesToHex(created.creator) }
    },

    ots_hasCode: async (params) => {
      p.expectParams(params, 2, 2)
      const address = p.address(params[0], 0)
      const b = await resolveStateBlock(view, p.lenientBlockSelector(params[1], 1))
      const account = await (await state.at(b.header.stateRoot)).getAccount(new Address(hexToBytes(address as `0x${string}`)))
      return account !== undefined && !equalsBytes(account.codeHash, KECCAK256_NULL)
    },

    ots_getInternalOperations: async (params, ctx) => {
      p.expectParams(params, 1, 1)
      return otsInternalOperations(await callTrace(p.hash32(params[0], 0), ctx))
    },

    ots_traceTransaction: async (params, ctx) => {
      p.expectParams(params, 1, 1)
      return otsTraceEntries(await callTrace(p.hash32(params[0], 0), ctx))
    },

    ots_getTransactionError: async (params, ctx) => {
      p.expectParams(params, 1, 1)
      return otsTransactionError(await callTrace(p.hash32(params[0], 0), ctx))
    },

    // Otterscan's State tab: [hash, ["stateDiff"]]
    trace_replayTransaction: async (params, ctx) => {
      p.expectParams(params, 2, 2)
      const hash = p.hash32(params[0], 0)
      const types = params[1]
      if (!Array.isArray(types) || !types.every((t) => typeof t === 'string')) throw invalidParams('invalid argument 1: trace types must be a list of strings')
      for (const t of types) if (t !== 'stateDiff') throw invalidParams(`invalid argument 1: trace type ${JSON.stringify(t)} is not served (Keel serves "stateDiff")`)
      const traced = (await traceOf(hash, stateDiffTracer, ctx)) as { callTracer: CallTracerFrame; prestateTracer: PrestateDiff }
      return {
        output: traced.callTracer.output ?? '0x',
        stateDiff: types.length === 0 ? null : parityStateDiff(traced.prestateTracer),
        trace: null,
        vmTrace: null,
      }
    },
  }
}

const indexesBuilding = (from: bigint) =>
  serverError(`the explorer's indexes are being built: they reach back to block ${from}, older blocks are not indexed yet; ask again once they are`)

/** ots_getBlockDetails: the block without its transactions, their count as a JSON number, no bloom; its fees. */
function blockDetails(b: BlockRecord): RawJson {
  return blockMemo(b, 'ots:details', () => {
    const details = otsBlock(b)
    delete details.transactions
    return new RawJson(JSON.stringify({ block: details, issuance: NO_ISSUANCE, totalFees: quantity(totalFees(b)) }))
  })
}

/** The block's JSON as the ots_ methods give it: transactionCount as a number, logsBloom null. */
function otsBlock(b: BlockRecord): Record<string, unknown> {
  const out = JSON.parse(blockJson(b, false).json) as Record<string, unknown>
  out.transactionCount = b.txHashes.length
  out.logsBloom = null
  return out
}

/** Σ gas used × effective gas price: what the block's transactions paid, the burnt base fee included. */
function totalFees(b: BlockRecord): bigint {
  const receipts = b.receipts()
  const baseFee = b.header.baseFeePerGas ?? 0n
  let total = 0n
  for (let i = 0; i < receipts.length; i++) {
    const tx = readTxFields(b.rawTx(i))
    const tip = tx.maxFeePerGas - baseFee < tx.maxPriorityFeePerGas ? tx.maxFeePerGas - baseFee : tx.maxPriorityFeePerGas
    // legacy and EIP-2930: both fields hold the gas price, so this is the gas price
    total += gasUsedAt(receipts, i) * (tx.type < 2 ? tx.maxFeePerGas : baseFee + tip)
  }
  return total
}

/**
 * ots_getBlockTransactions: pages counted from the end of the block, as Erigon and the UI's arithmetic
 * have it (page 0 holds the last `pageSize` transactions), in block order; inputs cut to the selector,
 * receipts without logs.
 */
function blockTransactions(b: BlockRecord, pageNumber: number, pageSize: number): RawJson {
  const total = b.txHashes.length
  const end = Math.max(0, Math.min(total, total - pageNumber * pageSize))
  const start = Math.max(0, end - pageSize)
  const fullblock = otsBlock(b)
  const txs: unknown[] = []
  const receipts: unknown[] = []
  const receiptTexts = receiptTextsBetween(b, start, end)
  for (let i = start; i < end; i++) {
    const tx = JSON.parse(transactionJson(b, i)!.json) as Record<string, unknown>
    const input = tx.input as string
    if (input.length > 10) tx.input = input.slice(0, 10)
    txs.push(tx)
    const receipt = JSON.parse(receiptTexts[i - start]) as Record<string, unknown>
    receipt.logs = null
    receipt.logsBloom = null
    receipts.push(receipt)
  }
  fullblock.transactions = txs
  return new RawJson(JSON.stringify({ fullblock, receipts }))
}
