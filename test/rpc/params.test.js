import { test } from 'node:test'
import assert from 'node:assert/strict'
import { getAddress } from 'ethers'
import * as p from '../../dist/rpc/params.js'

/** Asserts that fn throws an RpcError with this code and exact message. */
function rejects(fn, message, code = -32602) {
  assert.throws(fn, (err) => {
    assert.equal(err.name, 'RpcError', `not an RpcError: ${err.stack}`)
    assert.equal(err.message, message)
    assert.equal(err.code, code)
    return true
  })
}

const ADDR = '0x' + 'ab'.repeat(20)
const HASH = '0x' + 'cd'.repeat(32)

test('expectParams: geth count messages', () => {
  p.expectParams(['a'], 1, 2)
  p.expectParams(['a', 'b'], 1, 2)
  rejects(() => p.expectParams([], 1, 2), 'missing value for required argument 0')
  rejects(() => p.expectParams(['a'], 2, 2), 'missing value for required argument 1')
  rejects(() => p.expectParams(['a', 'b', 'c'], 1, 2), 'too many arguments, want at most 2')
})

test('address', () => {
  assert.equal(p.address('0x' + 'AB'.repeat(20), 0), ADDR)
  assert.equal(p.address('0X' + 'ab'.repeat(20), 0), ADDR)
  rejects(() => p.address('0x' + 'ab'.repeat(19), 0), 'invalid argument 0: hex string has length 38, want 40 for common.Address')
  rejects(() => p.address('0x' + 'ab'.repeat(32), 1), 'invalid argument 1: hex string has length 64, want 40 for common.Address')
  rejects(
    () => p.address('ab'.repeat(20), 0),
    'invalid argument 0: json: cannot unmarshal hex string without 0x prefix into Go value of type common.Address',
  )
  rejects(
    () => p.address('0x' + 'a'.repeat(39), 0),
    'invalid argument 0: json: cannot unmarshal hex string of odd length into Go value of type common.Address',
  )
  rejects(
    () => p.address('0x' + 'zz'.repeat(20), 0),
    'invalid argument 0: json: cannot unmarshal invalid hex string into Go value of type common.Address',
  )
  rejects(() => p.address('', 0), 'invalid argument 0: hex string has length 0, want 40 for common.Address')
  for (const bad of [42, null, {}, [], true]) {
    rejects(() => p.address(bad, 0), 'invalid argument 0: json: cannot unmarshal non-string into Go value of type common.Address')
  }
  rejects(() => p.address(undefined, 0), 'missing value for required argument 0')
  // A huge string is rejected by its length, never parsed.
  rejects(() => p.address('0x' + 'a'.repeat(4_000_000), 0), 'invalid argument 0: hex string has length 4000000, want 40 for common.Address')
})

test('hash32', () => {
  assert.equal(p.hash32('0x' + 'CD'.repeat(32), 0), HASH)
  rejects(() => p.hash32('0x' + 'cd'.repeat(20), 0), 'invalid argument 0: hex string has length 40, want 64 for common.Hash')
  rejects(
    () => p.hash32('cd'.repeat(32), 0),
    'invalid argument 0: json: cannot unmarshal hex string without 0x prefix into Go value of type common.Hash',
  )
  rejects(() => p.hash32(1, 0), 'invalid argument 0: json: cannot unmarshal non-string into Go value of type common.Hash')
})

test('data', () => {
  assert.deepEqual(p.data('0x', 0), new Uint8Array())
  assert.deepEqual(p.data('', 0), new Uint8Array())
  assert.deepEqual(p.data('0x00fFa1', 0), Uint8Array.from([0, 255, 161]))
  rejects(() => p.data('0x123', 2), 'invalid argument 2: json: cannot unmarshal hex string of odd length into Go value of type hexutil.Bytes')
  rejects(() => p.data('1234', 0), 'invalid argument 0: json: cannot unmarshal hex string without 0x prefix into Go value of type hexutil.Bytes')
  rejects(() => p.data('0x12zz', 0), 'invalid argument 0: json: cannot unmarshal invalid hex string into Go value of type hexutil.Bytes')
  rejects(() => p.data(['0x12'], 0), 'invalid argument 0: json: cannot unmarshal non-string into Go value of type hexutil.Bytes')
})

test('quantity (256-bit) and uint64', () => {
  assert.equal(p.quantity('0x0', 0), 0n)
  assert.equal(p.quantity('0x1F', 0), 31n)
  assert.equal(p.quantity('0x' + 'f'.repeat(64), 0), (1n << 256n) - 1n)
  assert.equal(p.quantity('', 0), 0n) // geth's hexutil.Big decodes "" as zero
  rejects(() => p.quantity('0x', 0), 'invalid argument 0: json: cannot unmarshal hex string "0x" into Go value of type *hexutil.Big')
  rejects(() => p.quantity('0x01', 0), 'invalid argument 0: json: cannot unmarshal hex number with leading zero digits into Go value of type *hexutil.Big')
  rejects(() => p.quantity('0x1' + '0'.repeat(64), 0), 'invalid argument 0: json: cannot unmarshal hex number > 256 bits into Go value of type *hexutil.Big')
  rejects(() => p.quantity('10', 0), 'invalid argument 0: json: cannot unmarshal hex string without 0x prefix into Go value of type *hexutil.Big')
  rejects(() => p.quantity('0xg', 0), 'invalid argument 0: json: cannot unmarshal invalid hex string into Go value of type *hexutil.Big')
  rejects(() => p.quantity(10, 0), 'invalid argument 0: json: cannot unmarshal non-string into Go value of type *hexutil.Big')

  assert.equal(p.uint64('0xffffffffffffffff', 1), 2n ** 64n - 1n)
  rejects(() => p.uint64('0x10000000000000000', 1), 'invalid argument 1: json: cannot unmarshal hex number > 64 bits into Go value of type hexutil.Uint64')
  rejects(() => p.uint64(null, 1), 'invalid argument 1: json: cannot unmarshal non-string into Go value of type hexutil.Uint64')

  assert.equal(p.uint('0x2', 1), 2)
  rejects(() => p.uint('2', 1), 'invalid argument 1: json: cannot unmarshal hex string without 0x prefix into Go value of type hexutil.Uint')
})

test('bool', () => {
  assert.equal(p.bool(true, 1), true)
  assert.equal(p.bool(false, 1), false)
  assert.equal(p.bool(null, 1), false) // encoding/json: null into a bool is a no-op
  rejects(() => p.bool('true', 1), 'invalid argument 1: json: cannot unmarshal string into Go value of type bool')
  rejects(() => p.bool(1, 1), 'invalid argument 1: json: cannot unmarshal number into Go value of type bool')
  rejects(() => p.bool({}, 1), 'invalid argument 1: json: cannot unmarshal object into Go value of type bool')
  rejects(() => p.bool(undefined, 1), 'missing value for required argument 1')
})

test('blockTag', () => {
  for (const tag of ['latest', 'earliest', 'pending', 'safe', 'finalized']) {
    assert.deepEqual(p.blockTag(tag, 0), { kind: 'tag', tag })
  }
  assert.deepEqual(p.blockTag('0x0', 0), { kind: 'number', number: 0n })
  assert.deepEqual(p.blockTag('0x1b4', 0), { kind: 'number', number: 436n })
  rejects(() => p.blockTag('Latest', 0), 'invalid argument 0: hex string without 0x prefix')
  rejects(() => p.blockTag(5, 0), 'invalid argument 0: hex string without 0x prefix')
  rejects(() => p.blockTag('', 0), 'invalid argument 0: empty hex string')
  rejects(() => p.blockTag('0x', 0), 'invalid argument 0: hex string "0x"')
  rejects(() => p.blockTag('0x01', 0), 'invalid argument 0: hex number with leading zero digits')
  rejects(() => p.blockTag('0xfoo', 0), 'invalid argument 0: invalid hex string')
  rejects(() => p.blockTag('0x10000000000000000', 0), 'invalid argument 0: hex number > 64 bits')
  rejects(() => p.blockTag('0x8000000000000000', 0), 'invalid argument 0: block number larger than int64')
  rejects(() => p.blockTag(HASH, 0), 'invalid argument 0: hex number > 64 bits')
})

test('blockSelector (EIP-1898)', () => {
  assert.deepEqual(p.blockSelector(undefined, 1, { optional: true }), { kind: 'tag', tag: 'latest' })
  assert.deepEqual(p.blockSelector(null, 1, { optional: true }), { kind: 'tag', tag: 'latest' })
  rejects(() => p.blockSelector(undefined, 1), 'missing value for required argument 1')
  rejects(() => p.blockSelector(null, 1), 'invalid arguments; neither block nor hash specified', -32000)
  assert.deepEqual(p.blockSelector('pending', 1), { kind: 'tag', tag: 'pending' })
  assert.deepEqual(p.blockSelector('0x10', 1), { kind: 'number', number: 16n })
  assert.deepEqual(p.blockSelector('0x' + 'CD'.repeat(32), 1), { kind: 'hash', hash: HASH, requireCanonical: false })
  assert.deepEqual(p.blockSelector({ blockNumber: '0x2' }, 1), { kind: 'number', number: 2n })
  assert.deepEqual(p.blockSelector({ blockNumber: 'safe' }, 1), { kind: 'tag', tag: 'safe' })
  assert.deepEqual(p.blockSelector({ blockHash: HASH }, 1), { kind: 'hash', hash: HASH, requireCanonical: false })
  assert.deepEqual(p.blockSelector({ blockHash: HASH, requireCanonical: true }, 1), { kind: 'hash', hash: HASH, requireCanonical: true })
  rejects(
    () => p.blockSelector({ blockHash: HASH, blockNumber: '0x1' }, 1),
    'invalid argument 1: cannot specify both BlockHash and BlockNumber, choose one or the other',
  )
  rejects(() => p.blockSelector({}, 1), 'invalid arguments; neither block nor hash specified', -32000)
  // geth retries a malformed object as a string, so that is what it reports
  rejects(() => p.blockSelector({ blockHash: '0x12' }, 1), 'invalid argument 1: json: cannot unmarshal object into Go value of type string')
  rejects(() => p.blockSelector({ blockNumber: 7 }, 1), 'invalid argument 1: json: cannot unmarshal object into Go value of type string')
  rejects(() => p.blockSelector({ blockHash: HASH, requireCanonical: 'yes' }, 1), 'invalid argument 1: json: cannot unmarshal object into Go value of type string')
  rejects(() => p.blockSelector(7, 1), 'invalid argument 1: json: cannot unmarshal number into Go value of type string')
  rejects(() => p.blockSelector([], 1), 'invalid argument 1: json: cannot unmarshal array into Go value of type string')
  rejects(() => p.blockSelector('0x' + 'zz'.repeat(32), 1), 'invalid argument 1: invalid hex string')
  rejects(() => p.blockSelector('0x8000000000000000', 1), 'invalid argument 1: blocknumber too high')
  rejects(() => p.blockSelector('latest ', 1), 'invalid argument 1: hex string without 0x prefix')
})

test('callRequest: fields, types, conversions', () => {
  const r = p.callRequest(
    {
      from: '0x' + 'AA'.repeat(20),
      to: ADDR,
      gas: '0x5208',
      maxFeePerGas: '0x3b9aca00',
      maxPriorityFeePerGas: '0x1',
      value: '0xde0b6b3a7640000',
      input: '0x70a08231',
      nonce: '0x7',
      chainId: '0x600d',
      type: '0x2',
      accessList: [{ address: ADDR, storageKeys: [HASH] }],
      authorizationList: [{ chainId: '0x600d', address: ADDR, nonce: '0x1', yParity: '0x0', r: '0x1', s: '0x2' }],
      somethingUnknown: 42,
    },
    0,
  )
  assert.deepEqual(r, {
    from: '0x' + 'aa'.repeat(20),
    to: ADDR,
    gas: 21000n,
    maxFeePerGas: 1_000_000_000n,
    maxPriorityFeePerGas: 1n,
    value: 10n ** 18n,
    input: Uint8Array.from([0x70, 0xa0, 0x82, 0x31]),
    nonce: 7n,
    chainId: 24589n,
    type: 2n,
    accessList: [{ address: ADDR, storageKeys: [HASH] }],
    authorizationList: [{ chainId: 24589n, address: ADDR, nonce: 1n, yParity: 0n, r: 1n, s: 2n }],
  })
  assert.deepEqual(p.callRequest({ data: '0x01' }, 0), { to: null, input: Uint8Array.from([1]) })
  assert.deepEqual(p.callRequest({ to: null, gasPrice: null }, 0), { to: null })
  assert.deepEqual(p.callRequest({ data: '0x01', input: '0x01' }, 0).input, Uint8Array.from([1]))
  assert.deepEqual(p.callRequest(null, 0), { to: null })
  rejects(() => p.callRequest(undefined, 0), 'missing value for required argument 0')
})

test('callRequest: geth messages', () => {
  rejects(
    () => p.callRequest({ gas: 21000 }, 0),
    'invalid argument 0: json: cannot unmarshal non-string into Go struct field TransactionArgs.gas of type hexutil.Uint64',
  )
  rejects(
    () => p.callRequest({ to: 'ab'.repeat(20) }, 0),
    'invalid argument 0: json: cannot unmarshal hex string without 0x prefix into Go struct field TransactionArgs.to of type common.Address',
  )
  rejects(() => p.callRequest({ from: '0x1234' }, 0), 'invalid argument 0: hex string has length 4, want 40 for common.Address')
  rejects(
    () => p.callRequest({ value: '0x01' }, 0),
    'invalid argument 0: json: cannot unmarshal hex number with leading zero digits into Go struct field TransactionArgs.value of type *hexutil.Big',
  )
  rejects(
    () => p.callRequest({ input: '0x1' }, 0),
    'invalid argument 0: json: cannot unmarshal hex string of odd length into Go struct field TransactionArgs.input of type hexutil.Bytes',
  )
  rejects(() => p.callRequest('0x', 0), 'invalid argument 0: json: cannot unmarshal string into Go value of type ethapi.TransactionArgs')
  rejects(() => p.callRequest([], 0), 'invalid argument 0: json: cannot unmarshal array into Go value of type ethapi.TransactionArgs')
  rejects(
    () => p.callRequest({ accessList: {} }, 0),
    'invalid argument 0: json: cannot unmarshal object into Go struct field TransactionArgs.accessList of type types.AccessList',
  )
  rejects(() => p.callRequest({ accessList: [{ storageKeys: [] }] }, 0), "invalid argument 0: missing required field 'address' for AccessTuple")
  rejects(() => p.callRequest({ accessList: [{ address: ADDR }] }, 0), "invalid argument 0: missing required field 'storageKeys' for AccessTuple")
  rejects(
    () => p.callRequest({ authorizationList: [{ chainId: '0x1', address: ADDR, nonce: '0x0', yParity: '0x0', r: '0x1' }] }, 0),
    "invalid argument 0: missing required field 's' for SetCodeAuthorization",
  )
  rejects(
    () => p.callRequest({ gasPrice: '0x1', maxFeePerGas: '0x2' }, 0),
    'both gasPrice and (maxFeePerGas or maxPriorityFeePerGas) specified',
    -32000,
  )
  rejects(
    () => p.callRequest({ gasPrice: '0x1', maxPriorityFeePerGas: '0x0' }, 0),
    'both gasPrice and (maxFeePerGas or maxPriorityFeePerGas) specified',
    -32000,
  )
  rejects(
    () => p.callRequest({ data: '0x01', input: '0x02' }, 0),
    'both "data" and "input" are set and not equal. Please use "input" to pass transaction call data',
    -32000,
  )
  rejects(() => p.callRequest({ chainId: '0x1' }, 0, { chainId: 24589n }), "chainId does not match node's (have=1, want=24589)", -32000)
  assert.equal(p.callRequest({ chainId: '0x600d' }, 0, { chainId: 24589n }).chainId, 24589n)
})

test('stateOverrides', () => {
  assert.equal(p.stateOverrides(undefined, 2), undefined)
  assert.equal(p.stateOverrides(null, 2), undefined)
  const slot = '0x' + '00'.repeat(31) + '01'
  const o = p.stateOverrides(
    {
      ['0x' + 'AB'.repeat(20)]: { balance: '0x10', nonce: '0x2', code: '0x6000', stateDiff: { [slot]: HASH } },
      ['0x' + '11'.repeat(20)]: { state: {} },
    },
    2,
  )
  assert.deepEqual(o.get(ADDR), { balance: 16n, nonce: 2n, code: Uint8Array.from([0x60, 0]), stateDiff: new Map([[slot, HASH]]) })
  assert.deepEqual(o.get('0x' + '11'.repeat(20)), { state: new Map() })
  rejects(
    () => p.stateOverrides({ [ADDR]: { state: {}, stateDiff: {} } }, 2),
    `account ${getAddress(ADDR)} has both 'state' and 'stateDiff'`,
    -32000,
  )
  rejects(() => p.stateOverrides({ '0x12': {} }, 2), 'invalid argument 2: hex string has length 2, want 40 for Address')
  rejects(() => p.stateOverrides({ ['ab'.repeat(20)]: {} }, 2), 'invalid argument 2: hex string without 0x prefix')
  rejects(
    () => p.stateOverrides({ [ADDR]: { balance: 1 } }, 2),
    'invalid argument 2: json: cannot unmarshal non-string into Go struct field OverrideAccount.balance of type *hexutil.Big',
  )
  rejects(
    () => p.stateOverrides({ [ADDR]: { stateDiff: { [slot]: '0x01' } } }, 2),
    'invalid argument 2: hex string has length 2, want 64 for common.Hash',
  )
  rejects(() => p.stateOverrides({ [ADDR]: { stateDiff: { '0x01': HASH } } }, 2), 'invalid argument 2: hex string has length 2, want 64 for Hash')
  rejects(() => p.stateOverrides('x', 2), 'invalid argument 2: json: cannot unmarshal string into Go value of type override.StateOverride')
  rejects(() => p.stateOverrides({ [ADDR]: 5 }, 2), 'invalid argument 2: json: cannot unmarshal number into Go value of type override.OverrideAccount')
})

test('blockOverrides', () => {
  assert.equal(p.blockOverrides(undefined, 3), undefined)
  assert.deepEqual(
    p.blockOverrides(
      { number: '0x10', time: '0x5', gasLimit: '0x1c9c380', coinbase: ADDR, prevRandao: HASH, baseFeePerGas: '0x0', blobBaseFee: '0x1' },
      3,
    ),
    { number: 16n, time: 5n, gasLimit: 30_000_000n, feeRecipient: ADDR, prevRandao: HASH, baseFeePerGas: 0n, blobBaseFee: 1n },
  )
  const other = '0x' + '12'.repeat(20)
  assert.equal(p.blockOverrides({ coinbase: ADDR, feeRecipient: other }, 3).feeRecipient, other)
  rejects(
    () => p.blockOverrides({ time: 5 }, 3),
    'invalid argument 3: json: cannot unmarshal non-string into Go struct field BlockOverrides.time of type hexutil.Uint64',
  )
  rejects(() => p.blockOverrides([], 3), 'invalid argument 3: json: cannot unmarshal array into Go value of type override.BlockOverrides')
})

test('logFilter: normalisation', () => {
  const t1 = '0x' + '01'.repeat(32)
  const t2 = '0x' + '02'.repeat(32)
  assert.deepEqual(p.logFilter({}, 0), { addresses: [], topics: [] })
  assert.deepEqual(p.logFilter(null, 0), { addresses: [], topics: [] })
  assert.deepEqual(
    p.logFilter({ fromBlock: '0x1', toBlock: 'latest', address: '0x' + 'AB'.repeat(20), topics: [t1, null, [t1, t2], [t2, null, 'junk']] }, 0),
    {
      fromBlock: { kind: 'number', number: 1n },
      toBlock: { kind: 'tag', tag: 'latest' },
      addresses: [ADDR],
      topics: [[t1], null, [t1, t2], null],
    },
  )
  assert.deepEqual(p.logFilter({ blockHash: HASH, address: [ADDR, ADDR], fromBlock: null }, 0), {
    blockHash: HASH,
    addresses: [ADDR, ADDR],
    topics: [],
  })
})

test('logFilter: geth messages', () => {
  rejects(
    () => p.logFilter({ blockHash: HASH, fromBlock: '0x1' }, 0),
    'invalid argument 0: cannot specify both BlockHash and FromBlock/ToBlock, choose one or the other',
  )
  rejects(() => p.logFilter({ fromBlock: 1 }, 0), 'invalid argument 0: hex string without 0x prefix')
  rejects(() => p.logFilter({ toBlock: '0x01' }, 0), 'invalid argument 0: hex number with leading zero digits')
  rejects(() => p.logFilter({ blockHash: '0x12' }, 0), 'invalid argument 0: hex string has length 2, want 64 for common.Hash')
  rejects(
    () => p.logFilter({ blockHash: 12 }, 0),
    'invalid argument 0: json: cannot unmarshal non-string into Go struct field input.blockHash of type common.Hash',
  )
  rejects(() => p.logFilter({ address: '0x1234' }, 0), 'invalid argument 0: invalid address: hex has invalid length 2 after decoding; expected 20 for address')
  rejects(() => p.logFilter({ address: 'ab' }, 0), 'invalid argument 0: invalid address: hex string without 0x prefix')
  rejects(() => p.logFilter({ address: [ADDR, '0xzz'] }, 0), 'invalid argument 0: invalid address at index 1: invalid hex string')
  rejects(() => p.logFilter({ address: [ADDR, 7] }, 0), 'invalid argument 0: non-string address at index 1')
  rejects(() => p.logFilter({ address: 7 }, 0), 'invalid argument 0: invalid addresses in query')
  rejects(() => p.logFilter({ topics: [null, null, null, null, null] }, 0), 'invalid argument 0: exceed max topics')
  rejects(() => p.logFilter({ topics: [5] }, 0), 'invalid argument 0: invalid topic(s)')
  rejects(() => p.logFilter({ topics: [[HASH, 5]] }, 0), 'invalid argument 0: invalid topic(s)')
  rejects(() => p.logFilter({ topics: ['0x1234'] }, 0), 'invalid argument 0: hex has invalid length 2 after decoding; expected 32 for topic')
  rejects(() => p.logFilter({ topics: [''] }, 0), 'invalid argument 0: empty hex string')
  rejects(() => p.logFilter({ topics: [[HASH, '0x123']] }, 0), 'invalid argument 0: hex string of odd length')
  rejects(
    () => p.logFilter({ topics: 'x' }, 0),
    'invalid argument 0: json: cannot unmarshal string into Go struct field input.topics of type []interface {}',
  )
  rejects(() => p.logFilter('latest', 0), 'invalid argument 0: json: cannot unmarshal string into Go value of type filters.input')
  rejects(() => p.logFilter({ topics: [new Array(1001).fill(HASH)] }, 0), 'invalid argument 0: exceed max topics')
  const many = Array.from({ length: 3 }, (_, k) => '0x' + k.toString(16).padStart(40, '0'))
  rejects(() => p.logFilter({ address: many }, 0, { logQueryLimit: 2 }), 'exceed max addresses or topics per search position')
  rejects(() => p.logFilter({ topics: [[HASH, HASH, HASH]] }, 0, { logQueryLimit: 2 }), 'exceed max addresses or topics per search position')
  assert.equal(p.logFilter({ address: many }, 0, { logQueryLimit: 0 }).addresses.length, 3)
})

const describe = (v) => {
  try {
    return JSON.stringify(v)?.slice(0, 40) ?? String(v)
  } catch {
    return Object.prototype.toString.call(v)
  }
}

test('no validator crashes on hostile input', () => {
  const hostile = [undefined, null, 0, -1, 1e300, NaN, true, '', 'x'.repeat(100_000), [], [[]], {}, { toString: null }, Object.create(null)]
  const validators = [
    (v) => p.address(v, 0),
    (v) => p.hash32(v, 0),
    (v) => p.data(v, 0),
    (v) => p.quantity(v, 0),
    (v) => p.uint64(v, 0),
    (v) => p.uint(v, 0),
    (v) => p.bool(v, 0),
    (v) => p.blockTag(v, 0),
    (v) => p.blockSelector(v, 0),
    (v) => p.blockSelector(v, 0, { optional: true }),
    (v) => p.callRequest(v, 0),
    (v) => p.callRequest({ accessList: v, authorizationList: v }, 0),
    (v) => p.stateOverrides(v, 0),
    (v) => p.stateOverrides({ [ADDR]: { state: v } }, 0),
    (v) => p.blockOverrides(v, 0),
    (v) => p.logFilter(v, 0),
    (v) => p.logFilter({ address: v, topics: [v] }, 0),
  ]
  for (const validate of validators) {
    for (const value of hostile) {
      try {
        validate(value)
      } catch (err) {
        if (err.name !== 'RpcError') assert.fail(`${validate} crashed on ${describe(value)}: ${err.stack}`)
        assert.ok(err.code === -32602 || err.code === -32000)
      }
    }
  }
})
