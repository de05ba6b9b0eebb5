// The block builder's decoded account cache against @ethereumjs's own AccountCache: the same accounts read
// and the same changes flushed through checkpoints, commits and reverts; copies handed out; the bound.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { AccountCache, CacheType } from '@ethereumjs/statemanager'
import { Account, Address, bytesToHex, createAccountFromRLP } from '@ethereumjs/util'
import { DecodedAccountCache } from '../../dist/chain/store/account-cache.js'

const address = (i) => new Address(Uint8Array.from({ length: 20 }, (_, j) => (j === 19 ? i : j === 18 ? 0xaa : 0)))
const rlpHex = (entry) => (entry === undefined ? 'missing' : entry.accountRLP === undefined ? 'deleted' : bytesToHex(entry.accountRLP))
const flushed = (items) => items.map(([key, entry]) => `${key}=${rlpHex(entry)}`).sort()

test('same reads and flushed changes as the library cache through a random run of checkpoints', () => {
  // a seeded generator: the run is the same every time
  let seed = 0x2545f491
  const next = (n) => {
    seed ^= seed << 13
    seed ^= seed >>> 17
    seed ^= seed << 5
    return (seed >>> 0) % n
  }
  const ours = new DecodedAccountCache(1_000)
  const theirs = new AccountCache({ type: CacheType.ORDERED_MAP, size: 1_000 })
  let depth = 0
  for (let step = 0; step < 5_000; step++) {
    const a = address(next(24))
    const op = next(10)
    if (op < 4) {
      const account = new Account(BigInt(next(5)), BigInt(next(1_000_000)))
      ours.put(a, account)
      theirs.put(a, account)
      // the caller changes its object after the write: the cache keeps what was written
      account.balance += 1n
    } else if (op === 4) {
      ours.del(a)
      theirs.del(a)
    } else if (op === 5) {
      ours.checkpoint()
      theirs.checkpoint()
      depth++
    } else if (op === 6 && depth > 0) {
      ours.commit()
      theirs.commit()
      depth--
    } else if (op === 7 && depth > 0) {
      ours.revert()
      theirs.revert()
      depth--
    } else if (op === 8 && next(8) === 0) {
      assert.deepEqual(flushed(ours.flush()), flushed(theirs.flush()), `flush at step ${step}`)
    }
    for (let i = 0; i < 24; i++) assert.equal(rlpHex(ours.get(address(i))), rlpHex(theirs.get(address(i))), `account ${i} at step ${step}`)
  }
  while (depth-- > 0) {
    ours.commit()
    theirs.commit()
  }
  assert.deepEqual(flushed(ours.flush()), flushed(theirs.flush()))
})

test('a read hands out a copy, a fill from the trie is not a change, deleted and unknown differ', () => {
  const cache = new DecodedAccountCache(10)
  assert.equal(cache.account(address(1)), null, 'not cached')
  cache.fill(address(1), new Account(1n, 100n))
  cache.fill(address(2), undefined)
  assert.equal(cache.account(address(2)), undefined, 'known not to exist')
  const read = cache.account(address(1))
  read.balance = 5n
  assert.equal(cache.account(address(1)).balance, 100n, 'the cached account did not change with the copy')
  assert.deepEqual(cache.flush(), [], 'fills are the trie\'s own values: nothing to write')
  cache.put(address(1), read)
  const [[key, entry]] = cache.flush()
  assert.equal(key, address(1).toString().slice(2))
  assert.equal(createAccountFromRLP(entry.accountRLP).balance, 5n)
})

test('clean accounts beyond the bound are dropped after a flush, those cached first; changed ones never', () => {
  const cache = new DecodedAccountCache(3)
  for (let i = 0; i < 5; i++) cache.put(address(i), new Account(0n, BigInt(i)))
  assert.equal(cache.evictClean(), 0, 'changed since the last flush: kept')
  assert.equal(cache.size(), 5)
  cache.flush()
  cache.checkpoint()
  assert.equal(cache.evictClean(), 0, 'a checkpoint open: kept')
  cache.commit()
  cache.put(address(0), new Account(0n, 10n))
  cache.put(address(5), new Account(0n, 5n))
  assert.equal(cache.evictClean(), 0, 'two changed since the flush: kept')
  cache.flush()
  assert.equal(cache.evictClean(), 3)
  assert.deepEqual([0, 1, 2, 3, 4, 5].map((i) => cache.account(address(i))?.balance ?? null), [null, null, null, 3n, 4n, 5n])
})

test('a bound of zero or less is refused', () => {
  assert.throws(() => new DecodedAccountCache(0), /must be positive/)
})
