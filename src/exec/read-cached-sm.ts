// A read-only state manager whose reads outlive the checkpoint a call runs in (see read-cache.ts).
// Lookups go: the journaled caches (what the call itself wrote, plus overrides) -> the revert-proof
// read caches -> the trie. Trie reads are stored only in the read caches, never in the journal.

import { RLP } from '@ethereumjs/rlp'
import type { Address } from '@ethereumjs/util'
import { Account, bytesToUnprefixedHex, createAccountFromRLP, equalsBytes, KECCAK256_RLP } from '@ethereumjs/util'
import type { TrieReader } from '../chain/store/trie-reader.js'
import { storageTriePrefix } from '../chain/store/state-db.js'
import { ReadOnlyStateManager } from '../evm/state-manager.js'
import { LruMap } from '../util/lru.js'
import { compactSlot } from './read-cache.js'
import type { AccountReadCache, SharedReadCaches } from './read-cache.js'

type Options = ConstructorParameters<typeof ReadOnlyStateManager>[0]

const EMPTY = new Uint8Array(0)

// An account the call wrote is held as RLP and read back for every SLOAD of that contract (the storage
// root): decoded once per RLP (the cache stores a new array on each write), handed out as copies.
const decodedWrites = new WeakMap<Uint8Array, Account>()

function accountOf(rlp: Uint8Array): Account {
  let account = decodedWrites.get(rlp)
  if (account === undefined) {
    account = createAccountFromRLP(rlp)
    decodedWrites.set(rlp, account)
  }
  return new Account(account.nonce, account.balance, account.storageRoot, account.codeHash)
}

const SLOT_KEY_BYTES = new Uint8Array(64)

/**
 * A slot's cache key: hex of the storage root, then of the slot. Encoded in one go so the key is a flat
 * string: root hex + slot hex is a rope, which V8 flattens before it can hash it for the lookup.
 */
function slotKeyOf(storageRoot: Uint8Array, key: Uint8Array): string {
  SLOT_KEY_BYTES.set(storageRoot, 0)
  SLOT_KEY_BYTES.set(key, 32)
  return bytesToUnprefixedHex(SLOT_KEY_BYTES)
}

/** A slot under a storage root the last block wrote: the value it wrote, or the one under the root before. */
function inheritedSlot(shared: SharedReadCaches, rootHex: string, keyHex: string): Uint8Array | undefined {
  const lineage = shared.lineage.get(rootHex)
  if (lineage === undefined) return undefined
  return lineage.changed.get(keyHex) ?? shared.slots.get(lineage.from + keyHex)
}

/** A slot's value under a storage root when the read caches know it; undefined means "read the trie". */
export function cachedSlot(shared: SharedReadCaches, storageRoot: Uint8Array, key: Uint8Array): Uint8Array | undefined {
  const slotKey = slotKeyOf(storageRoot, key)
  return shared.slots.get(slotKey) ?? inheritedSlot(shared, slotKey.slice(0, 64), slotKey.slice(64))
}

export class ReadCachedStateManager extends ReadOnlyStateManager {
  constructor(
    opts: Options,
    private readonly accounts: AccountReadCache,
    private readonly shared: SharedReadCaches,
    private readonly tries: TrieReader,
  ) {
    super(opts)
    const keccak = opts?.common?.customCrypto?.keccak256
    if (keccak === undefined) throw new Error('ReadCachedStateManager needs a Common with customCrypto.keccak256')
    this.keccak = keccak
  }

  private readonly keccak: (data: Uint8Array) => Uint8Array

  /** How many trie lookups the read caches answered and missed (accounts, slots, code). */
  readStats(): { hits: number; misses: number } {
    return {
      hits: this.accounts.hits + this.shared.slots.hits + this.shared.code.hits,
      misses: this.accounts.misses + this.shared.slots.misses + this.shared.code.misses,
    }
  }

  override async getAccount(address: Address): Promise<Account | undefined> {
    // the journaled caches hold only what a call wrote: empty (and skipped) outside a call
    const written = this._caches?.account
    const elem = written !== undefined && written.size() > 0 ? written.get(address) : undefined
    if (elem !== undefined) return elem.accountRLP !== undefined ? accountOf(elem.accountRLP) : undefined
    const key = this.addressKey(address.bytes)
    let account = this.accounts.get(key)
    if (account === undefined) {
      const rlp = await this.tries.get(this._trie.root(), this.keccak(address.bytes))
      account = rlp === null ? null : createAccountFromRLP(rlp)
      this.accounts.set(key, account)
    }
    // callers (the EVM) modify the account they are given: hand out a copy of the cached one
    return account === null ? undefined : new Account(account.nonce, account.balance, account.storageRoot, account.codeHash)
  }

  private lastAddressBytes: Uint8Array | undefined = undefined
  private lastAddressKey = ''

  /**
   * An address's cache key. A call reads the same account several times in a row (the target's code,
   * then its storage root at each SLOAD), through the same Address: the last key is kept, and reusing the
   * string also spares hashing it again for the lookup. Nothing writes into an Address's bytes.
   */
  private addressKey(bytes: Uint8Array): string {
    if (bytes === this.lastAddressBytes) return this.lastAddressKey
    const key = bytesToUnprefixedHex(bytes)
    this.lastAddressBytes = bytes
    this.lastAddressKey = key
    return key
  }

  override async getStorage(address: Address, key: Uint8Array): Promise<Uint8Array> {
    if (key.length !== 32) throw new Error('Storage key must be 32 bytes long')
    const storage = this._caches?.storage
    const written = storage !== undefined && storage.size() > 0 ? storage.get(address, key) : undefined
    if (written !== undefined) return RLP.decode(written) as Uint8Array
    const account = await this.getAccount(address)
    // an empty root also covers storage cleared by a state override inside the call
    if (account === undefined || equalsBytes(account.storageRoot, KECCAK256_RLP)) return EMPTY
    const slotKey = slotKeyOf(account.storageRoot, key)
    let value = this.shared.slots.get(slotKey)
    if (value === undefined) {
      value = inheritedSlot(this.shared, slotKey.slice(0, 64), slotKey.slice(64))
      if (value === undefined) {
        const raw = await this.tries.get(account.storageRoot, this.keccak(key), this.storagePrefixOf(address))
        value = raw === null ? EMPTY : compactSlot(RLP.decode(raw) as Uint8Array)
      }
      this.shared.slots.set(slotKey, value)
    }
    return value
  }

  /** Storage trie DB key prefixes by address key: a hash of the address each, and a contract's slots come in runs. */
  private readonly storagePrefixes = new LruMap<string, string>(1024)

  private storagePrefixOf(address: Address): string {
    if (!this._prefixStorageTrieKeys) return ''
    const key = this.addressKey(address.bytes)
    let prefix = this.storagePrefixes.get(key)
    if (prefix === undefined) {
      prefix = storageTriePrefix(this.keccak(address.bytes))
      this.storagePrefixes.set(key, prefix)
    }
    return prefix
  }

  override async getCode(address: Address): Promise<Uint8Array> {
    const codes = this._caches?.code
    const written = codes !== undefined && codes.size() > 0 ? codes.get(address) : undefined
    if (written !== undefined) return written.code ?? EMPTY
    const account = await this.getAccount(address)
    if (account === undefined || !account.isContract()) return EMPTY
    const hashKey = bytesToUnprefixedHex(account.codeHash)
    let code = this.shared.code.get(hashKey)
    if (code === undefined) {
      code = await super.getCode(address)
      this.shared.code.set(hashKey, code)
    }
    return code
  }

  override async getCodeSize(address: Address): Promise<number> {
    return (await this.getCode(address)).length
  }
}
