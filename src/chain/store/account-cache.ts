// The block builder's account cache: @ethereumjs's AccountCache semantics (checkpoint, commit, revert, the
// accounts changed since the last flush) with the accounts kept decoded and bounded in number.
// The stock cache keeps each account as RLP, so every read decodes it and every write encodes it again
// (an ERC20 transfer reads and writes its sender and the coinbase several times), and its ordered-map
// variant, the only one that never drops a changed account before its flush, grows with every account
// the node ever touched. Here a write keeps a copy of the account and encodes it only when the trie
// needs it (once a block at most), a read hands out a copy; clean accounts beyond the bound are dropped
// after a flush, those cached first going first, and read from the trie again when needed. (Moving a
// rewritten account to the end, delete then set, costs a Map of 50,000 entries ~2.7 µs a write against
// ~0.5 µs: its deleted slots make V8 rebuild the table;
// docs/measurements.md#the-builders-accounts-and-the-interpreters-garbage.)

import { Account, bytesToUnprefixedHex } from '@ethereumjs/util'
import type { Address } from '@ethereumjs/util'

/** A cached account as the library's flush and getAccount read it: its RLP, undefined when deleted. */
export class AccountEntry {
  private rlp: Uint8Array | undefined

  constructor(
    /** Never handed out: readers get a copy (callers change the accounts they read). */
    readonly account: Account | undefined,
    rlp?: Uint8Array,
  ) {
    this.rlp = rlp
  }

  get accountRLP(): Uint8Array | undefined {
    if (this.account === undefined) return undefined
    return (this.rlp ??= this.account.serialize())
  }
}

/** A copy sharing the two 32-byte hashes, which nothing changes in place (they are replaced). */
export function copyAccount(account: Account): Account {
  return new Account(account.nonce, account.balance, account.storageRoot, account.codeHash)
}

export interface AccountCacheStats {
  size: number
  reads: number
  hits: number
  writes: number
  deletions: number
}

export class DecodedAccountCache {
  private readonly entries = new Map<string, AccountEntry>()
  /**
   * Per checkpoint level, each account's entry before its first change at that level (undefined: none);
   * a level's map is made at its first change (most call frames change no account).
   */
  private diffs: (Map<string, AccountEntry | undefined> | undefined)[] = [undefined]
  private stats_: AccountCacheStats = { size: 0, reads: 0, hits: 0, writes: 0, deletions: 0 }

  constructor(
    /** Clean accounts kept after a flush; changed ones are never dropped before theirs. */
    readonly maxAccounts: number,
  ) {
    if (!(maxAccounts > 0)) throw new Error(`account cache bound must be positive, got ${maxAccounts}`)
  }

  /** The library's entry for the address (its RLP on demand), or undefined when not cached. */
  get(address: Address): AccountEntry | undefined {
    const entry = this.entries.get(bytesToUnprefixedHex(address.bytes))
    this.stats_.reads++
    if (entry !== undefined) this.stats_.hits++
    return entry
  }

  /** A copy of the cached account, undefined for one known not to exist, null when not cached. */
  account(address: Address): Account | undefined | null {
    const entry = this.get(address)
    if (entry === undefined) return null
    return entry.account === undefined ? undefined : copyAccount(entry.account)
  }

  put(address: Address, account: Account | undefined, couldBePartialAccount = false): void {
    const key = bytesToUnprefixedHex(address.bytes)
    this.saveBefore(key)
    // partial accounts (stateless clients) keep the library's encoding, which marks the missing fields
    const entry =
      account === undefined
        ? new AccountEntry(undefined)
        : couldBePartialAccount
          ? new AccountEntry(copyAccount(account), account.serializeWithPartialInfo())
          : new AccountEntry(copyAccount(account))
    this.entries.set(key, entry)
    this.stats_.writes++
  }

  /** An account read from the trie on a miss: the trie's own value, so not a change to flush. */
  fill(address: Address, account: Account | undefined): void {
    const key = bytesToUnprefixedHex(address.bytes)
    this.entries.set(key, new AccountEntry(account === undefined ? undefined : copyAccount(account)))
  }

  del(address: Address): void {
    const key = bytesToUnprefixedHex(address.bytes)
    this.saveBefore(key)
    this.entries.set(key, new AccountEntry(undefined))
    this.stats_.deletions++
  }

  private saveBefore(key: string): void {
    const level = this.diffs.length - 1
    const diff = (this.diffs[level] ??= new Map())
    if (!diff.has(key)) diff.set(key, this.entries.get(key))
  }

  /** The accounts changed at the current level since the last flush, as [address hex, entry]. */
  flush(): [string, AccountEntry][] {
    const level = this.diffs.length - 1
    const items: [string, AccountEntry][] = []
    for (const key of this.diffs[level]?.keys() ?? []) {
      const entry = this.entries.get(key)
      if (entry !== undefined) items.push([key, entry])
    }
    this.diffs[level] = undefined
    return items
  }

  checkpoint(): void {
    this.diffs.push(undefined)
  }

  commit(): void {
    const diff = this.diffs.pop()
    if (diff === undefined) return
    const level = this.diffs.length - 1
    const below = this.diffs[level]
    if (below === undefined) {
      this.diffs[level] = diff
      return
    }
    for (const [key, before] of diff) if (!below.has(key)) below.set(key, before)
  }

  revert(): void {
    const diff = this.diffs.pop()
    if (diff === undefined) return
    for (const [key, before] of diff) {
      if (before === undefined) this.entries.delete(key)
      else this.entries.set(key, before)
    }
  }

  /**
   * Drops the accounts cached first beyond the bound. Only with no checkpoint open and nothing changed
   * since the last flush, and once the trie holds that flush: a dropped account is read from it again.
   */
  evictClean(): number {
    if (this.diffs.length !== 1 || (this.diffs[0]?.size ?? 0) !== 0 || this.entries.size <= this.maxAccounts) return 0
    let excess = this.entries.size - this.maxAccounts
    const dropped = excess
    for (const key of this.entries.keys()) {
      if (excess-- === 0) break
      this.entries.delete(key)
    }
    return dropped
  }

  size(): number {
    return this.entries.size
  }

  stats(reset = true): AccountCacheStats {
    const stats = { ...this.stats_, size: this.entries.size }
    if (reset) this.stats_ = { size: 0, reads: 0, hits: 0, writes: 0, deletions: 0 }
    return stats
  }

  clear(): void {
    this.entries.clear()
  }
}
