// A bounded map that keeps recently used entries: two generations of at most max/2 entries each. New
// and re-used entries go to the young generation; when it fills up it becomes the old one and the old
// one is dropped. A hit in the young generation costs one Map lookup (a strict LRU moves the entry on
// every hit, which showed up at ~4% of an eth_call), and an entry is only lost after max/2 newer ones.

export class LruMap<K, V> {
  private young = new Map<K, V>()
  private old = new Map<K, V>()
  private readonly half: number
  hits = 0
  misses = 0

  constructor(private readonly max: number) {
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
    if (this.young.has(key)) {
      this.young.set(key, value)
      return
    }
    this.old.delete(key)
    this.putYoung(key, value)
  }

  delete(key: K): boolean {
    return this.young.delete(key) || this.old.delete(key)
  }

  get size(): number {
    return this.young.size + this.old.size
  }

  private putYoung(key: K, value: V): void {
    this.young.set(key, value)
    if (this.young.size >= this.half) {
      this.old = this.young
      this.young = new Map()
    }
  }
}
