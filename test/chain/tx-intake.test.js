import { test, before } from 'node:test'
import assert from 'node:assert/strict'
import { RLP } from '@ethereumjs/rlp'
import { createTx, createAccessList2930Tx, createFeeMarket1559Tx, createEOACode7702Tx } from '@ethereumjs/tx'
import {
  bigIntToUnpaddedBytes,
  bytesToHex,
  concatBytes,
  eoaCode7702SignAuthorization,
  hexToBytes,
  privateToAddress,
} from '@ethereumjs/util'
import { loadFastCrypto } from '../../dist/evm/crypto.js'
import { createChainCommon } from '../../dist/evm/common.js'
import { latestForkConfig } from '../../dist/evm/geth-genesis.js'
import { admitRawTransaction, decodeRawTransaction, formatEther2 } from '../../dist/chain/tx-intake.js'
import { fromWire, toWire } from '../../dist/chain/pooled-tx.js'
import { transactionOf } from '../../dist/chain/tx-object.js'

const CHAIN_ID = 24589n
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n
const GWEI = 1_000_000_000n
const pk = hexToBytes('0x' + '42'.repeat(32))
const signer = bytesToHex(privateToAddress(pk))
const to = '0x' + '22'.repeat(20)

let fc
let common
let ctx

function chainCommon(chainId, customCrypto) {
  return createChainCommon({ config: latestForkConfig(chainId), gasLimit: '0x1c9c380', alloc: {} }, customCrypto)
}

before(async () => {
  fc = await loadFastCrypto()
  common = chainCommon(24589, fc.customCrypto)
  ctx = {
    common,
    chainId: CHAIN_ID,
    blockGasLimit: 30_000_000n,
    txGasCap: 1n << 24n,
    maxTxSize: 131072,
    txFeeCapWei: 10n ** 18n,
    allowUnprotectedTxs: false,
  }
})

const hex = (bytes) => bytesToHex(bytes)
const b = (v) => (typeof v === 'bigint' ? bigIntToUnpaddedBytes(v) : v)

/** Hand-signed typed tx, for field values @ethereumjs refuses to build. fields exclude the signature. */
function signTyped(type, fields, { key = pk, mutateSig } = {}) {
  const unsigned = fields.map(b)
  const msg = fc.keccak256(concatBytes(Uint8Array.of(type), RLP.encode(unsigned)))
  const { signature, recid } = fc.secp256k1.ecdsaSign(msg, key)
  let sig = { v: BigInt(recid), r: BigInt(bytesToHex(signature.subarray(0, 32))), s: BigInt(bytesToHex(signature.subarray(32))) }
  if (mutateSig) sig = mutateSig(sig)
  return hex(concatBytes(Uint8Array.of(type), RLP.encode([...unsigned, b(sig.v), b(sig.r), b(sig.s)])))
}

/** Hand-signed legacy tx; chainId undefined = pre-EIP-155 (v = 27/28). */
function signLegacy(fields, chainId) {
  const unsigned = fields.map(b)
  const preimage = chainId === undefined ? unsigned : [...unsigned, b(chainId), b(0n), b(0n)]
  const msg = fc.keccak256(RLP.encode(preimage))
  const { signature, recid } = fc.secp256k1.ecdsaSign(msg, pk)
  const v = chainId === undefined ? 27n + BigInt(recid) : chainId * 2n + 35n + BigInt(recid)
  return hex(RLP.encode([...unsigned, b(v), signature.subarray(0, 32), signature.subarray(32)]))
}

// 1559 field layout: chainId, nonce, tip, maxFee, gas, to, value, data, accessList
const f1559 = (over = {}) => {
  const f = { chainId: CHAIN_ID, nonce: 0n, tip: GWEI, maxFee: 2n * GWEI, gas: 21000n, to: hexToBytes(to), value: 1n, data: new Uint8Array(), ...over }
  return [f.chainId, f.nonce, f.tip, f.maxFee, f.gas, f.to, f.value, f.data, []]
}

function rejects(raw, message, code = -32000, context = ctx) {
  assert.throws(
    () => decodeRawTransaction(raw, context),
    (err) => {
      assert.equal(err.name, 'RpcError')
      assert.equal(err.message, message)
      assert.equal(err.code, code)
      return true
    },
  )
}

test('accepts a legacy EIP-155 tx and recovers its signer', () => {
  const tx = createTx({ nonce: 3, gasPrice: GWEI, gasLimit: 21000, to, value: 5 }, { common }).sign(pk)
  assert.ok(tx.v === CHAIN_ID * 2n + 35n || tx.v === CHAIN_ID * 2n + 36n)
  const ptx = decodeRawTransaction(hex(tx.serialize()), ctx)
  assert.equal(ptx.sender, signer)
  assert.equal(ptx.hash, hex(tx.hash()))
  assert.equal(ptx.type, 0)
  assert.equal(ptx.nonce, 3n)
  assert.equal(ptx.maxFeePerGas, GWEI)
  assert.equal(ptx.maxPriorityFeePerGas, GWEI)
  assert.equal(ptx.cost, 21000n * GWEI + 5n)
  assert.equal(ptx.size, tx.serialize().length)
  assert.equal(ptx.senderPubKey.length, 64)
  assert.deepEqual([bytesToHex(ptx.to), ptx.dataLength, ptx.accessListLength], [to, 0, 0])
  assert.equal(transactionOf(ptx, common).getSenderAddress().toString(), signer)
})

test('accepts an EIP-2930 tx with an access list', () => {
  const tx = createAccessList2930Tx(
    { nonce: 0, gasPrice: GWEI, gasLimit: 30000, to, accessList: [{ address: to, storageKeys: ['0x' + '00'.repeat(32)] }] },
    { common },
  ).sign(pk)
  const ptx = decodeRawTransaction(hex(tx.serialize()), ctx)
  assert.equal(ptx.type, 1)
  assert.equal(ptx.sender, signer)
  assert.equal(ptx.maxFeePerGas, GWEI)
  // the hash of the bytes as received, and the tx object answers the same
  assert.equal(ptx.hash, hex(tx.hash()))
  assert.equal(hex(transactionOf(ptx, common).hash()), hex(tx.hash()))
  assert.equal(ptx.accessListLength, 1)
})

test('accepts an EIP-1559 tx', () => {
  const tx = createFeeMarket1559Tx(
    { nonce: 7, maxFeePerGas: 3n * GWEI, maxPriorityFeePerGas: GWEI, gasLimit: 50000, to, value: 10n, data: '0x1234' },
    { common },
  ).sign(pk)
  const raw = tx.serialize()
  const ptx = decodeRawTransaction(hex(raw), ctx)
  assert.equal(ptx.type, 2)
  assert.equal(ptx.sender, signer)
  assert.equal(ptx.hash, hex(tx.hash()))
  assert.deepEqual(ptx.raw, raw)
  assert.equal(ptx.maxFeePerGas, 3n * GWEI)
  assert.equal(ptx.maxPriorityFeePerGas, GWEI)
  assert.equal(ptx.gasLimit, 50000n)
  assert.equal(ptx.value, 10n)
  assert.equal(ptx.cost, 50000n * 3n * GWEI + 10n)
  assert.equal(ptx.dataLength, 2)
})

test('a contract creation has no recipient in the pool', () => {
  const tx = createFeeMarket1559Tx({ nonce: 0, maxFeePerGas: 2n * GWEI, maxPriorityFeePerGas: GWEI, gasLimit: 100000, data: '0x6000' }, { common }).sign(pk)
  const ptx = decodeRawTransaction(hex(tx.serialize()), ctx)
  assert.equal(ptx.to, undefined)
  assert.equal(transactionOf(ptx, common).to, undefined)
})

test('accepts an EIP-7702 tx', () => {
  const auth = eoaCode7702SignAuthorization({ chainId: '0x600d', address: to, nonce: '0x1' }, pk)
  const tx = createEOACode7702Tx(
    { nonce: 0, maxFeePerGas: 2n * GWEI, maxPriorityFeePerGas: GWEI, gasLimit: 100000, to, authorizationList: [auth] },
    { common },
  ).sign(pk)
  const ptx = decodeRawTransaction(hex(tx.serialize()), ctx)
  assert.equal(ptx.type, 4)
  assert.equal(ptx.sender, signer)
})

test('recovers the sender exactly once, and the wire form never recovers again', async () => {
  let calls = 0
  const counting = {
    ...fc.customCrypto,
    ecrecover: (...args) => {
      calls++
      return fc.customCrypto.ecrecover(...args)
    },
  }
  const countingCommon = chainCommon(24589, counting)
  const tx = createFeeMarket1559Tx({ nonce: 0, maxFeePerGas: 2n * GWEI, maxPriorityFeePerGas: GWEI, gasLimit: 21000, to }, { common }).sign(pk)
  const ptx = decodeRawTransaction(hex(tx.serialize()), { ...ctx, common: countingCommon })
  assert.equal(calls, 1)
  const pooledTx = transactionOf(ptx, countingCommon)
  assert.equal(pooledTx.getSenderAddress().toString(), signer)
  pooledTx.verifySignature()
  assert.equal(calls, 1)

  const wire = structuredClone(toWire(ptx))
  const back = fromWire(wire)
  assert.deepEqual(back, ptx)
  const backTx = transactionOf(back, countingCommon)
  assert.equal(backTx.getSenderAddress().toString(), signer)
  assert.deepEqual(backTx.getSenderPublicKey(), ptx.senderPubKey)
  assert.equal(back.hash, ptx.hash)
  assert.equal(bytesToHex(backTx.hash()), ptx.hash)
  assert.equal(back.sender, signer)
  assert.equal(back.cost, ptx.cost)
  assert.equal(back.arrivedAt, ptx.arrivedAt)
  assert.equal(calls, 1)
  // runTx's getSenderAddress() answers the sender known since intake (patches/@ethereumjs+tx), not a
  // keccak of the public key, and hands out a fresh Address each time
  assert.equal(bytesToHex(backTx.cache.keelSenderAddress), signer)
  assert.equal(backTx.cache.keelSenderAddress.buffer.byteLength, 20, 'its own bytes, not a view into a shared slab')
  assert.equal(backTx.cache.hash.buffer.byteLength, 32)
  backTx.getSenderAddress().bytes.fill(0)
  assert.equal(backTx.getSenderAddress().toString(), signer)
})

test('what crosses to the producer carries only its own bytes, not a pool slab', () => {
  // Buffer.from(hex) returns views into a shared 8 KiB pool; posting one copies the whole slab
  const tx = createFeeMarket1559Tx({ nonce: 1, maxFeePerGas: 2n * GWEI, maxPriorityFeePerGas: GWEI, gasLimit: 21000, to, value: 1n }, { common }).sign(pk)
  const ptx = decodeRawTransaction(hex(tx.serialize()), ctx)
  const wire = toWire(ptx)
  for (const [field, bytes] of [['raw', wire.raw], ['senderPubKey', wire.senderPubKey]]) {
    assert.ok(bytes.buffer.byteLength <= bytes.length + 1, `${field}: ${bytes.length} bytes over a ${bytes.buffer.byteLength}-byte buffer`)
  }
  const cloned = structuredClone(wire)
  assert.deepEqual(cloned.raw, tx.serialize())
  assert.equal(cloned.raw.buffer.byteLength, tx.serialize().length)
})

test('malformed hex is a parameter error, as in geth', () => {
  const tail = 'into Go value of type hexutil.Bytes'
  rejects('f86b', `invalid argument 0: json: cannot unmarshal hex string without 0x prefix ${tail}`, -32602)
  rejects('0xabc', `invalid argument 0: json: cannot unmarshal hex string of odd length ${tail}`, -32602)
  rejects('0xzz', `invalid argument 0: json: cannot unmarshal invalid hex string ${tail}`, -32602)
})

test('undecodable bytes are "invalid transaction" errors', () => {
  assert.throws(() => decodeRawTransaction('0x', ctx), (e) => e.code === -32000 && /^invalid transaction: /.test(e.message))
  assert.throws(() => decodeRawTransaction('0x02', ctx), (e) => e.code === -32000 && /^invalid transaction: /.test(e.message))
  assert.throws(() => decodeRawTransaction('0xf8ff00', ctx), (e) => e.code === -32000 && /^invalid transaction: rlp/.test(e.message))
  // a list with the wrong number of fields
  assert.throws(
    () => decodeRawTransaction(hex(concatBytes(Uint8Array.of(2), RLP.encode([b(1n), b(2n)]))), ctx),
    (e) => e.code === -32000 && /^invalid transaction: /.test(e.message),
  )
})

test('blob and unknown tx types are rejected', () => {
  rejects(hex(concatBytes(Uint8Array.of(3), RLP.encode([]))), 'transaction type not supported: tx type 3 not supported by this pool')
  rejects(hex(concatBytes(Uint8Array.of(5), RLP.encode([]))), 'transaction type not supported')
})

test('legacy tx without EIP-155 protection is refused over RPC', () => {
  const raw = signLegacy([0n, GWEI, 21000n, hexToBytes(to), 1n, new Uint8Array()], undefined)
  assert.equal(RLP.decode(hexToBytes(raw))[6][0] === 27 || RLP.decode(hexToBytes(raw))[6][0] === 28, true)
  rejects(raw, 'only replay-protected (EIP-155) transactions allowed over RPC')
})

test('with --rpc-allow-unprotected-txs a legacy tx without EIP-155 protection is taken, its signer recovered from the six fields', () => {
  const allowing = { ...ctx, allowUnprotectedTxs: true }
  for (let nonce = 0n; nonce < 4n; nonce++) {
    // v is 27 or 28 by the recovery id: four nonces give both with near certainty, and each must recover
    const raw = signLegacy([nonce, GWEI, 21000n, hexToBytes(to), 1n, new Uint8Array()], undefined)
    const ptx = decodeRawTransaction(raw, allowing)
    assert.equal(ptx.sender, signer)
    assert.equal(ptx.type, 0)
    assert.equal(ptx.nonce, nonce)
    assert.equal(ptx.hash, hex(fc.keccak256(hexToBytes(raw))))
    const tx = transactionOf(ptx, common)
    assert.equal(tx.getSenderAddress().toString(), signer)
    assert.equal(tx.supports(155), false)
  }
  // any v but 27/28 still names a chain, as geth's deriveChainId reads it (29: (29 - 35) / 2)
  const unsigned = [0n, GWEI, 21000n, hexToBytes(to), 1n, new Uint8Array()].map(b)
  rejects(hex(RLP.encode([...unsigned, b(29n), b(1n), b(1n)])), 'invalid sender: invalid chain id for signer: have -3 want 24589', -32000, allowing)
})

test('a tx signed for another chain is an invalid sender', () => {
  const chain1 = chainCommon(1, fc.customCrypto)
  const typed = createFeeMarket1559Tx({ nonce: 0, maxFeePerGas: 2n * GWEI, maxPriorityFeePerGas: GWEI, gasLimit: 21000, to }, { common: chain1 }).sign(pk)
  rejects(hex(typed.serialize()), 'invalid sender: invalid chain id for signer: have 1 want 24589')
  const legacy = createTx({ nonce: 0, gasPrice: GWEI, gasLimit: 21000, to }, { common: chain1 }).sign(pk)
  rejects(hex(legacy.serialize()), 'invalid sender: invalid chain id for signer: have 1 want 24589')
})

test('bad signatures: high s, zero r, unrecoverable r', () => {
  rejects(
    signTyped(2, f1559(), { mutateSig: (s) => ({ v: s.v ^ 1n, r: s.r, s: N - s.s }) }),
    'invalid sender: invalid transaction v, r, s values',
  )
  rejects(signTyped(2, f1559(), { mutateSig: (s) => ({ ...s, r: 0n }) }), 'invalid sender: invalid transaction v, r, s values')
  rejects(signTyped(2, f1559(), { mutateSig: (s) => ({ ...s, v: 2n }) }), 'invalid sender: invalid transaction v, r, s values')
  // an r that is not the x coordinate of any curve point cannot be recovered
  let badR = 1n
  for (;; badR++) {
    const sig = new Uint8Array(64)
    sig.set(bigIntToUnpaddedBytes(badR), 32 - bigIntToUnpaddedBytes(badR).length)
    sig[63] = 1
    try {
      fc.secp256k1.ecdsaRecover(sig, 0, new Uint8Array(32).fill(7), false)
    } catch {
      break
    }
  }
  rejects(signTyped(2, f1559(), { mutateSig: (s) => ({ ...s, r: badR }) }), 'invalid sender: recovery failed')
})

test('gas limit above the block gas limit', () => {
  const tx = createFeeMarket1559Tx({ nonce: 0, maxFeePerGas: 2n * GWEI, maxPriorityFeePerGas: GWEI, gasLimit: 2_000_000, to }, { common }).sign(pk)
  rejects(hex(tx.serialize()), 'exceeds block gas limit', -32000, { ...ctx, blockGasLimit: 1_000_000n })
})

test('gas limit above the EIP-7825 cap', () => {
  rejects(
    signTyped(2, f1559({ gas: (1n << 24n) + 1n })),
    'transaction gas limit too high (cap: 16777216, tx: 16777217)',
    -32000,
    { ...ctx, blockGasLimit: 60_000_000n },
  )
})

test('intrinsic gas: plain, calldata, access list, create, authorization list', () => {
  rejects(signTyped(2, f1559({ gas: 20999n })), 'intrinsic gas too low: gas 20999, minimum needed 21000')
  rejects(
    signTyped(2, f1559({ data: new Uint8Array(10).fill(1) })),
    'intrinsic gas too low: gas 21000, minimum needed 21160',
  )
  const al = [[hexToBytes(to), [new Uint8Array(32)]]]
  const fields = f1559({ gas: 25299n })
  fields[8] = al
  rejects(signTyped(2, fields), 'intrinsic gas too low: gas 25299, minimum needed 25300')
  rejects(
    signTyped(2, f1559({ to: new Uint8Array(), data: Uint8Array.of(1, 2), gas: 53000n })),
    'intrinsic gas too low: gas 53000, minimum needed 53034',
  )
  const auth = eoaCode7702SignAuthorization({ chainId: '0x600d', address: to, nonce: '0x0' }, pk)
  rejects(signTyped(4, [...f1559({ gas: 45999n }), [auth]]), 'intrinsic gas too low: gas 45999, minimum needed 46000')
})

test('EIP-7623 calldata floor', () => {
  // 100 non-zero bytes: intrinsic 22600, floor 21000 + 10 * 400 = 25000
  rejects(
    signTyped(2, f1559({ data: new Uint8Array(100).fill(1), gas: 23000n })),
    'insufficient gas for floor data gas cost: gas 23000, minimum needed 25000',
  )
  assert.equal(decodeRawTransaction(signTyped(2, f1559({ data: new Uint8Array(100).fill(1), gas: 25000n })), ctx).gasLimit, 25000n)
})

test('tip above fee cap', () => {
  rejects(signTyped(2, f1559({ tip: 3n * GWEI, maxFee: 2n * GWEI })), 'max priority fee per gas higher than max fee per gas')
})

test('fee cap of eth_sendRawTransaction', () => {
  rejects(signTyped(2, f1559({ maxFee: 10n ** 14n })), 'tx fee (2.10 ether) exceeds the configured cap (1.00 ether)')
  // no cap configured
  assert.equal(decodeRawTransaction(signTyped(2, f1559({ maxFee: 10n ** 14n })), { ...ctx, txFeeCapWei: 0n }).maxFeePerGas, 10n ** 14n)
  assert.equal(formatEther2(0n), '0.00')
  assert.equal(formatEther2(1_234_999_999_999_999_999n), '1.23')
  assert.equal(formatEther2(1_235_000_000_000_000_001n), '1.24')
  assert.equal(formatEther2(1_125_000_000_000_000_000n), '1.12') // half to even, like Go
  assert.equal(formatEther2(1_135_000_000_000_000_000n), '1.14')
})

test('oversized data and oversized init code', () => {
  const raw = signTyped(2, f1559({ data: new Uint8Array(300).fill(1), gas: 100000n }))
  rejects(raw, `oversized data: transaction size ${(raw.length - 2) / 2}, limit 200`, -32000, { ...ctx, maxTxSize: 200 })
  rejects(
    signTyped(2, f1559({ to: new Uint8Array(), data: new Uint8Array(49153).fill(1), gas: 10_000_000n })),
    'max initcode size exceeded: code size 49153, limit 49152',
  )
})

test('set-code tx without authorizations', () => {
  rejects(signTyped(4, [...f1559({ gas: 21000n }), []]), 'set code tx must have at least one authorization tuple')
})

test('calls and transfers admitted without a transaction object answer as @ethereumjs reads them', () => {
  const zeroAndNonZero = Uint8Array.of(0xa9, 0x05, 0x9c, 0xbb, 0, 0, 0, 0, 1, 2)
  const al = [{ address: to, storageKeys: ['0x' + '00'.repeat(32)] }]
  const txs = [
    // taken from the fields: legacy EIP-155, EIP-2930 and EIP-1559 without an access list, with calldata
    createTx({ nonce: 9, gasPrice: GWEI, gasLimit: 21000, to, value: 5 }, { common }),
    createTx({ nonce: 2 ** 40, gasPrice: 7n * GWEI, gasLimit: 60000, to, data: zeroAndNonZero }, { common }),
    createAccessList2930Tx({ nonce: 1, gasPrice: GWEI, gasLimit: 30000, to, data: zeroAndNonZero }, { common }),
    createFeeMarket1559Tx({ nonce: 0, maxFeePerGas: 2n * GWEI, maxPriorityFeePerGas: 0n, gasLimit: 21000, to }, { common }),
    createFeeMarket1559Tx({ nonce: 3, maxFeePerGas: 2n * GWEI, maxPriorityFeePerGas: GWEI, gasLimit: 90000, to, value: 10n ** 18n, data: zeroAndNonZero }, { common }),
    // built as @ethereumjs transaction objects: access lists, contract creation
    createAccessList2930Tx({ nonce: 1, gasPrice: GWEI, gasLimit: 40000, to, accessList: al }, { common }),
    createFeeMarket1559Tx({ nonce: 4, maxFeePerGas: 2n * GWEI, maxPriorityFeePerGas: GWEI, gasLimit: 40000, to, accessList: al }, { common }),
    createFeeMarket1559Tx({ nonce: 5, maxFeePerGas: 2n * GWEI, maxPriorityFeePerGas: GWEI, gasLimit: 60000, data: zeroAndNonZero }, { common }),
  ]
  const signed = txs.map((tx) => tx.sign(pk))
  // signatures whose r or s is shorter than 32 bytes (one in ~128): their RLP drops the leading zeros
  let short = 0
  for (let k = 1; short < 2 && k < 5000; k++) {
    const tx = createFeeMarket1559Tx({ nonce: k, maxFeePerGas: 2n * GWEI, maxPriorityFeePerGas: GWEI, gasLimit: 21000, to, value: BigInt(k) }, { common }).sign(pk)
    if (tx.r < 1n << 248n || tx.s < 1n << 248n) {
      short++
      signed.push(tx)
    }
  }
  assert.equal(short, 2)
  for (const tx of signed) {
    const wire = admitRawTransaction(hex(tx.serialize()), ctx)
    const label = `type ${tx.type} nonce ${tx.nonce}`
    assert.equal(wire.sender, signer, label)
    assert.deepEqual(wire.senderPubKey, tx.getSenderPublicKey(), label)
    assert.equal(wire.hash, hex(tx.hash()), label)
    assert.deepEqual(wire.raw, tx.serialize(), label)
    assert.equal(typeof wire.arrivedAt, 'number')
    // the least gas limit: as the object computes it, accepted, and one less refused with its numbers
    const minimum = tx.getMinimumGasLimit()
    const intrinsic = tx.getIntrinsicGas()
    const resigned = (gasLimit) => {
      const json = { ...tx.toJSON(), gasLimit, v: undefined, r: undefined, s: undefined }
      return hex(createTx(json, { common }).sign(pk).serialize())
    }
    assert.equal(admitRawTransaction(resigned(minimum), ctx).sender, signer, label)
    const message = minimum > intrinsic
      ? `insufficient gas for floor data gas cost: gas ${minimum - 1n}, minimum needed ${minimum}`
      : `intrinsic gas too low: gas ${minimum - 1n}, minimum needed ${intrinsic}`
    rejects(resigned(minimum - 1n), message)
  }
})

test('a fee cap whose total with the gas limit overflows 256 bits is refused with @ethereumjs\'s wording', () => {
  const noCap = { ...ctx, txFeeCapWei: 0n }
  rejects(
    signTyped(2, f1559({ tip: 1n, maxFee: 1n << 255n })),
    'invalid transaction: gasLimit * maxFeePerGas cannot exceed MAX_INTEGER (2^256-1)',
    -32000,
    noCap,
  )
  assert.equal(admitRawTransaction(signTyped(2, f1559({ tip: 1n, maxFee: (1n << 256n) / 21000n - 1n })), noCap).sender, signer)
})
