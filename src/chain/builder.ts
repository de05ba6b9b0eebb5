// The lean block builder: one journal checkpoint per block, the fork's system calls around the
// transactions (system-calls.ts), runTx per transaction, the state root flushed once, and every write of
// the block (trie nodes included) gathered into one LevelDB batch.
// BlockBuilder.addTransaction re-creates the block per transaction (quadratic: 8.9 s for 500 txs);
// this loop does 500 in a few hundred ms.

import { Block, createBlockHeader } from '@ethereumjs/block'
import type { BlockHeader } from '@ethereumjs/block'
import type { Common } from '@ethereumjs/common'
import type { TransactionType } from '@ethereumjs/tx'
import { Address, hexToBytes } from '@ethereumjs/util'
import { Bloom, encodeReceipt, runTx } from '@ethereumjs/vm'
import type { VM } from '@ethereumjs/vm'
import { orderedTrieRoot, orderedTrieRootSliced } from './ordered-trie.js'
import { applyPlainTransfer, plainTransferGas } from './plain-transfer.js'
import { TimeSlicer } from '../util/time-slicer.js'
import { SEAL_TURN_MS } from './seal-turns.js'
import { transactionOf } from './tx-object.js'
import type { PooledTx } from './pooled-tx.js'
import { trustedHexToBytes } from '../util/hex.js'
import type { ReceiptRecord } from './receipts.js'
import { beforeTransactions, requestsHashAfterTransactions } from './system-calls.js'

/**
 * The pool's transactions in inclusion order (per-sender nonce order, best tip first), taken one at a
 * time: a sender's next transaction becomes a candidate only once the one before it is in the block.
 */
export interface Candidates {
  peek(): PooledTx | undefined
  /** The current candidate is in the block: move on to its sender's next transaction. */
  shift(): void
  /** The current candidate stays out: drop it and every later transaction of its sender. */
  pop(): void
  /** Out of candidates: waits while the block may still take arrivals; true when peek() may give one. */
  more(): Promise<boolean>
}

export interface BuildInput {
  parent: BlockHeader
  candidates: Candidates
  timestamp: bigint
  coinbase: Address
  gasLimit: bigint
  extraData: Uint8Array
  /** Apply plain value transfers without the EVM (default true; off only to compare both paths). */
  plainTransfers?: boolean
  /** Told of each included transaction's execution (the explorer's indexes: indexes/frames.ts). */
  frames?: TxRecorder
}

/** What the builder tells a recorder of call frames (indexes/frames.ts FrameRecorder). */
export interface TxRecorder {
  attach(evm: VM['evm']): void
  beginTx(): void
  endTx(): void
  dropTx(): void
  plain(sender: Uint8Array, to: Uint8Array): void
}

export interface BuiltBlock {
  header: BlockHeader
  receipts: ReceiptRecord[]
  included: PooledTx[]
  /** Transactions that failed validation at execution (they leave the pool). */
  invalid: PooledTx[]
  /** How many were applied as plain value transfers, without the EVM. */
  plainTransfers: number
  /** The included transactions' EIP-2718 encodings, in block order (for the body). */
  encodedTxs: Uint8Array[]
}

const BLOCK_TX_OVERHEAD_GAS = 21_000n
/** The logs bloom of a receipt without logs; only ever read (encoded into the receipt). */
const EMPTY_BLOOM = new Uint8Array(256)
/**
 * Between transactions the build gives the event loop a turn once it has run this long: submissions and
 * their journal writes wait for a turn, and 64 senders each waiting for their answer set the intake's rate
 * (a turn every 32 transactions was ~9 ms of ERC20 transfers;
 * docs/measurements.md#producer-turns-during-a-blocks-build).
 */
const BUILD_TURN_MS = 2
/** A transaction that has run this long gives the event loop a turn, and again every as long. */
const LONG_TX_SLICE_MS = 10

/** The EVM's hook (patches/): asked every 1,024 steps, it may return a turn of the event loop to wait for. */
type YieldingEvm = VM['evm'] & { keelYield?: () => Promise<void> | undefined }

export async function buildBlock(vm: VM, common: Common, input: BuildInput): Promise<BuiltBlock> {
  const { parent } = input
  const number = parent.number + 1n
  common.setHardforkBy({ blockNumber: number, timestamp: input.timestamp })
  const baseFeePerGas = parent.calcNextBaseFee()
  const headerData = {
    parentHash: parent.hash(),
    number,
    gasLimit: input.gasLimit,
    timestamp: input.timestamp,
    baseFeePerGas,
    coinbase: input.coinbase,
    extraData: input.extraData,
    // a single sequencer has no beacon randomness; derive it from the parent so it is still unpredictable ahead
    mixHash: common.customCrypto.keccak256!(parent.hash()),
  }
  const pending = new Block(createBlockHeader(headerData, { common }), [], [], [], { common })

  const receipts: ReceiptRecord[] = []
  const included: PooledTx[] = []
  const invalid: PooledTx[] = []
  const candidates = input.candidates
  const bloom = new Bloom(undefined, common)
  // each receipt's value in the receipts trie, encoded as its transaction is included: in the build's
  // slices rather than in one stretch at its end
  const receiptValues: Uint8Array[] = []
  let gasUsed = 0n
  const plainTransferUses = input.plainTransfers !== false ? plainTransferGas(common) : undefined
  let plainCount = 0
  const frames = input.frames
  frames?.attach(vm.evm)

  await vm.evm.journal.checkpoint()
  try {
    // A transaction that runs long (a loop until its gas runs out: ~0.8 s for 16M gas of KECCAK256 here)
    // never waits on I/O, and the turns between transactions would come after it: every
    // eth_sendRawTransaction and pool query waited for it. The pool reads the head's state, not the
    // block's, so a turn is safe inside a transaction; the usual transaction never runs long enough to take one.
    const slicer = new TimeSlicer(LONG_TX_SLICE_MS)
    ;(vm.evm as YieldingEvm).keelYield = () => (slicer.due ? slicer.turn() : undefined)
    await beforeTransactions(vm, common, pending.header)
    const turns = new TimeSlicer(BUILD_TURN_MS)
    // as geth's miner: a transaction fits while the gas left covers its gas limit, and the block is
    // charged the gas it used, so transactions that ask for more gas than they use do not leave it half empty
    for (;;) {
      const ptx = candidates.peek()
      if (ptx === undefined) {
        // a block built ahead of its slot waits for arrivals while one more transaction could fit
        if (input.gasLimit - gasUsed >= BLOCK_TX_OVERHEAD_GAS && (await candidates.more())) {
          // the event loop ran while it waited
          turns.restart()
          continue
        }
        break
      }
      // warm-cache execution never waits on I/O, so without this a big block would hold the producer's
      // event loop for its whole build and every eth_sendRawTransaction would queue behind it
      if (turns.due) await turns.turn()
      if (ptx.gasLimit > input.gasLimit) {
        // more gas than a whole block has (the limit moved down, --block-gas-limit): it can never be
        // mined, and geth's pool drops it too
        invalid.push(ptx)
        candidates.pop()
        continue
      }
      if (gasUsed + ptx.gasLimit > input.gasLimit) {
        // keep nonce order: later transactions of this sender wait for the next block
        candidates.pop()
        if (input.gasLimit - gasUsed < BLOCK_TX_OVERHEAD_GAS) break
        continue
      }
      const plainGas = plainTransferUses !== undefined ? await applyPlainTransfer(vm, ptx, pending.header, plainTransferUses) : undefined
      if (plainGas !== undefined) {
        gasUsed += plainGas
        const receipt: ReceiptRecord = { status: 1, cumulativeGasUsed: gasUsed, logs: [] }
        receipts.push(receipt)
        receiptValues.push(receiptTrieValue(receipt, EMPTY_BLOOM, ptx.type))
        included.push(ptx)
        frames?.plain(trustedHexToBytes(ptx.sender), ptx.to!)
        plainCount++
        candidates.shift()
        continue
      }
      let result
      slicer.restart()
      frames?.beginTx()
      try {
        // built here and dropped with the transaction's run: the block keeps only its bytes (encodedTxs)
        const tx = transactionOf(ptx, common)
        result = await runTx(vm, { tx, block: pending, blockGasUsed: gasUsed, skipHardForkValidation: true })
      } catch {
        frames?.dropTx()
        invalid.push(ptx)
        candidates.pop()
        continue
      }
      gasUsed += result.totalGasSpent
      const r = result.receipt as { status?: 0 | 1; logs: ReceiptRecord['logs'] }
      const receipt: ReceiptRecord = { status: r.status ?? 1, cumulativeGasUsed: gasUsed, logs: r.logs }
      receipts.push(receipt)
      receiptValues.push(receiptTrieValue(receipt, result.bloom.bitvector, ptx.type))
      bloom.or(result.bloom)
      frames?.endTx()
      included.push(ptx)
      candidates.shift()
    }
    const requestsHash = await requestsHashAfterTransactions(vm, common, pending, receipts)
    const stateRoot = await vm.stateManager.getStateRoot()
    await vm.evm.journal.commit()

    const keccak = common.customCrypto.keccak256!
    // as received at intake (the hash clients were given is of these bytes)
    const encodedTxs: Uint8Array[] = new Array(included.length)
    for (let i = 0; i < included.length; i++) encodedTxs[i] = included[i].raw
    // the two tries of a block of 2,000 ERC20 transfers took 27 and 56 ms in one stretch each:
    // submissions get turns inside them
    const sealTurns = new TimeSlicer(SEAL_TURN_MS)
    await sealTurns.turn()
    const transactionsTrie = await orderedTrieRootSliced(encodedTxs, keccak, sealTurns)
    const receiptTrie = await orderedTrieRootSliced(receiptValues, keccak, sealTurns)
    if (sealTurns.due) await sealTurns.turn()
    const header = createBlockHeader(
      { ...headerData, stateRoot, transactionsTrie, receiptTrie, logsBloom: bloom.bitvector, gasUsed, requestsHash },
      { common },
    )
    return { header, receipts, included, invalid, plainTransfers: plainCount, encodedTxs }
  } catch (err) {
    await vm.evm.journal.revert()
    throw err
  }
}

/** The receipts trie root of a block's receipts (each with its bloom, typed as its transaction). */
export function receiptsRoot(
  receipts: readonly ReceiptRecord[],
  blooms: readonly Uint8Array[],
  txs: readonly { readonly type: number }[],
  keccak: (data: Uint8Array) => Uint8Array,
): Uint8Array {
  return orderedTrieRoot(
    receipts.map((rec, i) => receiptTrieValue(rec, blooms[i], txs[i].type)),
    keccak,
  )
}

/** A receipt as the receipts trie holds it: typed as its transaction, with its bloom. */
export function receiptTrieValue(receipt: ReceiptRecord, bloom: Uint8Array, txType: number): Uint8Array {
  return encodeReceipt(
    { status: receipt.status, cumulativeBlockGasUsed: receipt.cumulativeGasUsed, bitvector: bloom, logs: receipt.logs },
    txType as TransactionType,
  )
}

export function logsBloomOf(receipt: ReceiptRecord, common: Common): Uint8Array {
  const bloom = new Bloom(undefined, common)
  for (const [address, topics] of receipt.logs) {
    bloom.add(address)
    for (const topic of topics) bloom.add(topic)
  }
  return bloom.bitvector
}

export const ZERO_ADDRESS = new Address(hexToBytes('0x0000000000000000000000000000000000000000'))
