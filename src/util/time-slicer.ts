// The producer thread's event loop also takes eth_sendRawTransaction submissions and pool queries. A
// job that runs for long without waiting on I/O (a big block's trie update: trie nodes come from memory)
// would hold them all up; a TimeSlicer lets such a job give the event loop a turn every few
// milliseconds: `if (slicer.due) await slicer.turn()` at its loop points.

/**
 * One turn of the event loop: what is waiting (messages, I/O callbacks) runs before this resolves, and so
 * do the immediates they queue. A submission's handler queues its journal write with setImmediate (the
 * pool journal's group commit) behind the job's own immediate: resuming after one hop left that write
 * waiting for the job's whole next slice. The second hop lets it start first: a submission's answer 5.3-5.9
 * against 1.4-3.0 ms at the producer (median), ERC20 transfers 1,792-2,029 against 2,108-2,145 a second
 * (docs/measurements.md#producer-turns-during-a-blocks-build).
 */
export const eventLoopTurn = (): Promise<void> => new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)))

/** What a job that takes turns needs of its slicer (tests pass their own). */
export type Turns = Pick<TimeSlicer, 'due' | 'turn'>

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
