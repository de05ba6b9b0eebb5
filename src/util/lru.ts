// A bounded map that evicts the least recently used entry: Map keeps insertion order, so a hit moves the
// entry to the end and eviction takes the first key.

export class LruMap<K, V> {
  private readonly map = new Map<K, V>()
  hits = 0
  misses = 0

  constructor(private readonly max: number) {}

  get(key: K): V | undefined {
    const value = this.map.get(key)
    if (value === undefined) {
      this.misses++
      return undefined
    }
    this.hits++
    this.map.delete(key)
    this.map.set(key, value)
    return value
  }

  set(key: K, value: V): void {
    if (this.max <= 0) return
    this.map.delete(key)
    this.map.set(key, value)
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value as K)
  }

  delete(key: K): boolean {
    return this.map.delete(key)
  }

  get size(): number {
    return this.map.size
  }
}
