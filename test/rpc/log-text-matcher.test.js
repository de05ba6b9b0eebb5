// eth_getLogs matches criteria against the logs' encoded JSON (src/rpc/log-text-matcher.ts) and copies
// the matches into the answer (src/rpc/logs-answer.ts): each encoded log is exactly JSON.stringify of
// formatLog's object, the matcher agrees with the LogMatcher that subscriptions use on every log and
// criteria below, and the answer is the JSON array of the matches, after an earlier answer's.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { hexToBytes } from '@ethereumjs/util'
import { loadFastCrypto } from '../../dist/evm/crypto.js'
import { LogMatcher } from '../../dist/chain/logs.js'
import { encodeBlockLogs, formatLog } from '../../dist/json/log.js'
import { encodeReceipts } from '../../dist/chain/receipts.js'
import { LogTextMatcher } from '../../dist/rpc/log-text-matcher.js'
import { LogsAnswerBuilder } from '../../dist/rpc/logs-answer.js'

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
// the stored receipts of transactions with these logs (src/chain/receipts.ts), as a block holds them
const rlpOf = (receiptsLogs) => encodeReceipts(receiptsLogs.map((logs, i) => ({ status: 1, cumulativeGasUsed: 21_000n * BigInt(i + 1), logs })))
const textsOf = ({ bytes, starts, ends }) => Array.from(starts, (start, i) => bytes.toString('latin1', start, ends[i]))

test('a block\'s encoded logs are JSON.stringify(formatLog(...)) each, comma-separated, with and without blockTimestamp', () => {
  for (const ctx of [block, { blockHash: block.blockHash, blockNumber: 0n }]) {
    const encoded = encodeBlockLogs(rlpOf(receipts), txHashes, ctx)
    const expected = []
    for (let tx = 0; tx < receipts.length; tx++) {
      for (const l of receipts[tx]) {
        expected.push(JSON.stringify(formatLog(l, { ...ctx, transactionHash: txHashes[tx], transactionIndex: tx, logIndex: expected.length, removed: false })))
      }
    }
    assert.deepEqual(textsOf(encoded), expected)
    assert.equal(encoded.bytes.toString('latin1'), expected.join(','))
  }
  const none = encodeBlockLogs(rlpOf([[], []]), txHashes.slice(0, 2), block)
  assert.equal(none.starts.length, 0)
  assert.equal(none.bytes.length, 0)
})

test('the matcher agrees with LogMatcher on addresses, positions, wildcards and alternatives; the answer is the matches\' JSON array', () => {
  const encoded = encodeBlockLogs(rlpOf(receipts), txHashes, block)
  const texts = textsOf(encoded)
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
    const matcher = new LogTextMatcher({ addresses, topics })
    const expected = []
    for (let i = 0; i < logs.length; i++) {
      const match = reference.logMatches(logs[i])
      assert.equal(matcher.matches(encoded.bytes, encoded.starts[i]), match, `log ${i}, criteria ${JSON.stringify({ addresses, topics })}`)
      if (match) expected.push(JSON.parse(texts[i]))
    }
    matched += expected.length
    // twice over the block: runs of consecutive logs, and a block after another
    const answer = new LogsAnswerBuilder()
    matcher.collect(encoded, answer)
    matcher.collect(encoded, answer)
    assert.equal(answer.count, 2 * expected.length)
    assert.deepEqual(JSON.parse(answer.toJson().toString('latin1')), [...expected, ...expected])
    // after an earlier answer: empty, and holding logs
    assert.deepEqual(JSON.parse(answer.toJson(Buffer.from('[]')).toString('latin1')), [...expected, ...expected])
    assert.deepEqual(JSON.parse(answer.toJson(Buffer.from('[{"a":1}]')).toString('latin1')), [{ a: 1 }, ...expected, ...expected])
  }
  assert.ok(matched > 20 && matched < criteria.length * logs.length, 'the criteria both match and miss')
  assert.equal(new LogsAnswerBuilder().toJson().toString(), '[]')
  assert.equal(new LogsAnswerBuilder().toJson(Buffer.from('[{"a":1}]')).toString(), '[{"a":1}]')
})

test('logs are read from the stored receipts where they lie: a pre-Byzantium root, long data and lists, hundreds of logs; malformed receipts throw', () => {
  // 300 bytes of data (a two-byte RLP length), a receipt holding 300 logs (a list over 64 KiB), a state
  // root in place of a status, and a single byte of data under 0x80 (its own encoding)
  const many = Array.from({ length: 300 }, (_, i) => log(i % 2 === 0 ? A : B, [T[i % 6], topic((i % 256).toString(16).padStart(2, '0'))], '0x' + 'ab'.repeat(i % 40)))
  const receiptsLogs = [[log(C, [T[0]], '0x' + 'cd'.repeat(300))], many, [], [log(A, [], '0x7f')]]
  const hashes = receiptsLogs.map((_, i) => '0x' + (i + 1).toString(16).padStart(64, '0'))
  const stored = receiptsLogs.map((logs, i) => (i === 1 ? { status: 1, root: hexToBytes(topic('99')), cumulativeGasUsed: 1n, logs } : { status: 1, cumulativeGasUsed: BigInt(i + 1), logs }))
  const rlp = encodeReceipts(stored)
  const encoded = encodeBlockLogs(rlp, hashes, block)
  const expected = []
  for (let tx = 0; tx < receiptsLogs.length; tx++) {
    for (const l of receiptsLogs[tx]) {
      expected.push(JSON.stringify(formatLog(l, { ...block, transactionHash: hashes[tx], transactionIndex: tx, logIndex: expected.length, removed: false })))
    }
  }
  assert.equal(expected.length, 302)
  assert.deepEqual(textsOf(encoded), expected)
  assert.equal(encoded.bytes.toString('latin1'), expected.join(','))

  assert.throws(() => encodeBlockLogs(rlp.subarray(0, rlp.length - 1), hashes, block), /malformed stored receipts: .* runs past/)
  assert.throws(() => encodeBlockLogs(Uint8Array.of(0x82, 1, 2), hashes, block), /malformed stored receipts: not a list/)
  assert.throws(() => encodeBlockLogs(rlp, hashes.slice(0, 3), block), /malformed stored receipts: receipt 3 of a block of 3 transactions/)
})
