import { test, before } from 'node:test'
import assert from 'node:assert/strict'
import { RLP } from '@ethereumjs/rlp'
import { createAccessList2930Tx, createEOACode7702Tx, createFeeMarket1559Tx, createLegacyTx, createTxFromRLP, FeeMarket1559Tx } from '@ethereumjs/tx'
import { bigIntToUnpaddedBytes, bytesToHex, concatBytes, eoaCode7702SignAuthorization, hexToBytes, privateToAddress } from '@ethereumjs/util'
import { loadFastCrypto } from '../../dist/evm/crypto.js'
import { createChainCommon } from '../../dist/evm/common.js'
import { latestForkConfig } from '../../dist/evm/geth-genesis.js'
import { fromWire } from '../../dist/chain/pooled-tx.js'
import { transactionOf } from '../../dist/chain/tx-object.js'

const GWEI = 1_000_000_000n
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n
const pk = hexToBytes('0x' + '42'.repeat(32))
const signer = bytesToHex(privateToAddress(pk))
const to = '0x' + '22'.repeat(20)

let common
let fc

before(async () => {
  fc = await loadFastCrypto()
  common = createChainCommon({ config: latestForkConfig(24589), gasLimit: '0x1c9c380', alloc: {} }, fc.customCrypto)
})

/** A pool entry of signed bytes, as the builder gets it (its sender recovered once, as at intake). */
function pooled(raw) {
  const tx = createTxFromRLP(raw, { common })
  return fromWire({ raw, senderPubKey: tx.getSenderPublicKey(), hash: bytesToHex(tx.hash()), sender: tx.getSenderAddress().toString(), arrivedAt: 0 })
}

const plain = (v) => (typeof v === 'bigint' ? `${v}n` : v instanceof Uint8Array ? bytesToHex(v) : v?.constructor?.name === 'Address' ? v.toString() : v)

/** Every field of the library's object, and what its methods answer, against ours. */
function assertSameTransaction(ours, theirs) {
  assert.equal(Object.getPrototypeOf(ours), Object.getPrototypeOf(theirs))
  assert.deepEqual(Object.keys(ours), Object.keys(theirs))
  for (const key of Object.keys(theirs)) {
    if (key === 'common' || key === 'txOptions' || key === 'cache') continue
    assert.deepEqual(JSON.stringify(ours[key], (_, v) => plain(v)), JSON.stringify(theirs[key], (_, v) => plain(v)), key)
  }
  assert.equal(Object.isFrozen(ours), Object.isFrozen(theirs))
  assert.equal(ours.common.chainId(), theirs.common.chainId())
  assert.equal(ours.common.hardfork(), theirs.common.hardfork())
  assert.deepEqual(ours.serialize(), theirs.serialize())
  assert.deepEqual(ours.hash(), theirs.hash())
  assert.deepEqual(ours.getMessageToSign(), theirs.getMessageToSign())
  assert.equal(ours.getSenderAddress().toString(), theirs.getSenderAddress().toString())
  for (const baseFee of [0n, 7n, GWEI, 5n * GWEI]) {
    if (baseFee <= theirs.maxFeePerGas) assert.equal(ours.getEffectivePriorityFee(baseFee), theirs.getEffectivePriorityFee(baseFee))
    assert.equal(ours.getUpfrontCost(baseFee), theirs.getUpfrontCost(baseFee))
  }
  assert.equal(ours.getIntrinsicGas(), theirs.getIntrinsicGas())
  assert.equal(ours.getDataGas(), theirs.getDataGas())
  for (const capability of [155, 1559, 2718, 2930, 7702]) assert.equal(ours.supports(capability), theirs.supports(capability), `supports ${capability}`)
  assert.deepEqual(ours.toJSON(), theirs.toJSON())
  assert.equal(ours.isSigned(), theirs.isSigned())
}

test('a 1559 call or transfer is made without the constructor, as the constructor makes it', () => {
  const shapes = [
    { nonce: 0, maxFeePerGas: 2n * GWEI, maxPriorityFeePerGas: GWEI, gasLimit: 21000, to, value: 1n },
    { nonce: 7, maxFeePerGas: 3n * GWEI, maxPriorityFeePerGas: 3n * GWEI, gasLimit: 60000, to, data: '0xa9059cbb' + '00'.repeat(12) + '33'.repeat(20) + '00'.repeat(31) + '01' },
    { nonce: 2n ** 40n, maxFeePerGas: 10n ** 30n, maxPriorityFeePerGas: 0n, gasLimit: 1n << 24n, to, value: 2n ** 255n, data: '0x' + 'ab'.repeat(1000) },
  ]
  for (const fields of shapes) {
    const raw = createFeeMarket1559Tx(fields, { common }).sign(pk).serialize()
    const ptx = pooled(raw)
    const ours = transactionOf(ptx, common)
    assert.equal(ours.common, common, 'the chain Common, not a copy')
    assert.ok(ours instanceof FeeMarket1559Tx)
    assertSameTransaction(ours, createTxFromRLP(raw, { common }))
    // the sender and hash came from the pool entry, not from a recovery
    assert.equal(ours.getSenderAddress().toString(), signer)
    assert.equal(bytesToHex(ours.cache.hash), ptx.hash)
  }
})

test('other shapes and types are made by the library, as before', () => {
  const auth = eoaCode7702SignAuthorization({ chainId: '0x600d', address: to, nonce: '0x1' }, pk)
  const txs = [
    createFeeMarket1559Tx({ nonce: 0, maxFeePerGas: 2n * GWEI, maxPriorityFeePerGas: GWEI, gasLimit: 100000, data: '0x6000' }, { common }),
    createFeeMarket1559Tx({ nonce: 0, maxFeePerGas: 2n * GWEI, maxPriorityFeePerGas: GWEI, gasLimit: 30000, to, accessList: [{ address: to, storageKeys: ['0x' + '00'.repeat(32)] }] }, { common }),
    createLegacyTx({ nonce: 0, gasPrice: GWEI, gasLimit: 21000, to, value: 1n }, { common }),
    createAccessList2930Tx({ nonce: 0, gasPrice: GWEI, gasLimit: 21000, to }, { common }),
    createEOACode7702Tx({ nonce: 0, maxFeePerGas: 2n * GWEI, maxPriorityFeePerGas: GWEI, gasLimit: 60000, to, authorizationList: [auth] }, { common }),
  ]
  for (const unsigned of txs) {
    const raw = unsigned.sign(pk).serialize()
    const ours = transactionOf(pooled(raw), common)
    assert.notEqual(ours.common, common, `type ${unsigned.type}: the library's own copy`)
    assertSameTransaction(ours, createTxFromRLP(raw, { common }))
  }
})

/** 1559 bytes with any field, valid or not: [chainId, nonce, tip, fee cap, gas, to, value, data, access list, yParity, r, s]. */
function raw1559(over = {}) {
  const f = { chainId: 24589n, nonce: 1n, tip: GWEI, feeCap: 2n * GWEI, gas: 21000n, value: 0n, v: 0n, r: 1n, s: 2n, ...over }
  const q = (n) => bigIntToUnpaddedBytes(n)
  return concatBytes(Uint8Array.of(2), RLP.encode([q(f.chainId), q(f.nonce), q(f.tip), q(f.feeCap), q(f.gas), hexToBytes(to), q(f.value), new Uint8Array(), [], q(f.v), q(f.r), q(f.s)]))
}

test("a check the constructor would fail leaves the object to the library, which throws its error", () => {
  const cases = {
    'high s': { s: N / 2n + 1n },
    'tip above the fee cap': { tip: 3n * GWEI },
    'another chain': { chainId: 1n },
    'y-parity 2': { v: 2n },
    'gas above EIP-7825': { gas: (1n << 24n) + 1n },
    'nonce at 2^64-1': { nonce: 2n ** 64n - 1n },
    'fee over 2^256': { feeCap: 2n ** 255n, tip: 1n, gas: 4n },
  }
  for (const [name, over] of Object.entries(cases)) {
    const raw = raw1559(over)
    const ptx = fromWire({ raw, senderPubKey: new Uint8Array(64), hash: '0x' + '00'.repeat(32), sender: signer, arrivedAt: 0 })
    let expected
    assert.throws(() => createTxFromRLP(raw, { common }), (err) => ((expected = err.message), true), name)
    assert.throws(() => transactionOf(ptx, common), { message: expected }, name)
  }
  // and the same bytes with every field valid take the direct path
  const ok = transactionOf(fromWire({ raw: raw1559(), senderPubKey: new Uint8Array(64), hash: '0x' + '00'.repeat(32), sender: signer, arrivedAt: 0 }), common)
  assert.equal(ok.common, common)
})
