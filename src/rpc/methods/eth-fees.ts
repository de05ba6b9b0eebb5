// Fee methods: eth_gasPrice, eth_maxPriorityFeePerGas, eth_feeHistory. geth's oracle: the 60th
// percentile of the cheapest tips of recent blocks; with no recent transactions, 1 gwei (anvil's and
// Hardhat's default), so that a chain whose base fee decays to zero still gets a usable suggestion.

import { gasUsedAt } from '../../chain/receipts.js'
import type { BlockRecord } from '../../chain/view.js'
import type { MethodHandler } from '../context.js'
import { invalidParams } from '../errors.js'
import { effectiveGasPrice } from '../format.js'
import { quantity } from '../hex.js'
import * as p from '../params.js'
import { blockMemo } from './chain-json.js'
import { refToNumber } from './deps.js'
import type { MethodDeps } from './deps.js'

const ORACLE_BLOCKS = 20
const ORACLE_PERCENTILE = 60
const SAMPLES_PER_BLOCK = 3
const DEFAULT_TIP = 1_000_000_000n
const MAX_TIP = 500_000_000_000n
const MAX_FEE_HISTORY = 1024

interface TipSample {
  tip: bigint
  gas: bigint
}

/** Each transaction's tip and gas used, cheapest tip first, kept with the block (the decoded block is not). */
function tipSamplesOf(block: BlockRecord): TipSample[] {
  return blockMemo(block, 'fee:tips', () => {
    const base = block.header.baseFeePerGas ?? 0n
    const txs = block.txs()
    const receipts = block.receipts()
    const out: TipSample[] = new Array(txs.length)
    for (let i = 0; i < txs.length; i++) out[i] = { tip: effectiveGasPrice(txs[i], base) - base, gas: gasUsedAt(receipts, i) }
    return out.sort((a, b) => (a.tip < b.tip ? -1 : a.tip > b.tip ? 1 : 0))
  })
}

function tipsOf(block: BlockRecord): bigint[] {
  const tips: bigint[] = []
  for (const s of tipSamplesOf(block)) if (s.tip > 2n) tips.push(s.tip) // geth ignores tips of 2 wei or less (IgnorePrice)
  return tips
}

export function feeMethods(deps: MethodDeps): Record<string, MethodHandler> {
  const view = deps.view
  let cached: { head: bigint; tip: bigint } | undefined

  async function suggestTip(): Promise<bigint> {
    const head = view.head.number
    if (cached !== undefined && cached.head === head) return cached.tip
    const samples: bigint[] = []
    for (let n = head; n >= 0n && n > head - BigInt(ORACLE_BLOCKS); n--) {
      const block = await view.blockByNumber(n)
      if (block === undefined) continue
      samples.push(...tipsOf(block).slice(0, SAMPLES_PER_BLOCK))
    }
    let tip = DEFAULT_TIP
    if (samples.length > 0) {
      samples.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
      tip = samples[Math.floor(((samples.length - 1) * ORACLE_PERCENTILE) / 100)]
    }
    if (tip > MAX_TIP) tip = MAX_TIP
    cached = { head, tip }
    return tip
  }

  return {
    eth_gasPrice: async (params) => {
      p.expectParams(params, 0, 0)
      return quantity((await suggestTip()) + view.head.baseFeePerGas)
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
      return quantity(await suggestTip())
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
    const threshold = (total * pct) / 100
    while (sum < threshold && i < sorted.length - 1) {
      i++
      sum += Number(sorted[i].gas)
    }
    out.push(quantity(sorted[i].tip))
  }
  return out
}
