// Reads that survive a call's revert. The stock @ethereumjs caches journal every entry, reads included,
// so the outer checkpoint a call always reverts throws away everything it read: the next call at the
// same root walks the trie again. These maps sit below the journal and only ever hold committed state:
//  - accounts, per state root (an account's RLP is a fact about one root), layered over the parent
//    root's when the producer's diff for the block is known (see chain/state-diff.ts);
//  - storage slots, keyed by (storage root, slot): a storage trie root fixes every value under it, so the
//    entry stays right across blocks for every contract whose storage did not change; for one whose
//    storage did, the diff links the new storage root to the old one and names the slots that changed;
//  - code, keyed by code hash.

import type { Account } from '@ethereumjs/util'
import { createAccountFromRLP } from '@ethereumjs/util'
import { LruMap } from '../util/lru.js'

/** How a contract's new storage root derives from the one before: every slot not listed is unchanged. */
export interface StorageLineage {
  /** unprefixed hex of the storage root the block started from */
  from: string
  /** unprefixed slot hex -> new value (leading zeros stripped) */
  changed: Map<string, Uint8Array>
}

/** Caches shared by every root a reader opens: all content-addressed, so never stale. */
export interface SharedReadCaches {
  /** storage root hex + slot hex (both unprefixed) -> the slot's value, leading zeros stripped */
  slots: LruMap<string, Uint8Array>
  /** code hash hex (unprefixed) -> code */
  code: LruMap<string, Uint8Array>
  /** storage root hex (unprefixed) -> the storage root it was written over in one block */
  lineage: LruMap<string, StorageLineage>
}

// A lineage only has to bridge the blocks since a slot was last read at the head (a read copies the
// slot under the new root): a few blocks' worth of changed slots, not thousands of blocks'.
const LINEAGE_SLOTS = 16_384

/** `slots` bounds the slots by count; `codeBytes` the code by size (a contract is up to 24 KiB). */
export function sharedReadCaches(slots = 64_000, codeBytes = 8 << 20): SharedReadCaches {
  return {
    slots: new LruMap(slots),
    code: new LruMap(codeBytes, (code) => code.length + 64),
    lineage: new LruMap(LINEAGE_SLOTS, (lineage) => lineage.changed.size + 1),
  }
}

/**
 * A slot value as the caches keep it: its own small array. A value decoded from a trie node is a view
 * into the node's bytes (kept alive by the view), and one from a diff has its own ArrayBuffer outside
 * the heap; a copy of at most 32 bytes lives inside the V8 heap, about half the size of either.
 */
export function compactSlot(value: Uint8Array): Uint8Array {
  return value.length === 0 ? EMPTY_SLOT : new Uint8Array(value)
}

/** an absent or zero slot */
export const EMPTY_SLOT = new Uint8Array(0)

/**
 * Accounts by unprefixed address hex at one state root (never handed out: callers get copies); null =
 * no account. When the block's diff is known, a miss falls through to the accounts the block wrote and
 * then to what the parent root's cache holds (one level: the parent's own parent link is cut).
 */
export class AccountReadCache {
  private readonly own: LruMap<string, Account | null>
  private written: Map<string, Uint8Array | null> | undefined
  private parent: AccountReadCache | undefined

  constructor(max: number) {
    this.own = new LruMap(max)
  }

  get hits(): number {
    return this.own.hits
  }

  get misses(): number {
    return this.own.misses
  }

  /** This root = `parent`'s root + the accounts `written` by one block. */
  layerOver(parent: AccountReadCache | undefined, written: Map<string, Uint8Array | null>): void {
    this.written = written
    this.parent = parent
    if (parent !== undefined) parent.parent = undefined
  }

  get(key: string): Account | null | undefined {
    const found = this.own.get(key)
    if (found !== undefined) return found
    const inherited = this.inherited(key)
    if (inherited !== undefined) this.own.set(key, inherited)
    return inherited
  }

  set(key: string, account: Account | null): void {
    this.own.set(key, account)
  }

  // null (no account) is an answer: only undefined falls through to the next source
  private inherited(key: string): Account | null | undefined {
    if (this.written === undefined) return undefined
    const written = this.writtenAccount(key)
    return written !== undefined ? written : this.parent?.peek(key)
  }

  /** What this root's cache knows without asking further up. */
  private peek(key: string): Account | null | undefined {
    const found = this.own.get(key)
    return found !== undefined ? found : this.writtenAccount(key)
  }

  private writtenAccount(key: string): Account | null | undefined {
    const rlp = this.written?.get(key)
    return rlp === undefined ? undefined : rlp === null ? null : createAccountFromRLP(rlp)
  }
}
