import { test, before } from 'node:test'
import assert from 'node:assert/strict'
import { loadFastCrypto } from '../../dist/evm/crypto.js'
import { createChainCommon } from '../../dist/evm/common.js'
import { latestForkConfig } from '../../dist/evm/geth-genesis.js'
import { startIntakeWarmUp } from '../../dist/chain/intake-warm-up.js'
import { countTurns } from '../helpers/turns.js'

let fc

before(async () => {
  fc = await loadFastCrypto()
})

/** An intake context whose sender recoveries are counted: one per decoded transaction. */
function countingContext(overrides = {}) {
  const counter = { recoveries: 0 }
  const customCrypto = {
    ...fc.customCrypto,
    ecrecover: (...args) => {
      counter.recoveries++
      return fc.customCrypto.ecrecover(...args)
    },
  }
  const common = createChainCommon({ config: latestForkConfig(24589), gasLimit: '0x1c9c380', alloc: {} }, customCrypto)
  const ctx = { common, chainId: 24589n, blockGasLimit: 30_000_000n, txGasCap: 1n << 24n, maxTxSize: 131072, txFeeCapWei: 10n ** 18n, allowUnprotectedTxs: false, ...overrides }
  return { ctx, counter }
}

test('the warm-up decodes the transfers it was asked for, in slices that leave the event loop its turns', async () => {
  const { ctx, counter } = countingContext()
  const warmUp = startIntakeWarmUp(ctx, fc.secp256k1.ecdsaSign, 300)
  assert.equal(counter.recoveries, 0, 'nothing is decoded before the next turn of the event loop')
  const turnCount = countTurns()
  await warmUp.done
  const turns = turnCount.stop()
  // every decode recovers its sender once: the transfers are valid for the chain (none refused early)
  assert.equal(counter.recoveries, 300)
  assert.ok(turns >= 300 / 20 - 1, `other callbacks ran ${turns} times while 300 transfers were decoded (in slices of 20)`)
})

test('stop() ends the warm-up before its next slice', async () => {
  const { ctx, counter } = countingContext()
  const warmUp = startIntakeWarmUp(ctx, fc.secp256k1.ecdsaSign, 10_000)
  await new Promise((resolve) => setImmediate(resolve))
  warmUp.stop()
  await warmUp.done
  assert.ok(counter.recoveries > 0 && counter.recoveries <= 40, `${counter.recoveries} decodes ran across the stop (at most two slices)`)
})

test('a context that refuses the transfers ends the warm-up at once', async () => {
  // a fee cap of 1 wei: every transfer is refused before its sender is recovered
  const { ctx, counter } = countingContext({ txFeeCapWei: 1n })
  await startIntakeWarmUp(ctx, fc.secp256k1.ecdsaSign, 10_000).done
  assert.equal(counter.recoveries, 0)
})

test("a node's warm-up leaves no trace: no pooled transaction, no nonce, no request counted", async (t) => {
  const { startNode } = await import('../helpers/node.js')
  const { rpcResult, sleep } = await import('../helpers/rpc.js')
  const { privateToAddress, bytesToHex } = await import('@ethereumjs/util')
  const node = await startNode({ blockTime: 1 })
  t.after(() => node.stop())
  await sleep(1500) // 1,500 decodes take ~0.3 s after 'listening'
  const throwaway = bytesToHex(privateToAddress(new Uint8Array(32).fill(7)))
  assert.deepEqual(await rpcResult(node.url, 'txpool_status'), { pending: '0x0', queued: '0x0' })
  assert.equal(await rpcResult(node.url, 'eth_getTransactionCount', [throwaway, 'pending']), '0x0')
  const metrics = await (await fetch(node.metricsUrl)).text()
  assert.doesNotMatch(metrics, /method="eth_sendRawTransaction"/)
})
