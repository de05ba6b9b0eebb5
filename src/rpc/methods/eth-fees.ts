// Fee methods: eth_gasPrice, eth_maxPriorityFeePerGas (tip-oracle.ts), eth_baseFee, eth_blobBaseFee,
// eth_feeHistory.

import type { BlockRecord } from '../../chain/view.js'
import { LruMap } from '../../util/lru.js'
import { RawJson } from '../context.js'
import type { MethodHandler } from '../context.js'
import { invalidParams } from '../errors.js'
import { quantity } from '../hex.js'
import * as p from '../params.js'
import { refToNumber } from './deps.js'
import { blockMemo } from './chain-json.js'
import { tipSamplesOf } from './tip-oracle.js'
import type { TipOracle } from './tip-oracle.js'
import type { MethodDeps } from './deps.js'

const MAX_FEE_HISTORY = 1024
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
      let percentiles: number[] | undefined
      if (params[2] !== undefined && params[2] !== null) {
        if (!Array.isArray(params[2])) throw invalidParams('invalid argument 2: expected an array of percentiles')
        percentiles = params[2].map((v, i) => {
          if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > 100)
            throw invalidParams(`invalid reward percentile: ${String(v)}`)
          if (i > 0 && v < (params[2] as number[])[i - 1]) throw invalidParams(`invalid reward percentile: #${i - 1}:${(params[2] as number[])[i - 1]} > #${i}:${v}`)
          return v
        })
        if (percentiles.length > 100) throw invalidParams(`too many reward percentiles: ${percentiles.length}`)
      }
      const newest = refToNumber(view, newestRef)
      if (newest === undefined) throw invalidParams(`request beyond head block: requested ${newestRef.kind === 'number' ? newestRef.number : newestRef.tag}, head ${view.head.number}`)
      const blocks = Math.min(count, MAX_FEE_HISTORY, Number(newest) + 1)
      if (blocks === 0) return { oldestBlock: '0x0', baseFeePerGas: [], gasUsedRatio: [], baseFeePerBlobGas: [], blobGasUsedRatio: [] }
      const oldest = newest - BigInt(blocks) + 1n
      const percentilesKey = percentiles?.join(',')
      // blocks are final (the chain never reorganises), so an answer stands for its range and percentiles
      const answerKey = `${oldest}-${newest}-${percentilesKey ?? 'none'}`
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
        if (percentiles !== undefined) reward.push(rewardsFor(block, percentiles, percentilesKey!))
      }
      if (last !== undefined) {
        baseFeePerGas.push(last.nextBaseFee)
        baseFeePerBlobGas.push(last.nextBlobBaseFee)
      }
      const out: Record<string, unknown> = { oldestBlock: quantity(oldest), baseFeePerGas, gasUsedRatio, baseFeePerBlobGas, blobGasUsedRatio }
      // geth leaves reward out unless percentiles were asked for
      if (percentiles !== undefined && percentiles.length > 0) out.reward = reward
      const answer = new RawJson(JSON.stringify(out))
      if (gasUsedRatio.length === blocks && answer.json.length <= MAX_CACHED_ANSWER) answers.set(answerKey, answer)
      return answer
    },
  }
}

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
