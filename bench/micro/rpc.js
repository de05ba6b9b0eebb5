// JSON-RPC plumbing on the main thread: envelope parse/serialise, dispatch, RLP decode, sender recovery;
// the transaction object the producer's builder makes of a pooled transaction to run it; a receipt's JSON.

import { Bench } from 'tinybench'
import { RLP } from '@ethereumjs/rlp'
import { createTxFromRLP } from '@ethereumjs/tx'
import { hexToBytes } from '@ethereumjs/util'
import { Dispatcher } from '../../dist/rpc/dispatch.js'
import { Envelope } from '../../dist/rpc/envelope.js'
import { defaultTransportLimits } from '../../dist/rpc/limits.js'
import { admitRawTransaction, decodeRawTransaction, EIP7825_TX_GAS_CAP } from '../../dist/chain/tx-intake.js'
import { transactionOf } from '../../dist/chain/tx-object.js'
import { encodeStoredReceipt } from '../../dist/chain/receipts.js'
import { readReceiptTxFields } from '../../dist/chain/tx-fields.js'
import { receiptText } from '../../dist/json/receipt.js'
import { createChainCommon } from '../../dist/evm/common.js'
import { loadFastCrypto } from '../../dist/evm/crypto.js'
import { devGenesis } from '../../dist/chain/genesis.js'
import { benchKeys, openTempChain } from '../lib/temp-chain.js'

export async function run({ time }) {
  const crypto = await loadFastCrypto()
  const common = createChainCommon(devGenesis(24589), crypto.customCrypto)
  const dispatcher = new Dispatcher()
  dispatcher.register('eth_chainId', () => '0x600d')
  dispatcher.register('eth_getBalance', (params) => (params.length === 2 ? '0xde0b6b3a7640000' : '0x0'))
  const envelope = new Envelope(dispatcher, defaultTransportLimits)
  const ctx = { transport: 'http', clientIp: '127.0.0.1' }
  const single = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getBalance', params: ['0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266', 'latest'] })
  const batch = JSON.stringify(Array.from({ length: 100 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'eth_chainId', params: [] })))

  // a signed transfer, as it arrives in eth_sendRawTransaction
  const chain = await openTempChain({ funded: benchKeys(1) })
  const raw = chain.sign(benchKeys(1)[0], { to: hexToBytes(`0x${'22'.repeat(20)}`), value: 1n, gasLimit: 21_000n })
  // a token transfer and its stored receipt (one Transfer log), as a block holds them
  const word = (hex) => hexToBytes(`0x${hex.padStart(64, '0')}`)
  const token = hexToBytes(`0x${'33'.repeat(20)}`)
  const transferRaw = hexToBytes(chain.sign(benchKeys(1)[0], { to: token, data: hexToBytes(`0xa9059cbb${'44'.repeat(20).padStart(64, '0')}${'1'.padStart(64, '0')}`), gasLimit: 60_000n }))
  await chain.close()
  const transferTopic = word('ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef')
  const storedReceipt = encodeStoredReceipt({ status: 1, cumulativeGasUsed: 51_000n, logs: [[token, [transferTopic, word('55'.repeat(20)), word('44'.repeat(20))], word('1')]] })
  const receiptArgs = {
    transactionHash: `0x${'ab'.repeat(32)}`, common, sender: `0x${'55'.repeat(20)}`, receipt: storedReceipt, gasUsed: 51_000n, blockHash: `0x${'cd'.repeat(32)}`,
    blockNumber: 1234n, blockTimestamp: 1_700_000_000n, index: 7, baseFee: 7n, firstLogIndex: 7, contractAddress: null,
  }
  const rawBytes = hexToBytes(raw)
  const intake = { common, chainId: 24589n, blockGasLimit: 60_000_000n, txGasCap: EIP7825_TX_GAS_CAP, maxTxSize: 131072, txFeeCapWei: 0n }

  const pooled = decodeRawTransaction(raw, intake)

  const bench = new Bench({ time })
  bench
    .add('envelope: single eth_getBalance (parse + dispatch + serialise)', () => envelope.handle(single, ctx))
    .add('envelope: batch of 100 eth_chainId', () => envelope.handle(batch, ctx))
    .add('dispatch: eth_chainId', () => dispatcher.call('eth_chainId', [], ctx))
    .add('RLP decode: 1559 transfer', () => RLP.decode(rawBytes.subarray(1)))
    .add('createTxFromRLP (no recovery)', () => createTxFromRLP(rawBytes, { common }))
    .add("the builder's transaction object of a pooled 1559 transfer (transactionOf)", () => transactionOf(pooled, common))
    .add("a token transfer's receipt as JSON text, from the stored bytes (receiptText)", () => receiptText({ ...receiptArgs, tx: readReceiptTxFields(transferRaw) }))
    .add('intake: decode + validate + native sender recovery', () => admitRawTransaction(raw, intake))
    .add('intake, then the pool entry', () => decodeRawTransaction(raw, intake))
  await bench.run()
  return bench.tasks.map((t) => row(t))
}

export function row(task) {
  const r = task.result
  if (r === undefined || r.error !== undefined || r.state === 'errored') return { name: task.name, error: String(r?.error ?? 'no result') }
  const meanMs = r.latency?.mean ?? r.mean
  const p50 = r.latency?.p50 ?? r.p50 ?? meanMs
  return { name: task.name, 'µs (median)': Number((p50 * 1000).toFixed(2)), 'ops/s': Math.round(r.throughput?.mean ?? r.hz ?? 1000 / meanMs) }
}
