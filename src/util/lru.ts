// A bounded map that keeps recently used entries: two generations of at most max/2 entries each. New
// and re-used entries go to the young generation; when it fills up it becomes the old one and the old
// one is dropped. A hit in the young generation costs one Map lookup (a strict LRU moves the entry on
// every hit, which showed up at ~4% of an eth_call), and an entry is only lost after max/2 newer ones.
//
// With `weigh`, max bounds the summed weight of the entries instead of their count: for caches whose
// entries differ in size by orders of magnitude, such as blocks (an empty block, or one with thousands of
// transactions whose decoded objects and JSON get memoised with it).

export class LruMap<K, V> {
  private young = new Map<K, V>()
  private old = new Map<K, V>()
  private youngWeight = 0
  private readonly half: number
  hits = 0
  misses = 0

  /** `weigh` is asked once, when an entry enters the young generation; an entry's weight must not change. */
  constructor(
    private readonly max: number,
    private readonly weigh?: (value: V) => number,
  ) {
    this.half = Math.max(1, Math.floor(max / 2))
  }

  get(key: K): V | undefined {
    let value = this.young.get(key)
    if (value !== undefined) {
      this.hits++
      return value
    }
    value = this.old.get(key)
    if (value === undefined) {
      this.misses++
      return undefined
    }
    this.hits++
    this.old.delete(key)
    this.putYoung(key, value)
    return value
  }

  set(key: K, value: V): void {
    if (this.max <= 0) return
    const current = this.young.get(key)
    if (current !== undefined) {
      if (this.weigh === undefined) {
        this.young.set(key, value)
        return
      }
      this.young.delete(key)
      this.youngWeight -= this.weigh(current)
    } else {
      this.old.delete(key)
    }
    this.putYoung(key, value)
  }

  delete(key: K): boolean {
    const current = this.young.get(key)
    if (current !== undefined) {
      this.young.delete(key)
      this.youngWeight -= this.weigh === undefined ? 1 : this.weigh(current)
      return true
    }
    return this.old.delete(key)
  }

  get size(): number {
    return this.young.size + this.old.size
  }

  private putYoung(key: K, value: V): void {
    this.young.set(key, value)
    this.youngWeight += this.weigh === undefined ? 1 : this.weigh(value)
    if (this.youngWeight >= this.half) {
      this.old = this.young
      this.young = new Map()
      this.youngWeight = 0
    }
  }
}
