// geth's gas price oracle (eth/gasprice, SuggestTipCap): the 60th percentile of the three cheapest tips
// of each of the last 20 blocks, leaving out tips under 2 wei and the block producer's own transactions.
// A block with nothing to sample counts as the last suggestion, and a block that gave one sample (or
// none) makes the oracle look one block further back, up to 40. The first suggestion starts from 1 gwei
// (anvil's and Hardhat's default; geth's is its miner's gas price), so that a chain whose base fee
// decays to zero still gets a usable one. eth_gasPrice, eth_maxPriorityFeePerGas and eth_fillTransaction's
// defaults.

import { gasUsedAt } from '../../chain/receipts.js'
import { readTxFields } from '../../chain/tx-fields.js'
import type { BlockRecord, ChainView } from '../../chain/view.js'
import { priceAt } from '../../json/transaction.js'
import { blockMemo } from './chain-json.js'

const ORACLE_BLOCKS = 20
const ORACLE_PERCENTILE = 60
const SAMPLES_PER_BLOCK = 3
/** geth's DefaultIgnorePrice: tips under it are not sampled */
const IGNORE_UNDER = 2n
const DEFAULT_TIP = 1_000_000_000n
const MAX_TIP = 500_000_000_000n

interface TipSample {
  tip: bigint
  gas: bigint
  sender: string
}

/**
 * Each transaction's tip and gas used, cheapest tip first, kept with the block. The fee fields are read
 * from the raw transactions: a transaction object each made the first fee query after 5,120 transfers
 * hold the main thread 3-4 times as long (docs/measurements.md#block-sized-work-on-the-main-thread).
 */
export function tipSamplesOf(block: BlockRecord): TipSample[] {
  return blockMemo(block, 'fee:tips', () => {
    const base = block.header.baseFeePerGas ?? 0n
    const count = block.txHashes.length
    const receipts = block.receipts()
    const out: TipSample[] = new Array(count)
    for (let i = 0; i < count; i++) {
      const { maxFeePerGas, maxPriorityFeePerGas } = readTxFields(block.rawTx(i))
      out[i] = { tip: priceAt(maxFeePerGas, maxPriorityFeePerGas, base) - base, gas: gasUsedAt(receipts, i), sender: block.senders[i] }
    }
    return out.sort((a, b) => (a.tip < b.tip ? -1 : a.tip > b.tip ? 1 : 0))
  })
}

/** geth's getBlockValues: the block's cheapest tips, at most three, none under 2 wei nor the producer's. */
function tipsOf(block: BlockRecord): bigint[] {
  const coinbase = block.header.coinbase.toString()
  const tips: bigint[] = []
  for (const s of tipSamplesOf(block)) {
    if (s.tip < IGNORE_UNDER || s.sender === coinbase) continue
    tips.push(s.tip)
    if (tips.length === SAMPLES_PER_BLOCK) break
  }
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
    const last = this.cached?.tip ?? DEFAULT_TIP
    // geth asks for the blocks at once and takes their answers as they come; here they come in order
    const asked: bigint[] = []
    let next = head
    while (asked.length < ORACLE_BLOCKS && next > 0n) asked.push(next--)
    const samples: bigint[] = []
    for (let i = 0; i < asked.length; i++) {
      const block = await view.blockByNumber(asked[i])
      let values = block === undefined ? [] : tipsOf(block)
      if (values.length === 0) values = [last]
      const waiting = asked.length - i - 1
      if (values.length === 1 && samples.length + 1 + waiting < ORACLE_BLOCKS * 2 && next > 0n) asked.push(next--)
      for (const v of values) samples.push(v)
    }
    let tip = last
    if (samples.length > 0) {
      samples.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
      tip = samples[Math.floor(((samples.length - 1) * ORACLE_PERCENTILE) / 100)]
    }
    if (tip > MAX_TIP) tip = MAX_TIP
    this.cached = { head, tip }
    return tip
  }
}
