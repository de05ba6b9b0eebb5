// A read-only state manager whose reads outlive the checkpoint a call runs in (see read-cache.ts).
// Lookups go: the journaled caches (what the call itself wrote, plus overrides) -> the revert-proof
// read caches -> the trie. Trie reads are stored only in the read caches, never in the journal.

import { RLP } from '@ethereumjs/rlp'
import type { Account, Address } from '@ethereumjs/util'
import { bytesToUnprefixedHex, createAccountFromRLP, equalsBytes, KECCAK256_RLP } from '@ethereumjs/util'
import { ReadOnlyStateManager } from '../evm/state-manager.js'
import type { AccountReadCache, SharedReadCaches } from './read-cache.js'

type Options = ConstructorParameters<typeof ReadOnlyStateManager>[0]

const EMPTY = new Uint8Array(0)

export class ReadCachedStateManager extends ReadOnlyStateManager {
  constructor(
    opts: Options,
    private readonly accounts: AccountReadCache,
    private readonly shared: SharedReadCaches,
  ) {
    super(opts)
  }

  /** How many trie lookups the read caches answered and missed (accounts, slots, code). */
  readStats(): { hits: number; misses: number } {
    return {
      hits: this.accounts.hits + this.shared.slots.hits + this.shared.code.hits,
      misses: this.accounts.misses + this.shared.slots.misses + this.shared.code.misses,
    }
  }

  override async getAccount(address: Address): Promise<Account | undefined> {
    const elem = this._caches?.account?.get(address)
    if (elem !== undefined) return elem.accountRLP !== undefined ? createAccountFromRLP(elem.accountRLP) : undefined
    const key = bytesToUnprefixedHex(address.bytes)
    let rlp = this.accounts.get(key)
    if (rlp === undefined) {
      rlp = await this._trie.get(address.bytes)
      this.accounts.set(key, rlp)
    }
    return rlp === null ? undefined : createAccountFromRLP(rlp)
  }

  override async getStorage(address: Address, key: Uint8Array): Promise<Uint8Array> {
    if (key.length !== 32) throw new Error('Storage key must be 32 bytes long')
    const written = this._caches?.storage?.get(address, key)
    if (written !== undefined) return RLP.decode(written) as Uint8Array
    const account = await this.getAccount(address)
    // an empty root also covers storage cleared by a state override inside the call
    if (account === undefined || equalsBytes(account.storageRoot, KECCAK256_RLP)) return EMPTY
    const slotKey = bytesToUnprefixedHex(account.storageRoot) + bytesToUnprefixedHex(key)
    let value = this.shared.slots.get(slotKey)
    if (value === undefined) {
      const raw = await this._getStorageTrie(address, account).get(key)
      value = raw === null ? EMPTY : (RLP.decode(raw) as Uint8Array)
      this.shared.slots.set(slotKey, value)
    }
    return value
  }

  override async getCode(address: Address): Promise<Uint8Array> {
    const written = this._caches?.code?.get(address)
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
