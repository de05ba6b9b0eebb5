// geth's gas price oracle: the 60th percentile of the cheapest tips of recent blocks; with no recent
// transactions, 1 gwei (anvil's and Hardhat's default), so that a chain whose base fee decays to zero still
// gets a usable suggestion. eth_gasPrice, eth_maxPriorityFeePerGas and eth_fillTransaction's defaults.

import { gasUsedAt } from '../../chain/receipts.js'
import type { BlockRecord, ChainView } from '../../chain/view.js'
import { effectiveGasPrice } from '../format.js'
import { blockMemo } from './chain-json.js'

const ORACLE_BLOCKS = 20
const ORACLE_PERCENTILE = 60
const SAMPLES_PER_BLOCK = 3
const DEFAULT_TIP = 1_000_000_000n
const MAX_TIP = 500_000_000_000n

interface TipSample {
  tip: bigint
  gas: bigint
}

/** Each transaction's tip and gas used, cheapest tip first, kept with the block (the decoded block is not). */
export function tipSamplesOf(block: BlockRecord): TipSample[] {
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

export class TipOracle {
  private cached: { head: bigint; tip: bigint } | undefined

  constructor(private readonly view: ChainView) {}

  /** The suggested priority fee at the current head (computed once per head). */
  async suggest(): Promise<bigint> {
    const view = this.view
    const head = view.head.number
    if (this.cached !== undefined && this.cached.head === head) return this.cached.tip
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
    this.cached = { head, tip }
    return tip
  }
}
