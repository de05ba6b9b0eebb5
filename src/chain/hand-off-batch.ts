// Requests bound for the producer thread travel in batches: one message and one reply per batch, with at
// most one batch of a kind at the producer at a time (Nagle's rule). What arrives meanwhile goes in the
// next batch, sent when the reply comes back. An idle node sends a request on the next turn of the event
// loop; under load a batch holds what arrived during one round trip. Each message wakes the other thread,
// which costs the sender more than the request's own work on a busy host (measured in commit 3e5f6e4,
// bench/README.md there).

interface Waiting<In, Out> {
  item: In
  resolve(value: Out): void
  reject(err: unknown): void
}

export class HandOffBatch<In, Out> {
  private waiting: Array<Waiting<In, Out>> = []
  private inFlight = false
  /** messages sent, and the items they carried (metrics) */
  batches = 0
  items = 0

  /** `send` carries one batch to the producer and resolves to one answer per item, in order. */
  constructor(private readonly send: (items: In[]) => Promise<Out[]>) {}

  add(item: In): Promise<Out> {
    return new Promise((resolve, reject) => {
      if (this.waiting.length === 0 && !this.inFlight) setImmediate(this.flush)
      this.waiting.push({ item, resolve, reject })
    })
  }

  private readonly flush = (): void => {
    const batch = this.waiting
    this.waiting = []
    this.inFlight = true
    this.batches++
    this.items += batch.length
    const items: In[] = []
    for (const w of batch) items.push(w.item)
    this.send(items)
      .then(
        (answers) => {
          for (let i = 0; i < batch.length; i++) batch[i]!.resolve(answers[i]!)
        },
        (err: unknown) => {
          for (const w of batch) w.reject(err)
        },
      )
      .finally(this.replied)
  }

  private readonly replied = (): void => {
    this.inFlight = false
    if (this.waiting.length > 0) setImmediate(this.flush)
  }
}
