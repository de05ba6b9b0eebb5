// Reads that survive a call's revert. The stock @ethereumjs caches journal every entry, reads included,
// so the outer checkpoint a call always reverts throws away everything it read: the next call at the
// same root walks the trie again. These maps sit below the journal and only ever hold committed state:
//  - accounts, per state root (an account's RLP is a fact about one root);
//  - storage slots, keyed by (storage root, slot): a storage trie root fixes every value under it, so the
//    entry stays right across blocks for every contract whose storage did not change;
//  - code, keyed by code hash.

export class BoundedMap<K, V> {
  private readonly map = new Map<K, V>()
  hits = 0
  misses = 0

  constructor(private readonly max: number) {}

  get(key: K): V | undefined {
    const value = this.map.get(key)
    if (value === undefined) this.misses++
    else this.hits++
    return value
  }

  set(key: K, value: V): void {
    if (this.max <= 0) return
    if (this.map.size >= this.max && !this.map.has(key)) this.map.delete(this.map.keys().next().value as K)
    this.map.set(key, value)
  }

  delete(key: K): void {
    this.map.delete(key)
  }

  get size(): number {
    return this.map.size
  }
}

/** Caches shared by every root a reader opens: both are content-addressed, so never stale. */
export interface SharedReadCaches {
  /** storage root hex + slot hex (both unprefixed) -> the slot's value, leading zeros stripped */
  slots: BoundedMap<string, Uint8Array>
  /** code hash hex (unprefixed) -> code */
  code: BoundedMap<string, Uint8Array>
}

export function sharedReadCaches(slots = 200_000, code = 2_000): SharedReadCaches {
  return { slots: new BoundedMap(slots), code: new BoundedMap(code) }
}

/** Account RLP by unprefixed address hex at one state root; null = no account. */
export type AccountReadCache = BoundedMap<string, Uint8Array | null>
