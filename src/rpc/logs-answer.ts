// An eth_getLogs answer assembled from the blocks' encoded logs (src/json/log.ts encodeBlockLogs) as
// ASCII bytes: the matches are kept as runs of consecutive logs (a comma already separates a block's
// logs, so a run is one slice) and copied once into the answer, with no string per log or per answer.

export class LogsAnswerBuilder {
  private readonly sources: Buffer[] = []
  private readonly starts: number[] = []
  private readonly ends: number[] = []
  /** logs added */
  count = 0

  /** Adds the log at bytes[start, end); one that follows the last in the same block extends its run. */
  add(bytes: Buffer, start: number, end: number): void {
    this.count++
    const last = this.sources.length - 1
    if (last >= 0 && this.sources[last] === bytes && this.ends[last]! + 1 === start) {
      this.ends[last] = end
      return
    }
    this.sources.push(bytes)
    this.starts.push(start)
    this.ends.push(end)
  }

  /** The JSON array of the logs added, after those of `before` (a JSON array, as bytes) when given. */
  toJson(before?: Uint8Array): Buffer {
    const runs = this.sources.length
    let size = runs === 0 ? 0 : runs - 1 // commas between runs
    for (let i = 0; i < runs; i++) size += this.ends[i]! - this.starts[i]!
    // [ before's items , ] when before holds any, else [ ]
    const head = before === undefined || before.length <= 2 ? 1 : before.length - 1 + (runs === 0 ? 0 : 1)
    const out = Buffer.allocUnsafeSlow(head + size + 1)
    if (head === 1) out[0] = 0x5b // [
    else {
      out.set(before!.subarray(0, before!.length - 1), 0)
      if (runs > 0) out[head - 1] = 0x2c // ,
    }
    let at = head
    for (let i = 0; i < runs; i++) {
      if (i > 0) out[at++] = 0x2c
      at += this.sources[i]!.copy(out, at, this.starts[i]!, this.ends[i]!)
    }
    out[at] = 0x5d // ]
    return out
  }
}
