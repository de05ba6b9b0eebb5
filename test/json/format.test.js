import { before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createBlock } from '@ethereumjs/block'
import { createAccessList2930Tx, createEOACode7702Tx, createFeeMarket1559Tx, createLegacyTx } from '@ethereumjs/tx'
import { bigIntToUnpaddedBytes, createAddressFromPrivateKey, eoaCode7702SignAuthorization, hexToBytes as utilHexToBytes } from '@ethereumjs/util'
import { Transaction as EthersTransaction, keccak256 as ethersKeccak } from 'ethers'
import { RLP } from '@ethereumjs/rlp'
import { loadFastCrypto } from '../../dist/evm/crypto.js'
import { createChainCommon } from '../../dist/evm/common.js'
import { latestForkConfig } from '../../dist/evm/geth-genesis.js'
import { formatBlock } from '../../dist/json/block.js'
import { formatLog } from '../../dist/json/log.js'
import { receiptText } from '../../dist/json/receipt.js'
import { encodeStoredReceipt } from '../../dist/chain/receipts.js'
import { formatsFromFields, formatTransaction, formatTransactionFields } from '../../dist/json/transaction.js'
import { readReceiptTxFields, readTxFields } from '../../dist/chain/tx-fields.js'
import { bytesToHex, hexToBytes, quantity } from '../../dist/util/hex.js'
import { validateMethodResult, validateSchema } from '../helpers/schema.js'

const KEY = utilHexToBytes('0x' + '11'.repeat(32))
const KEY2 = utilHexToBytes('0x' + '22'.repeat(32))
const TO = '0x' + '3c'.repeat(20)
const GWEI = 10n ** 9n
const BASE_FEE = 7n
const TIMESTAMP = 1_700_000_000n

// geth's output orders (Go structs: declaration order; Go maps: sorted keys)
const TX_ORDER = [
  'blockHash', 'blockNumber', 'blockTimestamp', 'from', 'gas', 'gasPrice', 'maxFeePerGas', 'maxPriorityFeePerGas',
  'maxFeePerBlobGas', 'hash', 'input', 'nonce', 'to', 'transactionIndex', 'value', 'type', 'accessList', 'chainId',
  'blobVersionedHashes', 'authorizationList', 'v', 'r', 's', 'yParity',
]
const LOG_ORDER = [
  'address', 'topics', 'data', 'blockNumber', 'transactionHash', 'transactionIndex', 'blockHash', 'blockTimestamp',
  'logIndex', 'removed',
]

function assertOrder(obj, order) {
  const keys = Object.keys(obj)
  assert.deepEqual(keys, order.filter((k) => k in obj), 'field order')
  assert.deepEqual(keys.filter((k) => !order.includes(k)), [], 'unexpected fields')
}

const sortedKeys = (obj) => [...Object.keys(obj)].sort()

/** The price per gas a transaction object pays at `baseFee` (undefined: before EIP-1559, the fee cap). */
function paidPrice(tx, baseFee) {
  if (tx.type === 0 || tx.type === 1) return tx.gasPrice
  if (baseFee === undefined) return tx.maxFeePerGas
  const withTip = baseFee + tx.maxPriorityFeePerGas
  return withTip < tx.maxFeePerGas ? withTip : tx.maxFeePerGas
}

/** What the chain hands receiptText for a transaction: the fields read from its bytes, its hash, the chain's rules. */
const receiptTx = (tx) => ({ tx: readTxFields(tx.serialize()), transactionHash: bytesToHex(tx.hash()), common })

/** A receipt's JSON as the node writes it, from the receipt as stored (its own item of the block's receipts). */
const receiptJson = (args) => JSON.parse(receiptText({ ...args, receipt: encodeStoredReceipt(args.receipt) }))

/** Plain JSON (what the wire carries): also proves there are no bigints or Uint8Arrays left. */
const wire = (v) => JSON.parse(JSON.stringify(v))

let common, sender, txs, block, blockHash

before(async () => {
  const { customCrypto } = await loadFastCrypto()
  common = createChainCommon({ config: latestForkConfig(24589), gasLimit: '0x3938700', alloc: {} }, customCrypto)
  sender = createAddressFromPrivateKey(KEY).toString()
  const authorization = eoaCode7702SignAuthorization({ chainId: '0x600d', address: TO, nonce: '0x4' }, KEY2)
  txs = [
    createLegacyTx({ nonce: 0, gasPrice: GWEI, gasLimit: 21000, to: TO, value: 1 }, { common }).sign(KEY),
    createAccessList2930Tx(
      { nonce: 1, gasPrice: 2n * GWEI, gasLimit: 30000, to: TO, accessList: [{ address: TO, storageKeys: ['0x' + '00'.repeat(31) + '01'] }] },
      { common },
    ).sign(KEY),
    // contract creation
    createFeeMarket1559Tx({ nonce: 2, maxFeePerGas: 3n * GWEI, maxPriorityFeePerGas: GWEI, gasLimit: 80000, data: '0x600160005500' }, { common }).sign(KEY),
    createEOACode7702Tx(
      { nonce: 3, maxFeePerGas: 3n * GWEI, maxPriorityFeePerGas: 2n, gasLimit: 60000, to: TO, authorizationList: [authorization] },
      { common },
    ).sign(KEY),
  ]
  block = createBlock(
    {
      header: { number: 5n, gasLimit: 60_000_000n, timestamp: TIMESTAMP, baseFeePerGas: BASE_FEE, coinbase: TO, parentHash: new Uint8Array(32).fill(3) },
      transactions: txs,
      withdrawals: [{ index: 1n, validatorIndex: 2n, address: TO, amount: 3n }],
    },
    { common },
  )
  blockHash = bytesToHex(block.hash())
})

describe('formatBlock', () => {
  test('hashes only: schema, values, geth key order', () => {
    const size = block.serialize().length
    const out = wire(formatBlock(block, { fullTransactions: false, senders: [], size }))
    validateSchema('Block', out)
    validateMethodResult('eth_getBlockByNumber', out)
    validateMethodResult('eth_getBlockByHash', out)
    assert.deepEqual(Object.keys(out), sortedKeys(out))
    assert.equal(out.hash, blockHash)
    assert.equal(out.number, '0x5')
    assert.equal(out.timestamp, quantity(TIMESTAMP))
    assert.equal(out.baseFeePerGas, '0x7')
    assert.equal(out.size, quantity(size))
    assert.equal(out.difficulty, '0x0')
    assert.equal(out.nonce, '0x0000000000000000')
    assert.equal(out.miner, TO)
    assert.equal(out.blobGasUsed, '0x0')
    assert.equal(out.excessBlobGas, '0x0')
    assert.match(out.parentBeaconBlockRoot, /^0x[0-9a-f]{64}$/)
    assert.match(out.requestsHash, /^0x[0-9a-f]{64}$/)
    assert.match(out.withdrawalsRoot, /^0x[0-9a-f]{64}$/)
    assert.equal(out.sha3Uncles, '0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347')
    assert.deepEqual(out.uncles, [])
    assert.deepEqual(out.withdrawals, [{ index: '0x1', validatorIndex: '0x2', address: TO, amount: '0x3' }])
    assert.deepEqual(out.transactions, txs.map((tx) => bytesToHex(tx.hash())))
    assert.equal('totalDifficulty' in out, false)
  })

  test('full transactions', () => {
    const senders = txs.map(() => sender)
    const out = wire(formatBlock(block, { fullTransactions: true, senders, size: 1234 }))
    validateSchema('Block', out)
    validateMethodResult('eth_getBlockByNumber', out)
    assert.equal(out.transactions.length, txs.length)
    out.transactions.forEach((t, i) => {
      validateSchema('TransactionInfo', t)
      assert.deepEqual(
        t,
        wire(formatTransaction(txs[i], sender, { blockHash, blockNumber: 5n, blockTimestamp: TIMESTAMP, index: i, baseFee: BASE_FEE })),
      )
    })
    assert.throws(() => formatBlock(block, { fullTransactions: true, senders: [], size: 1 }), /no sender/)
  })

  test('an empty block: empty transactions and withdrawals', () => {
    const empty = createBlock({ header: { number: 1n, baseFeePerGas: 1n, timestamp: 1n } }, { common })
    const out = wire(formatBlock(empty, { fullTransactions: false, senders: [], size: 1 }))
    validateSchema('Block', out)
    assert.deepEqual(out.transactions, [])
    assert.deepEqual(out.withdrawals, [])
  })
})

describe('formatTransaction', () => {
  const where = (index, baseFee = BASE_FEE) => ({ blockHash, blockNumber: 5n, blockTimestamp: TIMESTAMP, index, baseFee })

  test('every type matches the schema, geth order, and an independent decoding (ethers)', () => {
    txs.forEach((tx, i) => {
      const out = wire(formatTransaction(tx, sender, where(i)))
      validateSchema('TransactionInfo', out)
      assertOrder(out, TX_ORDER)
      const ref = EthersTransaction.from(bytesToHex(tx.serialize()))
      assert.equal(out.hash, ref.hash)
      assert.equal(out.from, ref.from.toLowerCase())
      assert.equal(out.type, quantity(ref.type))
      assert.equal(out.nonce, quantity(ref.nonce))
      assert.equal(out.gas, quantity(ref.gasLimit))
      assert.equal(out.to, ref.to === null ? null : ref.to.toLowerCase())
      assert.equal(out.value, quantity(ref.value))
      assert.equal(out.input, ref.data)
      assert.equal(out.chainId, quantity(ref.chainId))
      assert.equal(out.r, quantity(BigInt(ref.signature.r)))
      assert.equal(out.s, quantity(BigInt(ref.signature.s)))
      assert.equal(out.blockHash, blockHash)
      assert.equal(out.blockNumber, '0x5')
      assert.equal(out.blockTimestamp, quantity(TIMESTAMP))
      assert.equal(out.transactionIndex, quantity(i))
      if (ref.type === 0) {
        assert.equal(out.v, quantity(ref.signature.networkV))
        assert.equal('yParity' in out, false)
        assert.equal(out.gasPrice, quantity(ref.gasPrice))
      } else {
        assert.equal(out.yParity, quantity(ref.signature.yParity))
        assert.equal(out.v, out.yParity)
        assert.deepEqual(
          out.accessList,
          ref.accessList.map((e) => ({ address: e.address.toLowerCase(), storageKeys: e.storageKeys })),
        )
      }
      if (ref.type === 4) {
        assert.deepEqual(
          out.authorizationList,
          ref.authorizationList.map((a) => ({
            chainId: quantity(a.chainId),
            address: a.address.toLowerCase(),
            nonce: quantity(a.nonce),
            yParity: quantity(a.signature.yParity),
            r: quantity(BigInt(a.signature.r)),
            s: quantity(BigInt(a.signature.s)),
          })),
        )
      }
    })
  })

  test('from the fields the bytes hold: the same JSON as from the transaction object', () => {
    const plain = [
      txs[0],
      // unprotected legacy (v 27/28: no chain id), an EIP-2930 one with an empty access list, an EIP-1559 call
      createLegacyTx({ nonce: 7, gasPrice: GWEI, gasLimit: 21000, to: TO, value: 10n ** 18n }).sign(KEY),
      createAccessList2930Tx({ nonce: 8, gasPrice: 2n * GWEI, gasLimit: 30000, to: TO, value: 3, accessList: [] }, { common }).sign(KEY),
      txs[2],
      createFeeMarket1559Tx({ nonce: 9, maxFeePerGas: 3n * GWEI, maxPriorityFeePerGas: 5n, gasLimit: 50000, to: TO, value: 1, data: '0xa9059cbb' }, { common }).sign(KEY),
    ]
    for (const tx of plain) {
      const fields = readTxFields(tx.serialize())
      assert.equal(formatsFromFields(fields), true, `type ${tx.type}`)
      for (const at of [where(3, 7n), where(0, undefined), null]) {
        const out = formatTransactionFields(fields, bytesToHex(tx.hash()), sender, at)
        assert.deepEqual(wire(out), wire(formatTransaction(tx, sender, at)))
        assertOrder(out, TX_ORDER)
      }
    }
    // lists only the transaction object decodes: an access list, an authorization list
    for (const tx of [txs[1], txs[3]]) assert.equal(formatsFromFields(readTxFields(tx.serialize())), false, `type ${tx.type}`)
  })

  test('gasPrice: effective when mined, maxFeePerGas when pending', () => {
    const fm = txs[2] // maxFee 3 gwei, tip 1 gwei
    assert.equal(formatTransaction(fm, sender, where(2, 7n)).gasPrice, quantity(GWEI + 7n))
    assert.equal(formatTransaction(fm, sender, where(2, 5n * GWEI / 2n)).gasPrice, quantity(3n * GWEI)) // capped by maxFee
    assert.equal(formatTransaction(txs[1], sender, where(1)).gasPrice, quantity(2n * GWEI)) // 2930: its gasPrice
    assert.equal(formatTransaction(txs[3], sender, where(3, 10n)).gasPrice, quantity(12n)) // 7702: base fee + tip
    assert.equal(formatTransaction(txs[0], sender, where(0, 10n)).gasPrice, quantity(GWEI)) // legacy: its gasPrice
  })

  test('pending', () => {
    const out = wire(formatTransaction(txs[2], sender, null))
    validateSchema('TransactionSigned', out)
    assertOrder(out, TX_ORDER)
    assert.equal(out.blockHash, null)
    assert.equal(out.blockNumber, null)
    assert.equal(out.blockTimestamp, null)
    assert.equal(out.transactionIndex, null)
    assert.equal(out.gasPrice, quantity(3n * GWEI))
    assert.equal(out.to, null)
  })

  test('legacy without EIP-155 has no chainId', () => {
    const unprotected = createLegacyTx({ nonce: 0, gasPrice: 1, gasLimit: 21000, to: TO, v: 27n, r: 1n, s: 2n }, { common })
    const out = wire(formatTransaction(unprotected, sender, where(0)))
    validateSchema('TransactionInfo', out)
    assert.equal('chainId' in out, false)
    assert.equal(out.v, '0x1b')
  })
})

/** The bloom computed independently of @ethereumjs (yellow paper, with ethers' keccak). */
function referenceBloom(logs) {
  const bloom = new Uint8Array(256)
  for (const [address, topics] of logs) {
    for (const item of [address, ...topics]) {
      const h = hexToBytes(ethersKeccak(item))
      for (let k = 0; k < 6; k += 2) {
        const bit = ((h[k] << 8) | h[k + 1]) & 2047
        bloom[255 - (bit >> 3)] |= 1 << (bit & 7)
      }
    }
  }
  return bytesToHex(bloom)
}

describe('receiptText / formatLog', () => {
  const topic = (b) => new Uint8Array(32).fill(b)
  const emitter = hexToBytes(TO)
  const logs = [
    [emitter, [topic(1), topic(2)], Uint8Array.from([1, 2, 3])],
    [hexToBytes('0x' + '44'.repeat(20)), [], new Uint8Array()],
  ]

  test('receipt with logs: schema, values, bloom, geth key order', () => {
    const tx = txs[3]
    const out = wire(
      receiptJson({
        ...receiptTx(tx),
        sender,
        receipt: { status: 1, cumulativeGasUsed: 150_000n, logs },
        gasUsed: 46_000n,
        blockHash,
        blockNumber: 5n,
        blockTimestamp: TIMESTAMP,
        index: 3,
        baseFee: BASE_FEE,
        firstLogIndex: 4,
        contractAddress: null,
      }),
    )
    validateSchema('ReceiptInfo', out)
    validateMethodResult('eth_getTransactionReceipt', out)
    assert.deepEqual(Object.keys(out), sortedKeys(out))
    assert.deepEqual(out, {
      blockHash,
      blockNumber: '0x5',
      contractAddress: null,
      cumulativeGasUsed: quantity(150_000n),
      effectiveGasPrice: quantity(BASE_FEE + 2n),
      from: sender,
      gasUsed: quantity(46_000n),
      logs: out.logs,
      logsBloom: referenceBloom(logs),
      status: '0x1',
      to: TO,
      transactionHash: bytesToHex(tx.hash()),
      transactionIndex: '0x3',
      type: '0x4',
    })
    assert.equal(out.logs.length, 2)
    out.logs.forEach((log, k) => {
      validateSchema('Log', log)
      assertOrder(log, LOG_ORDER)
      assert.equal(log.logIndex, quantity(4 + k))
      assert.equal(log.transactionHash, out.transactionHash)
      assert.equal(log.transactionIndex, '0x3')
      assert.equal(log.blockTimestamp, quantity(TIMESTAMP))
      assert.equal(log.removed, false)
    })
    assert.deepEqual(out.logs[0].topics, [bytesToHex(topic(1)), bytesToHex(topic(2))])
    assert.equal(out.logs[0].data, '0x010203')
    assert.equal(out.logs[1].data, '0x')
    // each log as eth_getLogs and the logs subscription show it
    out.logs.forEach((log, k) => {
      const ctx = { blockHash, blockNumber: 5n, blockTimestamp: TIMESTAMP, transactionHash: out.transactionHash, transactionIndex: 3, logIndex: 4 + k, removed: false }
      assert.deepEqual(log, wire(formatLog(logs[k], ctx)))
    })
  })

  test('a receipt before Byzantium shows its state root and no status; malformed bytes throw', () => {
    const root = new Uint8Array(32).fill(0xab)
    const args = {
      ...receiptTx(txs[0]), sender, gasUsed: 21000n, blockHash, blockNumber: 5n, index: 0, baseFee: undefined, firstLogIndex: 0, contractAddress: null,
    }
    const out = JSON.parse(receiptText({ ...args, receipt: RLP.encode([root, bigIntToUnpaddedBytes(21000n), []]) }))
    assert.equal(out.root, bytesToHex(root))
    assert.equal('status' in out, false)
    assert.equal(out.cumulativeGasUsed, '0x5208')
    assert.deepEqual(Object.keys(out), sortedKeys(out))
    for (const bad of [RLP.encode(new Uint8Array(3)), RLP.encode([Uint8Array.of(1), Uint8Array.of(1), new Uint8Array(2)]), RLP.encode([Uint8Array.of(1), Uint8Array.of(1), [[new Uint8Array(20), new Uint8Array(32), new Uint8Array()]]])]) {
      assert.throws(() => receiptText({ ...args, receipt: bad }), /malformed stored receipt/)
    }
  })

  test('failed contract creation; given bloom is used as is', () => {
    const bloom = new Uint8Array(256).fill(0xff)
    const out = wire(
      receiptJson({
        ...receiptTx(txs[2]),
        sender,
        receipt: { status: 0, cumulativeGasUsed: 99_000n, logs: [] },
        gasUsed: 80_000n,
        blockHash,
        blockNumber: 5n,
        index: 2,
        baseFee: BASE_FEE,
        firstLogIndex: 4,
        contractAddress: '0x' + '55'.repeat(20),
        logsBloom: bloom,
      }),
    )
    validateSchema('ReceiptInfo', out)
    validateMethodResult('eth_getBlockReceipts', [out])
    assert.equal(out.status, '0x0')
    assert.equal(out.to, null)
    assert.equal(out.contractAddress, '0x' + '55'.repeat(20))
    assert.deepEqual(out.logs, [])
    assert.equal(out.logsBloom, bytesToHex(bloom))
    assert.equal(out.type, '0x2')
  })

  test('empty logs give an all-zero bloom', () => {
    const out = receiptJson({
      ...receiptTx(txs[0]), sender, receipt: { status: 1, cumulativeGasUsed: 21000n, logs: [] }, gasUsed: 21000n,
      blockHash, blockNumber: 5n, index: 0, baseFee: BASE_FEE, firstLogIndex: 0, contractAddress: null,
    })
    assert.equal(out.logsBloom, '0x' + '00'.repeat(256))
    assert.equal(out.effectiveGasPrice, quantity(GWEI))
  })

  test('formatLog: removed flag, optional blockTimestamp, eth_getLogs result', () => {
    const ctx = { blockHash, blockNumber: 5n, transactionHash: '0x' + 'ee'.repeat(32), transactionIndex: 1, logIndex: 9, removed: true }
    const log = wire(formatLog(logs[0], ctx))
    validateSchema('Log', log)
    assertOrder(log, LOG_ORDER)
    assert.equal(log.removed, true)
    assert.equal('blockTimestamp' in log, false)
    const withTime = wire(formatLog(logs[0], { ...ctx, blockTimestamp: 17n, removed: false }))
    assert.equal(withTime.blockTimestamp, '0x11')
    validateMethodResult('eth_getLogs', [log, withTime])
    validateMethodResult('eth_getLogs', [])
  })
})

describe('receipt fields read from the bytes (readTxFields)', () => {
  test('type, recipient, nonce and price of every transaction type', () => {
    for (const tx of txs) {
      const fields = readTxFields(tx.serialize())
      // what a receipt reads of a block's transaction, where it lies
      const { type, to, nonce, maxFeePerGas, maxPriorityFeePerGas } = fields
      assert.deepEqual(readReceiptTxFields(tx.serialize()), { type, to, nonce, maxFeePerGas, maxPriorityFeePerGas, blobCount: 0 })
      assert.equal(fields.type, tx.type)
      assert.equal(fields.to.length === 0 ? undefined : bytesToHex(fields.to), tx.to?.toString())
      assert.equal(fields.nonce, tx.nonce)
      for (const baseFee of [undefined, 0n, BASE_FEE, 2n * GWEI, 5n * GWEI]) {
        const out = receiptJson({
          ...receiptTx(tx), sender, receipt: { status: 1, cumulativeGasUsed: 21000n, logs: [] }, gasUsed: 21000n,
          blockHash, blockNumber: 5n, index: 0, baseFee, firstLogIndex: 0, contractAddress: null,
        })
        assert.equal(out.effectiveGasPrice, quantity(paidPrice(tx, baseFee)), `type ${tx.type}, base fee ${baseFee}`)
        assert.equal(out.type, quantity(BigInt(tx.type)))
        assert.equal(out.to, tx.to === undefined ? null : tx.to.toString())
      }
    }
  })

  test('a blob transaction (in an imported block) is read, with its blobs in the receipt; an unknown type is refused', () => {
    const hashes = [new Uint8Array(32).fill(1), new Uint8Array(32).fill(2)]
    const q = (n) => (n === 0n ? new Uint8Array() : utilHexToBytes(`0x${n.toString(16).padStart(2, '0')}`))
    const payload = RLP.encode([q(24589n), q(7n), q(GWEI), q(3n * GWEI), q(21000n), utilHexToBytes(TO), q(0n), new Uint8Array(), [], q(1n), hashes, q(1n), q(1n), q(1n)])
    const fields = readTxFields(Uint8Array.from([3, ...payload]))
    assert.equal(fields.type, 3)
    assert.equal(fields.nonce, 7n)
    assert.equal(fields.blobCount, 2)
    assert.equal(fields.maxFeePerBlobGas, 1n)
    const out = receiptJson({
      tx: fields, transactionHash: blockHash, common, sender, receipt: { status: 1, cumulativeGasUsed: 21000n, logs: [] }, gasUsed: 21000n,
      blockHash, blockNumber: 5n, index: 0, baseFee: GWEI, firstLogIndex: 0, contractAddress: null, blobGasPrice: 1n,
    })
    assert.equal(out.blobGasUsed, '0x40000')
    assert.equal(out.blobGasPrice, '0x1')
    assert.deepEqual(readReceiptTxFields(Uint8Array.from([3, ...payload])), { type: 3, to: fields.to, nonce: 7n, maxFeePerGas: 3n * GWEI, maxPriorityFeePerGas: GWEI, blobCount: 2 })
    assert.throws(() => readTxFields(Uint8Array.from([5, ...payload])), { message: 'transaction type not supported' })
  })
})

describe('schema helper', () => {
  test('rejects wrong shapes with readable errors', () => {
    assert.throws(() => validateSchema('Log', { transactionHash: '0x12' }), /transactionHash/)
    assert.throws(() => validateSchema('ReceiptInfo', { blockHash: '0x' }), /must have required property/)
    assert.throws(() => validateSchema('NoSuchSchema', {}), /unknown schema/)
    assert.throws(() => validateMethodResult('eth_noSuchMethod', 1), /unknown method/)
    // additionalProperties:false is enforced unless relaxed
    const log = { transactionHash: '0x' + '00'.repeat(32), extra: 1 }
    assert.throws(() => validateSchema('Log', log), /additional/)
    validateSchema('Log', log, { allowExtraFields: true })
  })
})
