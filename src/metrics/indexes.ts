// Explorer index metrics: how far down the address, sender-nonce and creator indexes reach. A node on a
// database written before it kept them builds them in the background (indexes/backfill.ts), newest
// block first; until the gauge reaches 1, ots_searchTransactions* pages that need older blocks are refused.

import type { CollectableGauge, MetricsRegistry } from './registry.js'

export class IndexMetrics {
  readonly completeFrom: CollectableGauge

  constructor(register: MetricsRegistry) {
    this.completeFrom = register.gauge({
      name: 'keel_indexes_complete_from_block',
      help: "Lowest block from which the explorer's indexes are complete (read at scrape time); 1 or 0 once every block is indexed, higher while older blocks are being indexed in the background",
    })
  }

  /** `read` gives the mark (indexes/progress.ts), undefined on a chain that has none yet. */
  bindCompleteFrom(read: () => Promise<bigint | undefined>): void {
    this.completeFrom.addCollect(async (g) => {
      const from = await read()
      if (from !== undefined) g.set(Number(from))
    })
  }
}
