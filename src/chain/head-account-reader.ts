// Nonces and balances at the head, for pool admission and the pool's re-check after each block. Never
// at the block being built: its source is the committed trie in LevelDB, read with a TrieReader (nodes
// kept by hash), and each account is read once per head (the pool asks nonce and balance together).

import { createAccountFromRLP, KECCAK256_RLP } from '@ethereumjs/util'
import type { Account } from '@ethereumjs/util'
import { trustedHexToBytes } from '../util/hex.js'
import { TrieReader } from './store/trie-reader.js'
import type { TrieNodeSource } from './store/trie-reader.js'
import type { AccountReader } from './txpool.js'

/** Account-trie nodes kept: the upper levels, which every lookup walks. */
const NODE_CACHE_BYTES = 2 << 20
/** Accounts remembered at one head (senders of the pooled transactions, mostly). */
const MAX_ACCOUNTS = 10_000

export class HeadAccountReader implements AccountReader {
  private root: Uint8Array = KECCAK256_RLP
  private readonly tries: TrieReader
  private readonly accounts = new Map<string, Promise<Account | undefined>>()

  constructor(
    nodes: TrieNodeSource,
    private readonly keccak: (data: Uint8Array) => Uint8Array,
  ) {
    this.tries = new TrieReader(nodes, NODE_CACHE_BYTES)
  }

  setRoot(root: Uint8Array): void {
    this.root = root
    this.accounts.clear()
  }

  async getNonce(address: string): Promise<bigint> {
    return (await this.account(address))?.nonce ?? 0n
  }

  async getBalance(address: string): Promise<bigint> {
    return (await this.account(address))?.balance ?? 0n
  }

  private account(address: string): Promise<Account | undefined> {
    let read = this.accounts.get(address)
    if (read === undefined) {
      if (this.accounts.size >= MAX_ACCOUNTS) this.accounts.clear()
      read = this.tries
        .get(this.root, this.keccak(trustedHexToBytes(address)))
        .then((rlp) => (rlp === null ? undefined : createAccountFromRLP(rlp)))
      // a failed read is not remembered (unless a new head has already replaced it)
      const failed = read
      failed.catch(() => {
        if (this.accounts.get(address) === failed) this.accounts.delete(address)
      })
      this.accounts.set(address, read)
    }
    return read
  }
}
