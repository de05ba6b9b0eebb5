// Where the transactions of the latest blocks are, kept in memory. Wallets and scripts ask for a receipt
// right after sending (ethers' wait(), viem's waitForTransactionReceipt poll until it appears), so almost
// every lookup is for a transaction a few blocks old: those skip the LevelDB read of the tx index.

/** Positions are packed as number * 2^20 + index; blocks beyond 2^33 are simply not indexed here. */
const INDEX_BITS = 2 ** 20
const MAX_PACKED_BLOCK = 2n ** 33n

export interface TxPosition {
  number: bigint
  index: number
}

export class RecentTxIndex {
  private readonly positions = new Map<string, number>()
  /** Indexed blocks, oldest first; `first` is the oldest one still indexed. */
  private readonly blocks: Array<readonly string[]> = []
  private first = 0
  private size = 0

  /** @param maxTxs how many transactions to keep (whole blocks are dropped, oldest first). */
  constructor(private readonly maxTxs: number) {}

  /** Records a block's transactions; blocks must arrive in order. */
  add(number: bigint, txHashes: readonly string[]): void {
    if (this.maxTxs <= 0 || txHashes.length === 0 || number >= MAX_PACKED_BLOCK || txHashes.length >= INDEX_BITS) return
    const base = Number(number) * INDEX_BITS
    for (let i = 0; i < txHashes.length; i++) this.positions.set(txHashes[i]!, base + i)
    this.blocks.push(txHashes)
    this.size += txHashes.length
    while (this.size > this.maxTxs && this.first < this.blocks.length - 1) this.dropOldest()
    if (this.first > 1024 && this.first * 2 > this.blocks.length) {
      this.blocks.splice(0, this.first)
      this.first = 0
    }
  }

  /** The block and index of a transaction, if it is one of the recent ones (hash: lowercase 0x hex). */
  get(hash: string): TxPosition | undefined {
    const packed = this.positions.get(hash)
    if (packed === undefined) return undefined
    const index = packed % INDEX_BITS
    return { number: BigInt((packed - index) / INDEX_BITS), index }
  }

  private dropOldest(): void {
    const hashes = this.blocks[this.first]!
    this.blocks[this.first++] = []
    for (const h of hashes) this.positions.delete(h)
    this.size -= hashes.length
  }
}
