// Transaction hashes the tx index was asked for and did not hold. A wallet polls the receipt of the
// transaction it sent every block or so until it is mined, and each poll would read LevelDB again; a hash
// recorded here is answered "not mined" from memory until a block holding it is applied.
//
// Only once a block has been applied since the hash was first found missing: a client that asks again at
// the same head reads the index again. ethers' wait() asks for the receipt, asks once more as it starts
// polling for blocks, and takes the block number it reads then as its starting point, so a block that
// lands between the two (automine: blocks only when transactions arrive) is never reported to it as new.
// A read of the index can still see that block land; an answer from memory cannot, and made such waits
// hang (one in eight under load in the state-history test).
//
// A transaction this node's pool (or, on a replica, the producer's) accepted is recorded as missing too,
// with the epoch taken before it was handed over: accepted, it was not in any block up to the pool's head,
// which is at or past this view's. The receipt polls of a transaction still waiting for its block then
// never read the index, not even the first (docs/measurements.md, "receipt polls of transactions still
// pending").

import { LruMap } from '../util/lru.js'

export class NotMinedTxs {
  /** hash -> the epoch at which it was first found missing */
  private readonly hashes: LruMap<string, number>
  private blocksApplied = 0

  /** @param max how many hashes to keep (least recently asked dropped first) */
  constructor(max: number) {
    this.hashes = new LruMap(max)
  }

  /** Taken before a lookup and handed back to `recordMiss`: a block applied meanwhile may hold the hash. */
  get epoch(): number {
    return this.blocksApplied
  }

  /** Whether the hash was found missing before the latest block and no block since has held it. */
  has(hash: string): boolean {
    const since = this.hashes.get(hash)
    return since !== undefined && since < this.blocksApplied
  }

  recordMiss(hash: string, epoch: number): void {
    if (epoch === this.blocksApplied && this.hashes.get(hash) === undefined) this.hashes.set(hash, epoch)
  }

  /** A transaction the pool accepted; `epoch` taken before it was handed to the pool. */
  recordAccepted(hash: string, epoch: number): void {
    this.recordMiss(hash, epoch)
  }

  /** Called with each block's transaction hashes when the block is applied, before it is read from. */
  blockApplied(txHashes: readonly string[]): void {
    this.blocksApplied++
    for (let i = 0; i < txHashes.length; i++) this.hashes.delete(txHashes[i]!)
  }
}
