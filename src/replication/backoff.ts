// The wait between a stream side's attempts to reach NATS: doubling from 200 ms up to 5 s, back to
// 200 ms once NATS answers; a close (or a reconnection, a new block) ends a wait at once.

const MIN_MS = 200
const MAX_MS = 5_000

export class Backoff {
  private delay = MIN_MS
  private cut: (() => void) | undefined

  reset(): void {
    this.delay = MIN_MS
  }

  async wait(): Promise<void> {
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, this.delay)
      this.cut = () => {
        clearTimeout(t)
        resolve()
      }
    })
    this.cut = undefined
    this.delay = Math.min(MAX_MS, this.delay * 2)
  }

  /** Ends the wait in progress, if any. */
  interrupt(): void {
    this.cut?.()
  }
}
