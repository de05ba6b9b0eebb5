// A node started from a genesis file that deploys all four system contracts of Cancun and Prague (as geth's
// --dev genesis does), driven over HTTP with ethers: an EIP-7002 withdrawal request and an EIP-7251
// consolidation request sent as transactions come back in their block's requestsHash (EIP-7685), the next
// block's queues are empty again, and each block's timestamp is in the EIP-4788 contract's ring.

import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { sha256 } from '@noble/hashes/sha2.js'
import { JsonRpcProvider, Wallet, concat, getBytes, hexlify, toBeHex, toQuantity, zeroPadValue } from 'ethers'
import { devGenesis } from '../../dist/chain/genesis.js'
import { allocOf, BEACON_ROOTS, CONSOLIDATION_QUEUE, WITHDRAWAL_QUEUE } from '../../dist/chain/system-contracts.js'
import { CHAIN_ID, DEV_KEYS, startNode, target } from '../helpers/node.js'
import { rpcResult, waitForBlock } from '../helpers/rpc.js'

const EMPTY_REQUESTS_HASH = hexlify(sha256(new Uint8Array(0)))

let dir
let node
let provider

before(async () => {
  if (target !== 'keel') return
  dir = mkdtempSync(join(tmpdir(), 'keel-system-contracts-'))
  const genesis = devGenesis(CHAIN_ID)
  for (const contract of [BEACON_ROOTS, WITHDRAWAL_QUEUE, CONSOLIDATION_QUEUE]) genesis.alloc[contract.address] = allocOf(contract)
  const file = join(dir, 'genesis.json')
  writeFileSync(file, JSON.stringify(genesis))
  node = await startNode({ blockTime: 1, args: ['--genesis', file] })
  provider = new JsonRpcProvider(node.url, CHAIN_ID, { staticNetwork: true, pollingInterval: 200 })
})

after(async () => {
  provider?.destroy()
  await node?.stop()
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
})

test('system contracts from a genesis file: requests in the requests hash, beacon roots by timestamp, eth_config', { skip: target !== 'keel' && 'a Keel genesis file' }, async () => {
  const wallet = new Wallet(DEV_KEYS[4], provider)
  const pubkey = new Uint8Array(48).fill(0x5a)
  const amount = getBytes('0x0000000000000400')
  const source = new Uint8Array(48).fill(0x6b)
  const targetKey = new Uint8Array(48).fill(0x7c)
  const nonce = await provider.getTransactionCount(wallet.address, 'pending')
  const withdrawal = await wallet.sendTransaction({ to: WITHDRAWAL_QUEUE.address, data: concat([pubkey, amount]), value: 1000n, gasLimit: 300_000n, nonce })
  const consolidation = await wallet.sendTransaction({ to: CONSOLIDATION_QUEUE.address, data: concat([source, targetKey]), value: 1000n, gasLimit: 300_000n, nonce: nonce + 1 })
  const [w, c] = [await withdrawal.wait(), await consolidation.wait()]
  assert.equal(w.status, 1)
  assert.equal(c.status, 1)

  // EIP-7685 over the EIP-7002 request (source address ‖ pubkey ‖ amount, little-endian) and the EIP-7251 one,
  // in the block (or blocks: the two may straddle a block boundary) that included them
  const sender = getBytes(wallet.address)
  const bytes = (...parts) => getBytes(concat(parts))
  const withdrawalRequest = sha256(bytes(Uint8Array.of(1), sender, pubkey, amount.slice().reverse()))
  const consolidationRequest = sha256(bytes(Uint8Array.of(2), sender, source, targetKey))
  const requestsOf = new Map([[w.blockNumber, [withdrawalRequest]]])
  requestsOf.set(c.blockNumber, [...(requestsOf.get(c.blockNumber) ?? []), consolidationRequest])
  for (const [number, requests] of requestsOf) {
    const header = await rpcResult(node.url, 'eth_getBlockByNumber', [toQuantity(number), false])
    assert.equal(header.requestsHash, hexlify(sha256(bytes(...requests))), `requests hash of block ${number}`)
  }
  await waitForBlock(node.url, c.blockNumber + 1)
  const next = await rpcResult(node.url, 'eth_getBlockByNumber', [toQuantity(c.blockNumber + 1), false])
  assert.equal(next.requestsHash, EMPTY_REQUESTS_HASH, 'the queues were emptied by the block before')

  // EIP-4788: the block's timestamp at timestamp % 8191 of the beacon roots contract
  const block = await rpcResult(node.url, 'eth_getBlockByNumber', [toQuantity(w.blockNumber), false])
  const timestamp = BigInt(block.timestamp)
  const stored = await rpcResult(node.url, 'eth_getStorageAt', [BEACON_ROOTS.address, toQuantity(timestamp % 8191n), block.number])
  assert.equal(stored, zeroPadValue(toBeHex(timestamp), 32))

  const config = await rpcResult(node.url, 'eth_config')
  assert.equal(config.current.systemContracts.WITHDRAWAL_REQUEST_PREDEPLOY_ADDRESS, WITHDRAWAL_QUEUE.address)
  assert.equal(config.current.systemContracts.CONSOLIDATION_REQUEST_PREDEPLOY_ADDRESS, CONSOLIDATION_QUEUE.address)
  assert.equal(config.current.systemContracts.BEACON_ROOTS_ADDRESS, BEACON_ROOTS.address)
})
