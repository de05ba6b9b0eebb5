// A bounded map like LruMap (two generations, a hit in the young one costs one Map lookup), bounded by
// the summed weight of its entries instead of their count: for caches whose entries differ in size by
// orders of magnitude, such as blocks (an empty block, or one with thousands of transactions whose
// decoded objects and JSON get memoised with it).

export class WeightedLruMap<K, V> {
  private young = new Map<K, V>()
  private old = new Map<K, V>()
  private youngWeight = 0
  private readonly half: number

  /** `weigh` is called once, when an entry enters the young generation; it must not change afterwards. */
  constructor(
    maxWeight: number,
    private readonly weigh: (value: V) => number,
  ) {
    this.half = Math.max(1, Math.floor(maxWeight / 2))
  }

  get(key: K): V | undefined {
    let value = this.young.get(key)
    if (value !== undefined) return value
    value = this.old.get(key)
    if (value === undefined) return undefined
    this.old.delete(key)
    this.putYoung(key, value)
    return value
  }

  set(key: K, value: V): void {
    const current = this.young.get(key)
    if (current !== undefined) this.youngWeight -= this.weigh(current)
    else this.old.delete(key)
    this.putYoung(key, value)
  }

  get size(): number {
    return this.young.size + this.old.size
  }

  private putYoung(key: K, value: V): void {
    this.young.set(key, value)
    this.youngWeight += this.weigh(value)
    if (this.youngWeight >= this.half) {
      this.old = this.young
      this.young = new Map()
      this.youngWeight = 0
    }
  }
}
