// The state caches of a block builder (the producer's, `keel import`'s) and their bounds. @ethereumjs's
// ordered-map caches are the only kind that never drop a change before its flush, and they never drop
// anything: a builder's cache would hold every account, slot and contract code the node has touched since
// it started. Accounts live in the decoded, bounded cache (account-cache.ts); the storage and code caches
// are emptied whole when they pass their bound, at a point where everything in them is in the trie.

import { Caches, CacheType } from '@ethereumjs/statemanager'
import type { AccountCache, CodeCache, StorageCache } from '@ethereumjs/statemanager'
import { DecodedAccountCache } from './account-cache.js'

export interface BuilderCacheBounds {
  /** Accounts kept decoded (~250 bytes each). */
  accounts: number
  /** Storage slots kept (~200 bytes each); a token transfer to a new holder adds one. */
  slots: number
  /** Contract codes kept (up to 24 KiB each, EIP-170); a block touches a few. */
  codes: number
}

export const BUILDER_CACHE_BOUNDS: BuilderCacheBounds = { accounts: 100_000, slots: 100_000, codes: 2_000 }

export function builderCaches(bounds: BuilderCacheBounds = BUILDER_CACHE_BOUNDS): Caches {
  const caches = new Caches({
    // the library reads a size from each; ordered maps do not bound themselves by it (trimCaches does)
    account: { type: CacheType.ORDERED_MAP, size: bounds.accounts },
    storage: { type: CacheType.ORDERED_MAP, size: bounds.slots },
    code: { type: CacheType.ORDERED_MAP, size: bounds.codes },
  })
  // same methods as the library's (checkpoint, commit, revert, flush, put, get, del, size, stats, clear)
  caches.account = new DecodedAccountCache(bounds.accounts) as unknown as AccountCache
  return caches
}

/** Slots in the library's ordered-map storage cache (its size() counts contracts). */
function storageSlots(storage: StorageCache): number {
  const byContract = (storage as unknown as { _orderedMapCache?: { forEach(f: (entry: [string, Map<string, Uint8Array>]) => void): void } })._orderedMapCache
  if (byContract === undefined) return storage.size()
  let slots = 0
  byContract.forEach(([, slotsOf]) => (slots += slotsOf.size))
  return slots
}

/**
 * Brings the caches back under their bounds. Only with no checkpoint open and right after a flush has
 * reached the trie, so that nothing dropped is a change: a dropped entry is read from the trie again.
 */
export function trimCaches(caches: Caches): void {
  const { account, storage, code } = caches as { account?: unknown; storage?: StorageCache; code?: CodeCache }
  if (account instanceof DecodedAccountCache) account.evictClean()
  if (storage !== undefined && storageSlots(storage) > caches.settings.storage.size) storage.clear()
  if (code !== undefined && code.size() > caches.settings.code.size) code.clear()
}
