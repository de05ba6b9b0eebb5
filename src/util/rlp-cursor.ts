// Reading RLP where it lies: one item header at a time, positions instead of the copies RLP.decode makes
// of every item (a trie node's 17, a block's thousands of receipts and logs).

/**
 * Reads one RLP item header at a time. After read(): the payload spans [start, end) of the bytes, `end`
 * is also where the next item begins, and `list` tells a list from a string. Positions are checked
 * against the enclosing item's end, so malformed bytes throw (the error `fail` makes of the detail)
 * instead of being read past.
 */
export class RlpCursor {
  start = 0
  end = 0
  list = false

  /** `fail` makes the error thrown for malformed bytes; readers of a format use it for theirs too. */
  constructor(readonly fail: (detail: string) => Error = (detail) => new Error(`malformed RLP: ${detail}`)) {}

  read(bytes: Uint8Array, pos: number, limit: number): void {
    if (pos >= limit) throw this.fail(`an item expected at ${pos}, the enclosing item ends at ${limit}`)
    const first = bytes[pos]
    if (first < 0x80) {
      this.start = pos
      this.end = pos + 1
      this.list = false
      return
    }
    let start: number
    let length: number
    if (first <= 0xb7 || (first >= 0xc0 && first <= 0xf7)) {
      start = pos + 1
      length = first - (first <= 0xb7 ? 0x80 : 0xc0)
    } else {
      const lengthBytes = first - (first <= 0xbf ? 0xb7 : 0xf7)
      start = pos + 1 + lengthBytes
      if (start > limit) throw this.fail(`the length at ${pos} runs past ${limit}`)
      length = 0
      for (let i = pos + 1; i < start; i++) length = length * 256 + bytes[i]
    }
    const end = start + length
    if (end > limit) throw this.fail(`the item at ${pos} (${length} bytes) runs past ${limit}`)
    this.start = start
    this.end = end
    this.list = first >= 0xc0
  }
}
