// Fee methods: eth_gasPrice, eth_maxPriorityFeePerGas (tip-oracle.ts), eth_baseFee, eth_blobBaseFee,
// eth_feeHistory.

import type { BlockRecord } from '../../chain/view.js'
import type { MethodHandler } from '../context.js'
import { invalidParams } from '../errors.js'
import { quantity } from '../hex.js'
import * as p from '../params.js'
import { refToNumber } from './deps.js'
import { tipSamplesOf } from './tip-oracle.js'
import type { TipOracle } from './tip-oracle.js'
import type { MethodDeps } from './deps.js'

const MAX_FEE_HISTORY = 1024

export function feeMethods(deps: MethodDeps, tips: TipOracle): Record<string, MethodHandler> {
  const view = deps.view
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
      const baseFeePerGas: string[] = []
      const baseFeePerBlobGas: string[] = []
      const gasUsedRatio: number[] = []
      const blobGasUsedRatio: number[] = []
      const reward: string[][] = []
      let last: BlockRecord | undefined
      for (let n = oldest; n <= newest; n++) {
        const block = await view.blockByNumber(n)
        if (block === undefined) break
        last = block
        const h = block.header
        baseFeePerGas.push(quantity(h.baseFeePerGas ?? 0n))
        baseFeePerBlobGas.push(quantity(h.excessBlobGas !== undefined ? h.getBlobGasPrice() : 0n))
        gasUsedRatio.push(h.gasLimit === 0n ? 0 : Number(h.gasUsed) / Number(h.gasLimit))
        blobGasUsedRatio.push(0)
        if (percentiles !== undefined) reward.push(rewardsOf(block, percentiles))
      }
      if (last !== undefined) {
        baseFeePerGas.push(quantity(last.header.calcNextBaseFee()))
        baseFeePerBlobGas.push(quantity(last.header.excessBlobGas !== undefined ? last.header.calcNextBlobGasPrice(last.header.common) : 0n))
      }
      const out: Record<string, unknown> = { oldestBlock: quantity(oldest), baseFeePerGas, gasUsedRatio, baseFeePerBlobGas, blobGasUsedRatio }
      // geth leaves reward out unless percentiles were asked for
      if (percentiles !== undefined && percentiles.length > 0) out.reward = reward
      return out
    },
  }
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
