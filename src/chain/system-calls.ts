// What a block does besides its transactions once Cancun and Prague are active, as geth's state processor:
// before the transactions, the parent beacon block root goes into the EIP-4788 contract and the parent's
// hash into the EIP-2935 contract; after them, the EIP-7002 and EIP-7251 queues are emptied by system
// calls, and what they return, with the deposit logs of EIP-6110, makes the block's requests
// (EIP-7685), whose hash goes into the header.
//
// A system contract the genesis did not deploy is skipped: the call would find no code (geth deploys all
// four in its --dev genesis, anvil only EIP-2935's; Keel's default genesis deploys that one).

import { genRequestsRoot } from '@ethereumjs/block'
import type { Block, BlockHeader } from '@ethereumjs/block'
import type { Common } from '@ethereumjs/common'
import { CLRequest, CLRequestType, SYSTEM_ADDRESS, bigIntToBytes, bytesToBigInt, bytesToHex, concatBytes, createAddressFromString, setLengthLeft } from '@ethereumjs/util'
import type { Address } from '@ethereumjs/util'
import type { VM } from '@ethereumjs/vm'
import { sha256 } from '@noble/hashes/sha2.js'
import type { ReceiptRecord } from './receipts.js'
import { BEACON_ROOTS, CONSOLIDATION_QUEUE, depositContractOf, HISTORY_STORAGE, WITHDRAWAL_QUEUE } from './system-contracts.js'

const RING = 8191n
const SYSTEM_CALL_GAS = 30_000_000n
const beaconRoots = createAddressFromString(BEACON_ROOTS.address)
const historyStorage = createAddressFromString(HISTORY_STORAGE.address)
const withdrawalQueue = createAddressFromString(WITHDRAWAL_QUEUE.address)
const consolidationQueue = createAddressFromString(CONSOLIDATION_QUEUE.address)
const systemAddress = createAddressFromString(SYSTEM_ADDRESS)

const slot = (n: bigint): Uint8Array => setLengthLeft(bigIntToBytes(n), 32)

/**
 * EIP-4788 and EIP-2935, before the block's first transaction. Each contract's system call stores exactly
 * these slots (its code's write path), so they are written directly, as @ethereumjs's runBlock does.
 */
export async function beforeTransactions(vm: VM, common: Common, header: BlockHeader): Promise<void> {
  if (common.isActivatedEIP(4788) && (await vm.stateManager.getCode(beaconRoots)).length > 0) {
    const index = header.timestamp % RING
    await vm.stateManager.putStorage(beaconRoots, slot(index), bigIntToBytes(header.timestamp))
    await vm.stateManager.putStorage(beaconRoots, slot(index + RING), header.parentBeaconBlockRoot ?? new Uint8Array(32))
  }
  if (common.isActivatedEIP(2935) && header.number > 0n && (await vm.stateManager.getCode(historyStorage)).length > 0) {
    await vm.stateManager.putStorage(historyStorage, slot((header.number - 1n) % RING), header.parentHash)
  }
}

/**
 * EIP-7685's requests hash of a block whose transactions have run (undefined before Prague): the deposit
 * logs of its receipts, then the withdrawal and consolidation requests its system calls dequeue.
 */
export async function requestsHashAfterTransactions(vm: VM, common: Common, block: Block, receipts: readonly ReceiptRecord[]): Promise<Uint8Array | undefined> {
  if (!common.isActivatedEIP(7685)) return undefined
  const requests: CLRequest<CLRequestType>[] = []
  if (common.isActivatedEIP(6110)) requests.push(new CLRequest(CLRequestType.Deposit, depositRequests(depositContractOf(common), receipts)))
  if (common.isActivatedEIP(7002)) requests.push(new CLRequest(CLRequestType.Withdrawal, await dequeue(vm, block, withdrawalQueue)))
  if (common.isActivatedEIP(7251)) requests.push(new CLRequest(CLRequestType.Consolidation, await dequeue(vm, block, consolidationQueue)))
  return genRequestsRoot(requests, sha256)
}

/** The system call that empties a request queue: what it returns are the block's requests of that type. */
async function dequeue(vm: VM, block: Block, queue: Address): Promise<Uint8Array> {
  if ((await vm.stateManager.getCode(queue)).length === 0) return new Uint8Array(0)
  // the call credits the system address with nothing, but the EVM still writes its account: leave it as it was
  const systemAccount = await vm.stateManager.getAccount(systemAddress)
  const result = await vm.evm.runCall({ caller: systemAddress, to: queue, gasLimit: SYSTEM_CALL_GAS, block })
  if (systemAccount === undefined) await vm.stateManager.deleteAccount(systemAddress)
  else await vm.stateManager.putAccount(systemAddress, systemAccount)
  if (result.execResult.exceptionError !== undefined) {
    throw new Error(`system call to ${queue.toString()} failed: ${result.execResult.exceptionError.error}`)
  }
  return result.execResult.returnValue
}

const DEPOSIT_EVENT_TOPIC = '0x649bbc62d0e31342afea4e5cd82d4049e7e1ee912fc0889aa790803be39038c5'
/** DepositEvent(bytes pubkey, bytes withdrawal_credentials, bytes amount, bytes signature, bytes index): offset and size of each field, as EIP-6110 requires them. */
const DEPOSIT_FIELDS: [offset: number, size: number][] = [[160, 48], [256, 32], [320, 8], [384, 96], [512, 8]]
const DEPOSIT_LOG_SIZE = 576

/** EIP-6110: the deposit contract's DepositEvent logs, each as pubkey ‖ withdrawal credentials ‖ amount ‖ signature ‖ index. */
function depositRequests(depositContract: string, receipts: readonly ReceiptRecord[]): Uint8Array {
  const parts: Uint8Array[] = []
  for (const receipt of receipts) {
    for (const [address, topics, data] of receipt.logs) {
      if (topics.length === 0 || bytesToHex(address) !== depositContract || bytesToHex(topics[0]) !== DEPOSIT_EVENT_TOPIC) continue
      parts.push(depositFields(data))
    }
  }
  return concatBytes(...parts)
}

function depositFields(data: Uint8Array): Uint8Array {
  if (data.length !== DEPOSIT_LOG_SIZE) throw new Error('invalid deposit log: unsupported data layout')
  const word = (at: number): bigint => bytesToBigInt(data.subarray(at, at + 32))
  const fields: Uint8Array[] = []
  for (let i = 0; i < DEPOSIT_FIELDS.length; i++) {
    const [offset, size] = DEPOSIT_FIELDS[i]
    if (word(i * 32) !== BigInt(offset) || word(offset) !== BigInt(size)) throw new Error('invalid deposit log: unsupported data layout')
    fields.push(data.subarray(offset + 32, offset + 32 + size))
  }
  return concatBytes(...fields)
}
