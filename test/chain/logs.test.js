// The log matcher behind eth_getLogs, filters and logs subscriptions: bloom pre-checks agree with
// @ethereumjs's Bloom, and the criteria follow the spec (address list, topic positions, null wildcards,
// alternatives per position).

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Bloom } from '@ethereumjs/vm'
import { hexToBytes } from '@ethereumjs/util'
import { loadFastCrypto } from '../../dist/evm/crypto.js'
import { LogMatcher } from '../../dist/chain/logs.js'

const { keccak256 } = await loadFastCrypto()
const A = '0x' + 'aa'.repeat(20)
const B = '0x' + 'bb'.repeat(20)
const T1 = '0x' + '01'.repeat(32)
const T2 = '0x' + '02'.repeat(32)
const T3 = '0x' + '03'.repeat(32)
const log = (address, ...topics) => [hexToBytes(address), topics.map((t) => hexToBytes(t)), new Uint8Array(0)]

function bloomOf(...logs) {
  const bloom = new Bloom()
  for (const [address, topics] of logs) {
    bloom.add(address)
    for (const t of topics) bloom.add(t)
  }
  return bloom.bitvector
}

test('a bloom holding the log passes the pre-check; an empty bloom never does', () => {
  const bloom = bloomOf(log(A, T1, T2))
  assert.equal(new LogMatcher({ addresses: [A], topics: [[T1], [T2]] }, keccak256).bloomMayMatch(bloom), true)
  assert.equal(new LogMatcher({ addresses: [A, B], topics: [] }, keccak256).bloomMayMatch(bloom), true)
  assert.equal(new LogMatcher({ addresses: [], topics: [null, [T3, T2]] }, keccak256).bloomMayMatch(bloom), true)
  assert.equal(new LogMatcher({ addresses: [A], topics: [[T1]] }, keccak256).bloomMayMatch(new Uint8Array(256)), false)
})

test('a bloom without the address or a topic fails the pre-check', () => {
  const bloom = bloomOf(log(A, T1))
  assert.equal(new LogMatcher({ addresses: [B], topics: [] }, keccak256).bloomMayMatch(bloom), false)
  assert.equal(new LogMatcher({ addresses: [], topics: [[T3]] }, keccak256).bloomMayMatch(bloom), false)
})

test('topic positions, null wildcards and alternatives', () => {
  const m = (addresses, topics) => new LogMatcher({ addresses, topics }, keccak256)
  const l = log(A, T1, T2)
  assert.equal(m([], []).logMatches(l), true)
  assert.equal(m([A], []).logMatches(l), true)
  assert.equal(m([B], []).logMatches(l), false)
  assert.equal(m([B, A], []).logMatches(l), true)
  assert.equal(m([], [[T1]]).logMatches(l), true)
  assert.equal(m([], [[T2]]).logMatches(l), false, 'T2 is at position 1, not 0')
  assert.equal(m([], [null, [T2]]).logMatches(l), true)
  assert.equal(m([], [null, [T3, T2]]).logMatches(l), true)
  assert.equal(m([], [[T1], [T3]]).logMatches(l), false)
  assert.equal(m([], [null, null, [T3]]).logMatches(l), false, 'a log with two topics has no third')
  assert.equal(m([], [null, null]).logMatches(l), true)
  assert.equal(m([], [null, null, null]).logMatches(l), false, 'as geth: more positions than the log has topics never match')
  assert.equal(m([], [[]]).logMatches(l), true, 'an empty alternative list is a wildcard')
})
