// Plain value transfers skip the EVM in the block builder (src/chain/plain-transfer.ts). Two chains get
// the same signed transactions, one with the shortcut and one with every transaction through runTx; every
// block must come out the same: state root, receipts, gas, included transactions. The mix covers what the
// shortcut takes (1559, legacy and 2930 transfers, gas limits above 21,000, new and existing recipients,
// senders that were created by a transfer) and what it must leave to runTx (an access list, zero value,
// self transfers, precompiles, code, the coinbase, a zero tip).

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { RLP } from '@ethereumjs/rlp'
import { bytesToHex, hexToBytes, privateToAddress } from '@ethereumjs/util'
import { decodeReceipts } from '../../dist/chain/receipts.js'
import { HISTORY_STORAGE } from '../../dist/chain/system-contracts.js'
import { compile } from '../helpers/contracts.js'
import { benchKeys, deploy, openTempChain } from '../../bench/lib/temp-chain.js'

const GWEI = 10n ** 9n
const ETHER = 10n ** 18n
const addressOf = (key) => bytesToHex(privateToAddress(key))
const fresh = (i) => hexToBytes(`0x${(0xf10000 + i).toString(16).padStart(40, '0')}`)
const legacy = { type: 0, maxFeePerGas: undefined, maxPriorityFeePerGas: undefined }
const accessListTx = { type: 1, maxFeePerGas: undefined, maxPriorityFeePerGas: undefined }

/** Signs with a tip of its own per transaction, so that both chains order a block the same way. */
function tipped(chain) {
  let k = 0
  return (key, fields) => {
    k++
    const price = fields.type === 0 || fields.type === 1 ? { gasPrice: 5n * GWEI + BigInt(k) } : { maxFeePerGas: 50n * GWEI, maxPriorityFeePerGas: GWEI + BigInt(k) }
    return chain.sign(key, { ...price, ...fields })
  }
}

// Each test compares two chains fed the same transactions. Without EIP-2935's contract in their genesis:
// it would store each chain's own parent hashes, which differ with the time each block was sealed.
const alloc = { [HISTORY_STORAGE.address]: null }

test('plain transfers without the EVM give the same blocks as runTx', async () => {
  const senders = benchKeys(16, 77)
  const newcomers = benchKeys(4, 78)
  const { Storage } = compile()
  const viaEvm = await openTempChain({ funded: senders, alloc, plainTransfers: false })
  const shortcut = await openTempChain({ funded: senders, alloc })
  try {
    const contracts = [await deploy(viaEvm, Storage.bytecode), await deploy(shortcut, Storage.bytecode)]
    assert.equal(contracts[0], contracts[1])
    const contract = hexToBytes(contracts[0])

    const blocks = [
      (sign) => [
        sign(senders[0], { to: fresh(1), value: ETHER, gasLimit: 21_000n }),
        sign(senders[1], { to: fresh(2), value: 5n, gasLimit: 50_000n }),
        sign(senders[2], { ...legacy, to: fresh(3), value: 7n, gasLimit: 21_000n }),
        sign(senders[3], { ...accessListTx, accessList: [], to: hexToBytes(addressOf(senders[4])), value: 9n, gasLimit: 21_000n }),
        sign(senders[4], { ...accessListTx, accessList: [{ address: bytesToHex(fresh(9)), storageKeys: [] }], to: fresh(4), value: 3n, gasLimit: 30_000n }),
        sign(senders[5], { to: fresh(5), value: 0n, gasLimit: 21_000n }),
        sign(senders[6], { to: hexToBytes(addressOf(senders[6])), value: 11n, gasLimit: 21_000n }),
        sign(senders[7], { to: hexToBytes(`0x${'00'.repeat(19)}01`), value: 1n, gasLimit: 30_000n }),
        sign(senders[8], { to: hexToBytes(`0x${'00'.repeat(18)}0100`), value: 1n, gasLimit: 30_000n }),
        sign(senders[9], { to: contract, value: 2n, gasLimit: 60_000n }),
        sign(senders[10], { to: hexToBytes(`0x${'00'.repeat(20)}`), value: 13n, gasLimit: 21_000n }),
        sign(senders[11], { to: fresh(10), value: 1n, gasLimit: 21_000n, maxPriorityFeePerGas: 0n }),
        sign(senders[12], { to: fresh(11), value: 17n, gasLimit: 21_000n }),
        sign(senders[12], { to: fresh(12), value: 19n, gasLimit: 21_000n }),
        ...newcomers.map((key, i) => sign(senders[13 + (i % 3)], { to: hexToBytes(addressOf(key)), value: ETHER + BigInt(i), gasLimit: 21_000n })),
      ],
      // recipients paid twice in a block, senders created by a transfer, existing accounts both ways
      (sign) => [
        ...newcomers.map((key, i) => sign(key, { to: fresh(1), value: 1000n + BigInt(i), gasLimit: 21_000n })),
        ...senders.slice(0, 12).map((key, i) => sign(key, { to: hexToBytes(addressOf(senders[(i + 5) % 16])), value: 23n + BigInt(i), gasLimit: 25_000n })),
        sign(senders[12], { ...legacy, to: fresh(2), value: 29n, gasLimit: 21_000n }),
        sign(senders[13], { to: fresh(1), value: 31n, gasLimit: 21_000n }),
      ],
      // a newcomer sends most of what it has: the fee and the value must be exact for the next one
      (sign) => newcomers.map((key, i) => sign(key, { to: fresh(20 + i), value: ETHER / 2n, gasLimit: 21_000n })),
    ]

    for (const [n, make] of blocks.entries()) {
      const events = []
      for (const chain of [viaEvm, shortcut]) {
        for (const raw of make(tipped(chain))) await chain.submit(raw)
        events.push(await chain.sealBlock())
      }
      const [a, b] = events
      assert.deepEqual(b.txHashes, a.txHashes, `block ${n}: the same transactions`)
      assert.ok(a.txHashes.length > 0)
      assert.equal(b.head.stateRoot, a.head.stateRoot, `block ${n}: the same state root`)
      assert.equal(b.head.gasUsed, a.head.gasUsed, `block ${n}: the same gas`)
      assert.deepEqual(b.receiptsRlp, a.receiptsRlp, `block ${n}: the same receipts`)
      // the same header but for what the sealing time decides (parent hash, timestamp, mix hash)
      const [ha, hb] = [RLP.decode(a.headerRlp), RLP.decode(b.headerRlp)]
      for (const [field, i] of Object.entries({ coinbase: 2, stateRoot: 3, transactionsTrie: 4, receiptTrie: 5, logsBloom: 6, number: 8, gasLimit: 9, gasUsed: 10, baseFeePerGas: 15 })) {
        assert.deepEqual(hb[i], ha[i], `block ${n}: the same ${field}`)
      }
      assert.equal(a.stats.plainTransfers, 0)
      assert.ok(b.stats.plainTransfers > 0, `block ${n}: the shortcut was taken`)
      if (n > 0) assert.equal(b.stats.plainTransfers, b.txHashes.length, `block ${n}: every transaction is a plain transfer`)
      if (n === 0) {
        const statuses = decodeReceipts(b.receiptsRlp).map((r) => r.status)
        assert.ok(statuses.includes(0), 'a transfer to code that refuses value failed the same way')
        // 1559, a 50k limit, legacy, an empty access list, two in a row, the newcomers' funding, and the
        // zero tip (included last, when the coinbase already holds this block's fees)
        assert.equal(b.stats.plainTransfers, 7 + newcomers.length)
      }
    }
    assert.equal(shortcut.head.stateRoot.length, 32)
  } finally {
    await viaEvm.close()
    await shortcut.close()
  }
})

test('a zero-tip transfer leaves an empty coinbase to runTx (EIP-161 deletes it again)', async () => {
  const senders = benchKeys(2, 79)
  const coinbase = `0x${'c0'.repeat(20)}`
  const chains = [await openTempChain({ funded: senders, alloc, coinbase, plainTransfers: false }), await openTempChain({ funded: senders, alloc, coinbase })]
  try {
    const events = []
    for (const chain of chains) {
      await chain.submit(chain.sign(senders[0], { to: fresh(100), value: 1n, gasLimit: 21_000n, maxPriorityFeePerGas: 0n }))
      await chain.submit(chain.sign(senders[1], { to: fresh(101), value: 1n, gasLimit: 21_000n, maxPriorityFeePerGas: 0n }))
      events.push(await chain.sealBlock())
    }
    assert.equal(events[1].txHashes.length, 2)
    assert.equal(events[1].head.stateRoot, events[0].head.stateRoot)
    assert.deepEqual(events[1].receiptsRlp, events[0].receiptsRlp)
    assert.equal(events[1].stats.plainTransfers, 0, 'the empty coinbase sent both to runTx')
  } finally {
    for (const chain of chains) await chain.close()
  }
})
