// An in-process Keel chain on a temporary LevelDB: the real Producer (lean builder, one batch per
// block), driven by hand. Used by the micro benchmarks and by the call-pool tests, which need the
// database in their own process (LevelDB locks it to one process).

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createTx } from '@ethereumjs/tx'
import { Address, bytesToHex, createContractAddress, hexToBytes, privateToAddress } from '@ethereumjs/util'
import { paramsVM } from '@ethereumjs/vm'
import { Producer } from '../../dist/chain/producer.js'
import { devGenesis } from '../../dist/chain/genesis.js'
import { devWallet } from './dev-wallets.js'
import { openChainLevel } from '../../dist/chain/store/level.js'
import { decodeRawTransaction, EIP7825_TX_GAS_CAP } from '../../dist/chain/tx-intake.js'
import { toWire } from '../../dist/chain/pooled-tx.js'
import { loadConfig } from '../../dist/config/load.js'
import { createChainCommon } from '../../dist/evm/common.js'
import { loadFastCrypto } from '../../dist/evm/crypto.js'
import { execBlockOf } from '../../dist/exec/exec-block.js'

export const CHAIN_ID = 24589
const ETHER = 10n ** 18n

/** Deterministic private keys for extra funded accounts (not the dev mnemonic). */
export function benchKeys(count, salt = 1) {
  const keys = []
  for (let i = 0; i < count; i++) {
    const key = new Uint8Array(32)
    const view = new DataView(key.buffer)
    view.setUint32(0, 0x6b65656c) // 'keel'
    view.setUint32(24, salt)
    view.setUint32(28, i + 1)
    keys.push(key)
  }
  return keys
}

/**
 * @param {{ funded?: Uint8Array[], blockTime?: number, stateHistory?: number }} [opts]
 *   funded: extra private keys given 1,000,000 ether each in genesis.
 *   blockTime: the producer's block time; the default (1 h) means blocks are sealed only by sealBlock().
 *   stateHistory: --state-history (default 0, archive).
 *   plainTransfers: false makes every transfer go through the EVM (the producer's default is true).
 *   coinbase: the fee recipient (0x hex; default the dev genesis's).
 *   gasLimit: the block gas limit (bigint; default the dev genesis's).
 *   alloc: more genesis accounts (geth's alloc format); null removes one of the dev genesis's.
 */
export async function openTempChain(opts = {}) {
  const crypto = await loadFastCrypto()
  const dir = mkdtempSync(join(tmpdir(), 'keel-temp-chain-'))
  const flags = { 'data-dir': dir, dev: true, 'block-time': String(opts.blockTime ?? 3600) }
  if (opts.stateHistory !== undefined) flags['state-history'] = String(opts.stateHistory)
  const config = loadConfig({ flags, env: {} })
  const genesis = devGenesis(CHAIN_ID)
  if (opts.coinbase !== undefined) genesis.coinbase = opts.coinbase
  if (opts.gasLimit !== undefined) genesis.gasLimit = `0x${opts.gasLimit.toString(16)}`
  for (const [address, account] of Object.entries(opts.alloc ?? {})) {
    if (account === null) delete genesis.alloc[address]
    else genesis.alloc[address] = account
  }
  for (const key of opts.funded ?? []) {
    genesis.alloc[bytesToHex(privateToAddress(key))] = { balance: `0x${(1_000_000n * ETHER).toString(16)}` }
  }
  const level = await openChainLevel(join(dir, 'chain'))
  const blocks = []
  let fatal
  const producer = await Producer.open(config, genesis, level, {
    onBlock: (event) => blocks.push(event),
    onPendingTx: () => {},
    onFatal: (message) => {
      fatal = new Error(message)
    },
  }, { plainTransfers: opts.plainTransfers })
  // primed as a call worker's is: the engines built on this chain run the VM
  const common = createChainCommon(genesis, crypto.customCrypto, paramsVM)
  const intake = {
    common,
    chainId: BigInt(CHAIN_ID),
    blockGasLimit: producer.headHeader.gasLimit,
    txGasCap: EIP7825_TX_GAS_CAP,
    maxTxSize: 1 << 20,
    txFeeCapWei: 0n,
  }
  const nonces = new Map()

  const chain = {
    dir,
    level,
    common,
    genesis,
    producer,
    blocks,
    dev: Array.from({ length: 10 }, (_, i) => devWallet(i)).map((w) => ({ address: w.address.toLowerCase(), key: hexToBytes(w.privateKey) })),
    get head() {
      return producer.headHeader
    },
    /** Signs (natively) an EIP-1559 tx; the nonce is tracked per key unless given. */
    sign(key, fields) {
      const address = bytesToHex(privateToAddress(key))
      const nonce = fields.nonce ?? nonces.get(address) ?? 0n
      nonces.set(address, nonce + 1n)
      const tx = createTx(
        {
          type: 2,
          chainId: BigInt(CHAIN_ID),
          nonce,
          maxFeePerGas: 10n * 10n ** 9n,
          maxPriorityFeePerGas: 10n ** 9n,
          gasLimit: 100_000n,
          value: 0n,
          ...fields,
        },
        { common },
      )
      const { signature, recid } = crypto.secp256k1.ecdsaSign(tx.getHashedMessageToSign(), key)
      const signed = tx.addSignature(BigInt(recid), signature.subarray(0, 32), signature.subarray(32, 64), tx.type === 0)
      return bytesToHex(signed.serialize())
    },
    /** Intake (decode, validate, recover) and pool admission, as eth_sendRawTransaction does. */
    async submit(rawHex) {
      const ptx = decodeRawTransaction(rawHex, intake)
      return producer.submit(toWire(ptx))
    },
    /** Seals one block from the pool and returns its event. */
    async sealBlock() {
      const before = blocks.length
      await producer.seal()
      if (fatal !== undefined) throw fatal
      if (blocks.length === before) throw new Error('no block was sealed')
      return blocks[blocks.length - 1]
    },
    /** The ExecBlock of the head, as the RPC layer hands it to the call pool. */
    headExecBlock() {
      return execBlockOf(producer.headHeader)
    },
    /** `keepData`: leave the data folder for a node to open (the caller removes it). */
    async close({ keepData = false } = {}) {
      await producer.close()
      await level.close()
      if (!keepData) rmSync(dir, { recursive: true, force: true })
    },
  }
  return chain
}

/** Deploys `bytecode` (0x hex) from dev account 0 and returns the contract address. */
export async function deploy(chain, bytecode, key = chain.dev[0].key) {
  const raw = chain.sign(key, { data: hexToBytes(bytecode), gasLimit: 5_000_000n })
  const { hash } = await chain.submit(raw)
  const event = await chain.sealBlock()
  if (!event.txHashes.includes(hash)) throw new Error('deployment was not included')
  const tx = decodeRawTransaction(raw, { common: chain.common, chainId: BigInt(CHAIN_ID), blockGasLimit: 1n << 40n, txGasCap: EIP7825_TX_GAS_CAP, maxTxSize: 1 << 20, txFeeCapWei: 0n })
  return createContractAddress(new Address(privateToAddress(key)), tx.nonce).toString()
}

/**
 * Gives each of `holders` (0x addresses, or private keys for their addresses) `amount` units (default 10^21)
 * of the ERC20 at `token` (0x address; `abi`, its ethers Interface) from dev account 0, sealing a block after
 * every `perBlock` transfers (default 500).
 */
export async function fundTokenHolders(chain, token, abi, holders, { amount = 10n ** 21n, perBlock = 500 } = {}) {
  const to = hexToBytes(token)
  for (let i = 0; i < holders.length; i += perBlock) {
    for (const holder of holders.slice(i, i + perBlock)) {
      const address = typeof holder === 'string' ? holder : bytesToHex(privateToAddress(holder))
      const data = hexToBytes(abi.encodeFunctionData('transfer', [address, amount]))
      await chain.submit(chain.sign(chain.dev[0].key, { to, data, gasLimit: 80_000n }))
    }
    await chain.sealBlock()
  }
}
