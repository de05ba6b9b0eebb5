// Reads that survive a call's revert. The stock @ethereumjs caches journal every entry, reads included,
// so the outer checkpoint a call always reverts throws away everything it read: the next call at the
// same root walks the trie again. These maps sit below the journal and only ever hold committed state:
//  - accounts, per state root (an account's RLP is a fact about one root);
//  - storage slots, keyed by (storage root, slot): a storage trie root fixes every value under it, so the
//    entry stays right across blocks for every contract whose storage did not change;
//  - code, keyed by code hash.

import { LruMap } from '../util/lru.js'

/** Caches shared by every root a reader opens: both are content-addressed, so never stale. */
export interface SharedReadCaches {
  /** storage root hex + slot hex (both unprefixed) -> the slot's value, leading zeros stripped */
  slots: LruMap<string, Uint8Array>
  /** code hash hex (unprefixed) -> code */
  code: LruMap<string, Uint8Array>
}

export function sharedReadCaches(slots = 200_000, code = 2_000): SharedReadCaches {
  return { slots: new LruMap(slots), code: new LruMap(code) }
}

/** Account RLP by unprefixed address hex at one state root; null = no account. */
export type AccountReadCache = LruMap<string, Uint8Array | null>
