// Transaction hashes the tx index was asked for and did not hold. A wallet polls the receipt of the
// transaction it sent every block or so until it is mined, and each poll would read LevelDB again; a hash
// recorded here is answered "not mined" from memory until a block holding it is applied.

import { LruMap } from '../util/lru.js'

export class NotMinedTxs {
  private readonly hashes: LruMap<string, true>
  private blocksApplied = 0

  /** @param max how many hashes to keep (least recently asked dropped first) */
  constructor(max: number) {
    this.hashes = new LruMap(max)
  }

  /** Taken before a lookup and handed back to `recordMiss`: a block applied meanwhile may hold the hash. */
  get epoch(): number {
    return this.blocksApplied
  }

  has(hash: string): boolean {
    return this.hashes.get(hash) !== undefined
  }

  recordMiss(hash: string, epoch: number): void {
    if (epoch === this.blocksApplied) this.hashes.set(hash, true)
  }

  /** Called with each block's transaction hashes when the block is applied, before it is read from. */
  blockApplied(txHashes: readonly string[]): void {
    this.blocksApplied++
    for (let i = 0; i < txHashes.length; i++) this.hashes.delete(txHashes[i]!)
  }
}
