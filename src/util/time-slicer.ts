// The producer thread's event loop also takes eth_sendRawTransaction submissions and pool queries. A
// job that runs for long without waiting on I/O (a big block's trie update: trie nodes come from memory)
// would hold them all up; a TimeSlicer lets such a job give the event loop a turn every few
// milliseconds: `if (slicer.due) await slicer.turn()` at its loop points.

/** One turn of the event loop: what is waiting (messages, I/O callbacks) runs before this resolves. */
export const eventLoopTurn = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve))

export class TimeSlicer {
  private sliceStartedAt = performance.now()

  constructor(private readonly sliceMs = 5) {}

  /** True once the job has run for a whole slice since its last turn. */
  get due(): boolean {
    return performance.now() - this.sliceStartedAt >= this.sliceMs
  }

  /** Lets the event loop run what is waiting (setImmediate), then starts a new slice. */
  async turn(): Promise<void> {
    await eventLoopTurn()
    this.sliceStartedAt = performance.now()
  }

  /** Starts a new slice without a turn: at the start of a job, after the event loop ran anyway. */
  restart(): void {
    this.sliceStartedAt = performance.now()
  }
}
