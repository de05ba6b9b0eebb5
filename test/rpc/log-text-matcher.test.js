// eth_getLogs matches criteria against the logs' pre-encoded JSON text (src/rpc/log-text-matcher.ts):
// the text is exactly JSON.stringify of formatLog's object, and the text matcher agrees with the
// LogMatcher that subscriptions use on every log and criteria below.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { hexToBytes } from '@ethereumjs/util'
import { loadFastCrypto } from '../../dist/evm/crypto.js'
import { LogMatcher } from '../../dist/chain/logs.js'
import { blockLogTexts, formatLog } from '../../dist/json/log.js'
import { LogTextMatcher } from '../../dist/rpc/log-text-matcher.js'

const { keccak256 } = await loadFastCrypto()
const addr = (b) => '0x' + b.repeat(20)
const topic = (b) => '0x' + b.repeat(32)
const [A, B, C] = [addr('aa'), addr('bb'), addr('0c')]
const T = ['01', '02', '03', '04', 'f5', 'e6'].map(topic)
const log = (address, topics, data = '0x') => [hexToBytes(address), topics.map((t) => hexToBytes(t)), hexToBytes(data)]

// receipts of three transactions: logs with 0 to 4 topics, empty and long data; the second has none
const receipts = [
  [log(A, []), log(A, [T[0]], '0x01'), log(B, [T[0], T[1]], '0x' + 'ff'.repeat(70))],
  [],
  [log(C, [T[0], T[1], T[2]]), log(A, [T[3], T[2], T[1], T[0]], '0x00'), log(B, [T[1], T[0]])],
]
const txHashes = ['0x' + '11'.repeat(32), '0x' + '22'.repeat(32), '0x' + '33'.repeat(32)]
const block = { blockHash: '0x' + '44'.repeat(32), blockNumber: 0x1234n, blockTimestamp: 0x6b0aa837n }

test('a block\'s log texts are JSON.stringify(formatLog(...)), with and without blockTimestamp', () => {
  for (const ctx of [block, { blockHash: block.blockHash, blockNumber: 0n }]) {
    const texts = blockLogTexts(receipts, txHashes, ctx)
    const expected = []
    for (let tx = 0; tx < receipts.length; tx++) {
      for (const l of receipts[tx]) {
        expected.push(JSON.stringify(formatLog(l, { ...ctx, transactionHash: txHashes[tx], transactionIndex: tx, logIndex: expected.length, removed: false })))
      }
    }
    assert.deepEqual(texts, expected)
  }
})

test('the text matcher agrees with LogMatcher on addresses, positions, wildcards and alternatives', () => {
  const texts = blockLogTexts(receipts, txHashes, block)
  const logs = receipts.flat()
  const many = [T[5], T[4], topic('07'), topic('08'), topic('09'), T[1]] // more than 4: looked up in a set
  const criteria = [
    [[], []], [[A], []], [[B], []], [[B, C], []], [[addr('0d')], []],
    [[A, addr('01'), addr('02'), addr('03'), addr('04'), addr('05')], []],
    [[], [[T[0]]]], [[], [[T[1]]]], [[], [null, [T[1]]]], [[], [null, [T[3], T[1]]]], [[A], [[T[0]]]],
    [[], [[T[0]], [T[2]]]], [[], [null, null, [T[2]]]], [[], [null, null]], [[], [null, null, null]],
    [[], [null, null, null, null]], [[], [null, null, null, null, null]], [[], [[]]], [[], [[], [T[1]]]],
    [[], [null, many]], [[B], [many, many]], [[], [[T[3]], [T[2]], [T[1]], [T[0]]]],
  ]
  let matched = 0
  for (const [addresses, topics] of criteria) {
    const reference = new LogMatcher({ addresses, topics }, keccak256)
    const text = new LogTextMatcher({ addresses, topics })
    for (let i = 0; i < logs.length; i++) {
      const expected = reference.logMatches(logs[i])
      assert.equal(text.matches(texts[i]), expected, `log ${i}, criteria ${JSON.stringify({ addresses, topics })}`)
      if (expected) matched++
    }
    const out = []
    text.collect(texts, out)
    assert.deepEqual(out, texts.filter((_, i) => reference.logMatches(logs[i])))
  }
  assert.ok(matched > 20 && matched < criteria.length * logs.length, 'the criteria both match and miss')
})
