// Counts requests in progress (HTTP exchanges and WS messages being answered) so a graceful shutdown can
// wait for them instead of cutting answers off mid-way.

export class InFlight {
  private count = 0
  private waiters: Array<() => void> = []

  get size(): number {
    return this.count
  }

  begin(): void {
    this.count++
  }

  end(): void {
    if (this.count > 0) this.count--
    if (this.count === 0 && this.waiters.length > 0) {
      const waiters = this.waiters
      this.waiters = []
      for (const wake of waiters) wake()
    }
  }

  /** Resolves true once nothing is in progress, false when `timeoutMs` passes first. */
  idle(timeoutMs: number): Promise<boolean> {
    if (this.count === 0) return Promise.resolve(true)
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== wake)
        resolve(false)
      }, timeoutMs)
      const wake = (): void => {
        clearTimeout(timer)
        resolve(true)
      }
      this.waiters.push(wake)
    })
  }
}
