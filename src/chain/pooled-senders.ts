// Which senders may have transactions in the producer's pool, as the main thread can tell without asking:
// a sender with none there has its account's nonce at the head as its pending nonce, and wallets ask for
// it before every send. Every block event carries the pool's senders as they were when it was posted;
// submissions since then are counted from the moment the main thread takes them until their outcome is
// known, and an accepted one until the next block event (which was posted after it was pooled, since the
// producer's messages arrive in order). What cannot be ruled out counts as pooled: the producer is asked.

export class PooledSenders {
  private atLastBlock: ReadonlySet<string> = new Set()
  private readonly inFlight = new Map<string, number>()
  private readonly acceptedSinceBlock = new Set<string>()

  /** lowercase 0x address */
  mayHavePooled(address: string): boolean {
    return this.atLastBlock.has(address) || this.inFlight.has(address) || this.acceptedSinceBlock.has(address)
  }

  submitted(sender: string): void {
    this.inFlight.set(sender, (this.inFlight.get(sender) ?? 0) + 1)
  }

  settled(sender: string, accepted: boolean): void {
    const count = this.inFlight.get(sender) ?? 0
    if (count <= 1) this.inFlight.delete(sender)
    else this.inFlight.set(sender, count - 1)
    if (accepted) this.acceptedSinceBlock.add(sender)
  }

  /** The pool's senders when the producer posted a block event (or its ready message). */
  poolReported(senders: readonly string[]): void {
    this.atLastBlock = new Set(senders)
    this.acceptedSinceBlock.clear()
  }
}
