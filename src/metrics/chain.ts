// Chain metrics: the head (read at scrape time), and per sealed block what the producer thread measured
// (carried to the main thread in NewBlockEvent.stats, so nothing measured there is lost).

import type { NewBlockEvent } from '../chain/messages.js'
import type { CollectableGauge, MetricsRegistry } from './registry.js'

const SECONDS_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
const TX_COUNT_BUCKETS = [0, 1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000]
const GAS_BUCKETS = [0, 21_000, 100_000, 500_000, 1e6, 2.5e6, 5e6, 1e7, 1.5e7, 2e7, 3e7, 4.5e7, 6e7]

export class ChainMetrics {
  readonly headNumber: CollectableGauge
  readonly headAge: CollectableGauge
  readonly blocks
  readonly transactions
  readonly gasUsed
  readonly blockTransactions
  readonly blockGasUsed
  readonly blockBuild
  readonly blockCommit
  readonly writeBatch
  readonly droppedTransactions

  constructor(register: MetricsRegistry) {
    this.headNumber = register.gauge({ name: 'keel_chain_head_number', help: 'Number of the head block' })
    this.headAge = register.gauge({
      name: 'keel_chain_head_age_seconds',
      help: 'Seconds between now (at scrape) and the head block timestamp',
    })
    this.blocks = register.counter({ name: 'keel_chain_blocks_total', help: 'Blocks sealed since start' })
    this.transactions = register.counter({
      name: 'keel_chain_transactions_total',
      help: 'Transactions included in sealed blocks since start',
    })
    this.gasUsed = register.counter({ name: 'keel_chain_gas_used_total', help: 'Gas used by sealed blocks since start' })
    this.blockTransactions = register.histogram({
      name: 'keel_chain_block_transactions',
      help: 'Transactions per sealed block',
      buckets: TX_COUNT_BUCKETS,
    })
    this.blockGasUsed = register.histogram({ name: 'keel_chain_block_gas_used', help: 'Gas used per sealed block', buckets: GAS_BUCKETS })
    this.blockBuild = register.histogram({
      name: 'keel_chain_block_build_seconds',
      help: 'Time to select and execute the transactions of a block (producer thread), without the waits of a block built ahead of its slot',
      buckets: SECONDS_BUCKETS,
    })
    this.blockCommit = register.histogram({
      name: 'keel_chain_block_commit_seconds',
      help: 'Time to encode, write and publish a sealed block, write batch included (producer thread)',
      buckets: SECONDS_BUCKETS,
    })
    this.writeBatch = register.histogram({
      name: 'keel_storage_write_batch_seconds',
      help: 'Time of the LevelDB write batch of one block (producer thread)',
      buckets: SECONDS_BUCKETS,
    })
    this.droppedTransactions = register.counter({
      name: 'keel_txpool_dropped_total',
      help: 'Pooled transactions found invalid while building a block and dropped',
    })
  }

  onBlock(event: NewBlockEvent): void {
    const txs = event.txHashes.length
    const gas = Number(event.head.gasUsed)
    this.blocks.inc()
    this.transactions.inc(txs)
    this.gasUsed.inc(gas)
    this.blockTransactions.observe(txs)
    this.blockGasUsed.observe(gas)
    const stats = event.stats
    if (stats !== undefined) {
      this.blockBuild.observe(stats.buildMs / 1000)
      this.blockCommit.observe(stats.commitMs / 1000)
      this.writeBatch.observe(stats.writeMs / 1000)
      if (stats.droppedTxs > 0) this.droppedTransactions.inc(stats.droppedTxs)
    }
  }
}
