// Fee methods: eth_gasPrice, eth_maxPriorityFeePerGas (tip-oracle.ts), eth_baseFee, eth_blobBaseFee,
// eth_feeHistory.

import type { BlockRecord } from '../../chain/view.js'
import { LruMap } from '../../util/lru.js'
import { RawJson } from '../context.js'
import type { MethodHandler } from '../context.js'
import { invalidParams, serverError } from '../../errors.js'
import { quantity } from '../../util/hex.js'
import * as p from '../params.js'
import { refToNumber } from './deps.js'
import { blockMemo } from './chain-json.js'
import { tipSamplesOf } from './tip-oracle.js'
import type { TipOracle } from './tip-oracle.js'
import type { MethodDeps } from './deps.js'

const MAX_FEE_HISTORY = 1024
/** geth's maxQueryLimit for reward percentiles */
const MAX_PERCENTILES = 100
/** eth_feeHistory answers kept, by JSON size; one answer is kept only when it is small */
const ANSWER_CACHE_CHARS = 4 << 20
const MAX_CACHED_ANSWER = 64 << 10

export function feeMethods(deps: MethodDeps, tips: TipOracle): Record<string, MethodHandler> {
  const view = deps.view
  // wallets poll eth_feeHistory with the same arguments every block
  const answers = new LruMap<string, RawJson>(ANSWER_CACHE_CHARS, (answer) => answer.json.length + 64)
  return {
    eth_gasPrice: async (params) => {
      p.expectParams(params, 0, 0)
      return quantity((await tips.suggest()) + view.head.baseFeePerGas)
    },
    eth_baseFee: async (params) => {
      p.expectParams(params, 0, 0)
      return quantity((await view.headRecord()).header.calcNextBaseFee())
    },
    eth_blobBaseFee: async (params) => {
      p.expectParams(params, 0, 0)
      const head = (await view.headRecord()).header
      return quantity(head.excessBlobGas !== undefined ? head.calcNextBlobGasPrice(head.common) : 0n)
    },
    eth_maxPriorityFeePerGas: async (params) => {
      p.expectParams(params, 0, 0)
      return quantity(await tips.suggest())
    },
    eth_feeHistory: async (params) => {
      p.expectParams(params, 2, 3)
      const count = Number(p.hexOrDecimal64(params[0], 0))
      const newestRef = p.blockTag(params[1], 1)
      const percentiles = rewardPercentiles(params[2])
      // geth answers an empty history for no blocks before it looks at the percentiles or the range
      if (count === 0) return emptyHistory()
      if (percentiles !== undefined) checkPercentiles(percentiles)
      // no percentiles asked (none, or an empty list): geth leaves the reward field out
      const rewardsAt = percentiles !== undefined && percentiles.length > 0 ? percentiles : undefined
      const newest = refToNumber(view, newestRef)
      if (newest === undefined) throw serverError(`request beyond head block: requested ${newestRef.kind === 'number' ? newestRef.number : newestRef.tag}, head ${view.head.number}`)
      const blocks = Math.min(count, MAX_FEE_HISTORY, Number(newest) + 1)
      const oldest = newest - BigInt(blocks) + 1n
      const percentilesKey = rewardsAt?.join(',') ?? 'none'
      // blocks are final (the chain never reorganises), so an answer stands for its range and percentiles
      const answerKey = `${oldest}-${newest}-${percentilesKey}`
      const cached = answers.get(answerKey)
      if (cached !== undefined) return cached
      const baseFeePerGas: string[] = []
      const baseFeePerBlobGas: string[] = []
      const gasUsedRatio: number[] = []
      const blobGasUsedRatio: number[] = []
      const reward: string[][] = []
      let last: FeeRow | undefined
      for (let n = oldest; n <= newest; n++) {
        const block = view.cachedBlock(n) ?? (await view.blockByNumber(n))
        if (block === undefined) break
        const row = feeRowOf(block)
        last = row
        baseFeePerGas.push(row.baseFee)
        baseFeePerBlobGas.push(row.blobBaseFee)
        gasUsedRatio.push(row.gasUsedRatio)
        blobGasUsedRatio.push(0)
        if (rewardsAt !== undefined) reward.push(rewardsFor(block, rewardsAt, percentilesKey))
      }
      if (last !== undefined) {
        baseFeePerGas.push(last.nextBaseFee)
        baseFeePerBlobGas.push(last.nextBlobBaseFee)
      }
      const out: Record<string, unknown> = { oldestBlock: quantity(oldest), baseFeePerGas, gasUsedRatio, baseFeePerBlobGas, blobGasUsedRatio }
      if (rewardsAt !== undefined) out.reward = reward
      const answer = new RawJson(JSON.stringify(out))
      if (gasUsedRatio.length === blocks && answer.json.length <= MAX_CACHED_ANSWER) answers.set(answerKey, answer)
      return answer
    },
  }
}

const emptyHistory = () => ({ oldestBlock: '0x0', baseFeePerGas: [], gasUsedRatio: [], baseFeePerBlobGas: [], blobGasUsedRatio: [] })

/** The percentiles argument as geth decodes it ([]float64: a null element is 0, null or absent is none). */
function rewardPercentiles(v: unknown): number[] | undefined {
  if (v === undefined || v === null) return undefined
  if (!Array.isArray(v)) throw invalidParams(`invalid argument 2: json: cannot unmarshal ${p.jsonKind(v)} into Go value of type []float64`)
  const out: number[] = new Array(v.length)
  for (let i = 0; i < v.length; i++) {
    const x: unknown = v[i]
    if (x === null) out[i] = 0
    else if (typeof x === 'number' && Number.isFinite(x)) out[i] = x
    else throw invalidParams(`invalid argument 2: json: cannot unmarshal ${p.jsonKind(x)} into Go value of type float64`)
  }
  return out
}

/** geth's checks of the percentiles, in its order and words (plain errors there: code -32000). */
function checkPercentiles(percentiles: number[]): void {
  if (percentiles.length > MAX_PERCENTILES) throw serverError(`invalid reward percentile: over the query limit ${MAX_PERCENTILES}`)
  for (let i = 0; i < percentiles.length; i++) {
    const pct = percentiles[i]!
    if (pct < 0 || pct > 100) throw serverError(`invalid reward percentile: ${goFloat(pct)}`)
    if (i > 0 && pct < percentiles[i - 1]!) {
      throw serverError(`invalid reward percentile: #${i - 1}:${goFloat(percentiles[i - 1]!)} > #${i}:${goFloat(pct)}`)
    }
  }
}

/** Go's %f: six decimals. */
const goFloat = (v: number): string => v.toFixed(6)

/** A block's own entries of an eth_feeHistory answer (and of the next block's fees), made once per block. */
interface FeeRow {
  baseFee: string
  blobBaseFee: string
  gasUsedRatio: number
  nextBaseFee: string
  nextBlobBaseFee: string
}

function feeRowOf(block: BlockRecord): FeeRow {
  return blockMemo(block, 'fee:row', () => {
    const h = block.header
    return {
      baseFee: quantity(h.baseFeePerGas ?? 0n),
      blobBaseFee: quantity(h.excessBlobGas !== undefined ? h.getBlobGasPrice() : 0n),
      gasUsedRatio: h.gasLimit === 0n ? 0 : Number(h.gasUsed) / Number(h.gasLimit),
      nextBaseFee: quantity(h.calcNextBaseFee()),
      nextBlobBaseFee: quantity(h.excessBlobGas !== undefined ? h.calcNextBlobGasPrice(h.common) : 0n),
    }
  })
}

/**
 * A block's rewards at the percentiles asked for, kept with the block for the last set of percentiles
 * asked (a wallet polls with the same set; one entry, so odd sets cannot grow the memo).
 */
function rewardsFor(block: BlockRecord, percentiles: number[], key: string): string[] {
  const memo = block.memo.get('fee:reward') as { key: string; rewards: string[] } | undefined
  if (memo !== undefined && memo.key === key) return memo.rewards
  const rewards = rewardsOf(block, percentiles)
  block.memo.set('fee:reward', { key, rewards })
  return rewards
}

/** geth's per-block rewards: tips weighted by gas used, read at each percentile. */
function rewardsOf(block: BlockRecord, percentiles: number[]): string[] {
  if (block.txHashes.length === 0) return percentiles.map(() => '0x0')
  const sorted = tipSamplesOf(block)
  const total = Number(block.header.gasUsed)
  const out: string[] = []
  let i = 0
  let sum = Number(sorted[0].gas)
  for (const pct of percentiles) {
    // geth converts the threshold to whole gas (uint64) before comparing
    const threshold = Math.floor((total * pct) / 100)
    while (sum < threshold && i < sorted.length - 1) {
      i++
      sum += Number(sorted[i].gas)
    }
    out.push(quantity(sorted[i].tip))
  }
  return out
}
