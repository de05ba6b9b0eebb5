// The producer thread's block building, optimised by V8 before the first burst of transactions. A fresh
// node's first run of transfers spent ~40% more CPU per transfer than the next one, most of it V8
// compiling the producer's pool, block building, trie and commit (measured in commit 3585216,
// bench/README.md there); its first run of token transfers, ~40% more than its third, most of it on V8's
// helper thread (docs/measurements.md, "Warm-ups after start"). After start-up the producer builds a few
// blocks between throwaway senders on a scratch chain in its own database under the data folder, with the
// same classes the chain uses, then deletes it: blocks of plain transfers and, every other one, blocks of
// token transfers (warm-up-token.ts), which run the EVM, storage, logs and their receipts. It builds a
// block only while the node has none to build, and stops when the node shuts down.

import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { createFeeMarket1559Tx } from '@ethereumjs/tx'
import { bytesToHex } from '@ethereumjs/util'
import type { KeelConfig } from '../config/types.js'
import type { GethGenesis } from '../evm/geth-genesis.js'
import { fastCrypto, loadFastCrypto, signNatively } from '../evm/crypto.js'
import type { TxWire } from './messages.js'
import { Producer } from './producer.js'
import { openChainLevel } from './store/level.js'
import { decodeReceipts } from './receipts.js'
import { BEACON_ROOTS, CONSOLIDATION_QUEUE, HISTORY_STORAGE, WITHDRAWAL_QUEUE } from './system-contracts.js'
import { tokenBalanceSlot, transferCalldata, WARM_UP_TOKEN_ADDRESS, WARM_UP_TOKEN_CODE } from './warm-up-token.js'

/**
 * 1,024 plain and 1,024 token transfers, ~2.4 s after start on the bench host (docs/measurements.md,
 * "Warm-ups after start"); in blocks of 128, so that a transaction sent meanwhile waits no longer than for
 * one of the node's own small blocks (measured in commit 91bd58c, bench/README.md there).
 */
export const PRODUCER_WARM_UP_BLOCKS = 16
export const PRODUCER_WARM_UP_TRANSFERS_PER_BLOCK = 128
const SENDERS = 64
/** A node kept busy that long has warmed itself: the warm-up ends. */
const MAX_WAIT_MS = 60_000
const BUSY_POLL_MS = 20

export interface WarmUpProgress {
  blocks: number
  /** Transfers mined in those blocks, plain and token. */
  transfers: number
  /** Token transfers among them that succeeded and logged their Transfer. */
  tokenTransfers: number
}

export interface ProducerWarmUp {
  /** What was built, once the scratch chain is closed and deleted (also after stop(), or a failure). */
  readonly done: Promise<WarmUpProgress>
  stop(): void
}

/** The scratch chain's folder: a node that died mid warm-up leaves it behind, and the next start replaces it. */
export const warmUpDir = (dataDir: string): string => join(dataDir, 'warm-up')

/** `nodeIdle`: whether the node's own producer has nothing to seal (a warm-up block waits until then). */
export function startProducerWarmUp(
  config: KeelConfig,
  genesis: GethGenesis,
  nodeIdle: () => boolean,
  blocks = PRODUCER_WARM_UP_BLOCKS,
  transfersPerBlock = PRODUCER_WARM_UP_TRANSFERS_PER_BLOCK,
): ProducerWarmUp {
  let stopped = false
  const progress: WarmUpProgress = { blocks: 0, transfers: 0, tokenTransfers: 0 }
  const done = run(config, genesis, blocks, transfersPerBlock, nodeIdle, () => stopped, progress).then(
    () => progress,
    // a warm-up that fails (a full disk, a pool limited below a block of transfers) leaves the node as it would be without one
    () => progress,
  )
  return {
    done,
    stop: () => {
      stopped = true
    },
  }
}

export interface ThrowawaySender {
  key: Uint8Array
  pub: Uint8Array
  address: string
  nonce: bigint
}

async function run(
  config: KeelConfig,
  genesis: GethGenesis,
  blocks: number,
  perBlock: number,
  nodeIdle: () => boolean,
  stopped: () => boolean,
  progress: WarmUpProgress,
): Promise<void> {
  const giveUpAt = Date.now() + MAX_WAIT_MS
  const dir = warmUpDir(config.dataDir)
  await rm(dir, { recursive: true, force: true })
  if (stopped() || blocks <= 0) return
  await loadFastCrypto()
  const senders = throwawaySenders()
  const scratchConfig: KeelConfig = { ...config, dataDir: dir, blockTime: config.blockTime > 0 ? config.blockTime : 1, emptyBlockPeriod: 0 }
  const level = await openChainLevel(dir, { cacheSize: 1 << 20, writeBufferSize: 4 << 20 })
  try {
    let failed: string | undefined
    const producer = await Producer.open(scratchConfig, scratchGenesis(genesis, senders), level, {
      onBlock: (event) => {
        progress.blocks++
        progress.transfers += event.txHashes.length
        // plain transfers log nothing: a receipt with status 1 and a log is a token transfer that ran
        for (const r of decodeReceipts(event.receiptsRlp)) if (r.status === 1 && r.logs.length === 1) progress.tokenTransfers++
      },
      onPendingTx: () => {},
      onFatal: (message) => (failed = message),
    })
    try {
      while (progress.blocks < blocks && !stopped()) {
        if (!nodeIdle()) {
          if (Date.now() > giveUpAt) break
          await new Promise<void>((resolve) => setTimeout(resolve, BUSY_POLL_MS))
          continue
        }
        // odd blocks: token transfers
        const wires = signedTransfers(producer, senders, perBlock, progress.blocks * perBlock, progress.blocks % 2 === 1)
        await Promise.all(wires.map((w) => producer.submit(w)))
        await producer.seal()
        if (failed !== undefined) throw new Error(failed)
        // the node's own messages get the thread between blocks
        await new Promise<void>((resolve) => setImmediate(resolve))
      }
    } finally {
      await producer.close()
    }
  } finally {
    await level.close()
    await rm(dir, { recursive: true, force: true })
  }
}

export function throwawaySenders(): ThrowawaySender[] {
  const { secp256k1, keccak256 } = fastCrypto()
  return Array.from({ length: SENDERS }, (_, i) => {
    const key = new Uint8Array(32).fill(0x5e)
    key[31] = i
    const pub = secp256k1.publicKeyCreate(key, false).subarray(1)
    return { key, pub, address: bytesToHex(keccak256(pub).subarray(12)), nonce: 0n }
  })
}

const SYSTEM_ADDRESSES = new Set([BEACON_ROOTS, HISTORY_STORAGE, WITHDRAWAL_QUEUE, CONSOLIDATION_QUEUE].map((c) => c.address.slice(2)))

/**
 * The chain's fork schedule and the system contracts its blocks call, as its genesis has them; none of its
 * other accounts. Besides: the throwaway senders, funded, and the warm-up's token holding a balance for each.
 */
export function scratchGenesis(genesis: GethGenesis, senders: readonly ThrowawaySender[]): GethGenesis {
  const { keccak256 } = fastCrypto()
  const alloc: GethGenesis['alloc'] = {}
  for (const [address, account] of Object.entries(genesis.alloc)) {
    if (SYSTEM_ADDRESSES.has(address.toLowerCase().replace(/^0x/, ''))) alloc[address] = account
  }
  const funds = `0x${(10n ** 24n).toString(16)}`
  const balances: Record<string, string> = {}
  for (const s of senders) {
    alloc[s.address] = { balance: funds }
    balances[tokenBalanceSlot(s.address, keccak256)] = funds
  }
  alloc[WARM_UP_TOKEN_ADDRESS] = { balance: '0x0', code: WARM_UP_TOKEN_CODE, storage: balances }
  return { ...genesis, alloc }
}

/**
 * EIP-1559 transfers to new accounts, of the native token or (`token`) of the warm-up's token, as the pool
 * receives them from the main thread (sender recovered).
 */
function signedTransfers(producer: Producer, senders: ThrowawaySender[], count: number, firstRecipient: number, token: boolean): TxWire[] {
  const { secp256k1, keccak256 } = fastCrypto()
  const common = producer.common
  const chainId = common.chainId()
  const maxFeePerGas = producer.headHeader.calcNextBaseFee() * 2n + 10n ** 9n
  const wires: TxWire[] = []
  for (let i = 0; i < count; i++) {
    const s = senders[i % senders.length]!
    const to = `0x${(0x5e000000 + firstRecipient + i).toString(16).padStart(40, '0')}` as const
    const fields = token
      ? { to: WARM_UP_TOKEN_ADDRESS, value: 0n, data: transferCalldata(to, 1n), gasLimit: 80_000n }
      : { to, value: 1n, gasLimit: 21_000n }
    const tx = createFeeMarket1559Tx({ chainId, nonce: s.nonce++, maxPriorityFeePerGas: 10n ** 9n, maxFeePerGas, ...fields }, { common })
    const raw = signNatively(tx, s.key, secp256k1.ecdsaSign)
    wires.push({ raw, hash: bytesToHex(keccak256(raw)), sender: s.address, senderPubKey: s.pub, arrivedAt: Date.now() })
  }
  return wires
}
