// What a block changed in the state, for the readers that keep 'latest' warm (the call workers and the
// main thread): every account written (its new RLP, or null when deleted) and, per contract, the
// storage slots written with the storage root they were written over. With it a reader starts the new
// head from what it knew at the parent instead of walking the trie again for every account and slot.
// Recorded on the producer thread from the writes that flush the block's state into the tries.

import type { MerklePatriciaTrie } from '@ethereumjs/mpt'
import type { Account, Address } from '@ethereumjs/util'
import { bytesToUnprefixedHex } from '@ethereumjs/util'
import type { FixedMerkleStateManager } from '../evm/state-manager.js'
import { BulkFlushStateManager } from './store/bulk-flush-sm.js'

export interface StorageDiff {
  /** unprefixed address hex */
  address: string
  /** the contract's storage root at the parent block */
  fromRoot: Uint8Array
  /** the storage was cleared or the account deleted during the block: nothing carries over */
  wiped: boolean
  /** unprefixed slot hex -> value with leading zeros stripped (empty: deleted) */
  slots: [string, Uint8Array][]
}

export interface StateDiff {
  parentRoot: Uint8Array
  root: Uint8Array
  /** unprefixed address hex -> account RLP, null when the account was deleted */
  accounts: [string, Uint8Array | null][]
  storage: StorageDiff[]
}

interface PendingStorage {
  fromRoot: Uint8Array
  wiped: boolean
  slots: Map<string, Uint8Array>
}

export class StateDiffRecorder {
  private accounts = new Map<string, Uint8Array | null>()
  private storage = new Map<string, PendingStorage>()
  private wiped = new Set<string>()

  /** Hooks the account trie's writes and the state manager's storage writes. */
  attach(accountTrie: MerklePatriciaTrie, sm: FixedMerkleStateManager): void {
    const put = accountTrie.put.bind(accountTrie)
    const del = accountTrie.del.bind(accountTrie)
    accountTrie.put = async (key, value, skipKeyTransform) => {
      await put(key, value, skipKeyTransform)
      this.accounts.set(bytesToUnprefixedHex(key), value)
    }
    accountTrie.del = async (key, skipKeyTransform) => {
      await del(key, skipKeyTransform)
      this.accounts.set(bytesToUnprefixedHex(key), null)
    }
    const hooks = sm as unknown as StorageHooks
    const write = hooks._writeContractStorage.bind(sm)
    const clear = hooks.clearStorage.bind(sm)
    const remove = hooks.deleteAccount.bind(sm)
    if (sm instanceof BulkFlushStateManager) sm.onStorageWritten = (address, fromRoot, key, value) => this.recordSlot(address, fromRoot, key, value)
    hooks._writeContractStorage = async (address, account, key, value) => {
      this.recordSlot(address, account.storageRoot, key, value)
      await write(address, account, key, value)
    }
    hooks.clearStorage = async (address) => {
      this.wiped.add(bytesToUnprefixedHex(address.bytes))
      await clear(address)
    }
    hooks.deleteAccount = async (address) => {
      this.wiped.add(bytesToUnprefixedHex(address.bytes))
      await remove(address)
    }
  }

  private recordSlot(address: Address, storageRoot: Uint8Array, key: Uint8Array, value: Uint8Array): void {
    const hex = bytesToUnprefixedHex(address.bytes)
    let pending = this.storage.get(hex)
    if (pending === undefined) {
      // the first write of the flush sees the root the block started from
      pending = { fromRoot: storageRoot, wiped: false, slots: new Map() }
      this.storage.set(hex, pending)
    }
    pending.slots.set(bytesToUnprefixedHex(key), value)
  }

  /** The diff of the block just built, and a clean slate for the next. */
  take(parentRoot: Uint8Array, root: Uint8Array): StateDiff {
    const storage: StorageDiff[] = []
    for (const [address, pending] of this.storage) {
      storage.push({ address, fromRoot: pending.fromRoot, wiped: pending.wiped || this.wiped.has(address), slots: [...pending.slots] })
    }
    const diff: StateDiff = { parentRoot, root, accounts: [...this.accounts], storage }
    this.discard()
    return diff
  }

  discard(): void {
    this.accounts = new Map()
    this.storage = new Map()
    this.wiped = new Set()
  }
}

interface StorageHooks {
  _writeContractStorage(address: Address, account: Account, key: Uint8Array, value: Uint8Array): Promise<void>
  clearStorage(address: Address): Promise<void>
  deleteAccount(address: Address): Promise<void>
}
