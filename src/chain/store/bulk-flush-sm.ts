// The producer's state manager: at the end of a block its storage writes (per contract) and its account
// writes reach the tries in one bulk update each (trie-bulk-update.ts) instead of one MPT insert per
// slot and per account. Storage goes first, straight from the storage cache, and leaves each contract's
// new storage root in its account; then the library's flush runs (code, accounts) with the account
// trie's put/del calls collected and applied together. With node pruning (--state-history) the MPT's
// own path stays, since it reports the superseded nodes that pruning needs.
// Between flushes the account trie does not change, so an account missing from the cache is read with
// the TrieReader (nodes kept by hash, read in place) instead of the MPT's walk, which decodes every node
// on the path again: a block of transfers to new recipients spent ~25 KiB and the walk's async steps per
// transfer there. Storage tries neither: a slot missing from the cache is read the same way, under its
// account's storage root (a token transfer to a new holder reads a slot no block has touched).

import type { MerklePatriciaTrie } from '@ethereumjs/mpt'
import { RLP } from '@ethereumjs/rlp'
import { Address, bytesToUnprefixedHex, createAccountFromRLP, unprefixedHexToBytes } from '@ethereumjs/util'
import type { Account } from '@ethereumjs/util'
import { FixedMerkleStateManager } from '../../evm/state-manager.js'
import { toNibbles } from '../ordered-trie.js'
import type { TrieItem } from '../ordered-trie.js'
import { DecodedAccountCache } from './account-cache.js'
import { trimCaches } from './builder-caches.js'
import { storageTriePrefix } from './state-db.js'
import { bulkUpdateTrie } from './trie-bulk-update.js'
import { TrieReader } from './trie-reader.js'
import { TimeSlicer } from '../../util/time-slicer.js'
import { SEAL_TURN_MS } from '../seal-turns.js'
import type { TrieNodeDB } from './trie-bulk-update.js'

/** The trie DB under the MPT's checkpoint layer: node keys as unprefixed hex strings. */
interface HexKeyDB {
  get(key: string): Promise<Uint8Array | undefined>
  put(key: string, value: Uint8Array): Promise<void>
}

/**
 * One contract's storage trie nodes in the trie DB, under its key prefix. A class rather than an object
 * of closures made per flush: V8 holds a closure's optimized code only while a closure of it lives, so
 * closures made per block are compiled again after each full collection (docs/measurements.md,
 * "Closures made per call").
 */
class StorageTrieNodes implements TrieNodeDB {
  constructor(
    private readonly db: HexKeyDB,
    private readonly prefix: string,
  ) {}

  get(hash: Uint8Array): Promise<Uint8Array | undefined> {
    return this.db.get(this.prefix + bytesToUnprefixedHex(hash))
  }

  put(hash: Uint8Array, value: Uint8Array): Promise<void> {
    return this.db.put(this.prefix + bytesToUnprefixedHex(hash), value)
  }
}

/** Sees each storage slot written by a bulk flush, with the storage root it was written over. */
export type StorageWriteListener = (address: Address, fromRoot: Uint8Array, key: Uint8Array, value: Uint8Array) => void

type Options = ConstructorParameters<typeof FixedMerkleStateManager>[0]

const DELETE = new Uint8Array(0)
/** Account-trie nodes kept for reads: the upper levels of a trie of ~1M accounts. */
const ACCOUNT_NODE_CACHE_BYTES = 4 << 20
/** Storage-trie nodes kept for reads, of every contract. */
const STORAGE_NODE_CACHE_BYTES = 2 << 20
/** RLP of an empty value: how the storage cache marks a slot known to be empty. */
const RLP_EMPTY = Uint8Array.of(0x80)

export class BulkFlushStateManager extends FixedMerkleStateManager {
  /** Set by the state diff recorder; the library's per-slot path (pruning) is hooked separately. */
  onStorageWritten: StorageWriteListener | undefined
  private pending: Map<string, [Uint8Array, Uint8Array]> | undefined
  private readonly hash: (data: Uint8Array) => Uint8Array
  private readonly bulk: boolean
  private readonly accountReader: TrieReader
  private readonly storageReader: TrieReader
  /** a block's flush gives the producer's event loop turns (submissions wait meanwhile) */
  private readonly slicer = new TimeSlicer(SEAL_TURN_MS)

  constructor(opts: Options & { trie: MerklePatriciaTrie }) {
    super(opts)
    const trie = opts.trie
    const trieOpts = (trie as unknown as { _opts: { useKeyHashing?: boolean; useNodePruning?: boolean; keyPrefix?: Uint8Array } })._opts
    const keccak = opts.common?.customCrypto?.keccak256
    if (keccak === undefined) throw new Error('BulkFlushStateManager needs a Common with customCrypto.keccak256')
    this.hash = keccak
    this.bulk = trieOpts.useKeyHashing === true && trieOpts.useNodePruning !== true && trieOpts.keyPrefix === undefined
    // through the MPT's checkpoint layer, where a flush inside an open checkpoint leaves its nodes
    const nodes = trie.database()
    const source = { fetch: (key: string) => nodes.get(unprefixedHexToBytes(key)) }
    this.accountReader = new TrieReader(source, ACCOUNT_NODE_CACHE_BYTES)
    this.storageReader = new TrieReader(source, STORAGE_NODE_CACHE_BYTES)
    const put = trie.put.bind(trie)
    const del = trie.del.bind(trie)
    trie.put = async (key, value, skipKeyTransform) => {
      if (this.pending === undefined) return put(key, value, skipKeyTransform)
      this.defer(key, value ?? DELETE, skipKeyTransform)
      if (this.slicer.due) await this.slicer.turn()
    }
    trie.del = async (key, skipKeyTransform) => {
      if (this.pending === undefined) return del(key, skipKeyTransform)
      this.defer(key, DELETE, skipKeyTransform)
    }
  }

  override async getAccount(address: Address): Promise<Account | undefined> {
    // builders construct it with builderCaches(): any other account cache takes the library's path
    const cache = this._caches?.account
    if (!this.bulk || !(cache instanceof DecodedAccountCache)) return super.getAccount(address)
    const known = cache.account(address)
    if (known !== null) return known
    const rlp = await this.accountReader.get(this._trie.root(), this.hash(address.bytes))
    const account = rlp !== null ? createAccountFromRLP(rlp) : undefined
    cache.fill(address, account)
    return account
  }

  /** As the library's getStorage (the slot's RLP cached, an empty one as 0x80), with the trie reader. */
  override async getStorage(address: Address, key: Uint8Array): Promise<Uint8Array> {
    const cache = this._caches?.storage
    if (!this.bulk || cache === undefined) return super.getStorage(address, key)
    if (key.length !== 32) throw new Error('Storage key must be 32 bytes long')
    const cached = cache.get(address, key)
    if (cached !== undefined) return RLP.decode(cached) as Uint8Array
    const account = await this.getAccount(address)
    if (account === undefined) return new Uint8Array()
    const prefix = this._prefixStorageTrieKeys ? storageTriePrefix(this.hash(address.bytes)) : ''
    const value = await this.storageReader.get(account.storageRoot, this.hash(key), prefix)
    cache.put(address, key, value ?? RLP_EMPTY)
    return value === null ? new Uint8Array() : (RLP.decode(value) as Uint8Array)
  }

  private defer(key: Uint8Array, value: Uint8Array, skipKeyTransform = false): void {
    const path = skipKeyTransform ? key : this.hash(key)
    this.pending!.set(bytesToUnprefixedHex(path), [path, value])
  }

  override async flush(): Promise<void> {
    await this.flushToTrie()
    // the trie holds every change now: what the caches drop is read from it again
    if (this._checkpointCount === 0 && this._caches !== undefined) trimCaches(this._caches)
  }

  private async flushToTrie(): Promise<void> {
    if (!this.bulk) return super.flush()
    this.slicer.restart()
    await this.flushStorage()
    const writes = new Map<string, [Uint8Array, Uint8Array]>()
    this.pending = writes
    try {
      await super.flush()
    } finally {
      this.pending = undefined
    }
    if (writes.size === 0) return
    const items: TrieItem[] = []
    for (const [path, value] of writes.values()) {
      if (this.slicer.due) await this.slicer.turn()
      items.push({ nibbles: toNibbles(path), value })
    }
    const trie = this._trie
    trie.root(await bulkUpdateTrie(trie.database(), trie.root(), items, this.hash, this.slicer))
  }

  /** Every contract's cached storage writes, one bulk trie update per contract. */
  private async flushStorage(): Promise<void> {
    const slots = this._caches?.storage?.flush() ?? []
    if (slots.length === 0) return
    const byContract = new Map<string, [string, Uint8Array | undefined][]>()
    for (const [addressHex, keyHex, value] of slots) {
      let writes = byContract.get(addressHex)
      if (writes === undefined) byContract.set(addressHex, (writes = []))
      writes.push([keyHex, value])
    }
    const db = this._trie.database().db as unknown as HexKeyDB
    for (const [addressHex, writes] of byContract) {
      const address = new Address(unprefixedHexToBytes(addressHex))
      const account = await this.getAccount(address)
      if (account === undefined) continue // as the library does: storage of a deleted account is gone
      const hashedAddress = this.hash(address.bytes)
      const prefix = this._prefixStorageTrieKeys ? storageTriePrefix(hashedAddress) : ''
      const nodes = new StorageTrieNodes(db, prefix)
      const fromRoot = account.storageRoot
      // a token's block writes thousands of slots: 32 ms in one stretch without the turns
      const items: TrieItem[] = []
      for (const [keyHex, encoded] of writes) {
        if (this.slicer.due) await this.slicer.turn()
        const key = unprefixedHexToBytes(keyHex)
        const value = RLP.decode(encoded ?? DELETE) as Uint8Array
        this.onStorageWritten?.(address, fromRoot, key, value)
        items.push({ nibbles: toNibbles(this.hash(key)), value: value.length > 0 ? RLP.encode(value) : DELETE })
      }
      account.storageRoot = await bulkUpdateTrie(nodes, fromRoot, items, this.hash, this.slicer)
      // the library's storage trie for this contract (if it opened one) points at the old root
      delete this._storageTries[bytesToUnprefixedHex(hashedAddress)]
      await this.putAccount(address, account)
    }
  }
}
