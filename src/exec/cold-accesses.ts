// What an access list would have saved an execution that ran without it, for eth_createAccessList.
//
// geth answers eth_createAccessList with the gas of a run that has the list it found, which takes a
// second execution. When the first one's path cannot depend on its gas (see gas-watch.ts: no GAS, CALL
// or CREATE, so a single frame), the run with the list takes the same path and differs only in gas:
// each first touch the first run paid cold (EIP-2929) is warm, and the list's entries cost intrinsic gas.
// The journal warms an address or slot exactly when it is touched cold, so wrapping its two warming
// methods, with the opcode the watch saw last, finds every cold charge and its price.

import type { Common } from '@ethereumjs/common'
import type { GasWatch } from './gas-watch.js'

const SLOAD = 0x54
const SSTORE = 0x55
const SELFDESTRUCT = 0xff
/** BALANCE, EXTCODESIZE, EXTCODECOPY, EXTCODEHASH: a cold address costs the cold price instead of a warm read. */
const READS_ACCOUNT = new Uint8Array(256)
for (const op of [0x31, 0x3b, 0x3c, 0x3f]) READS_ACCOUNT[op] = 1

/** The two warming methods of @ethereumjs/evm's Journal (called only for what is not warm yet). */
export interface WarmingJournal {
  addWarmedAddress(address: Uint8Array): void
  addWarmedStorage(address: Uint8Array, slot: Uint8Array): void
}

export class ColdAccesses {
  /** gas the execution paid for cold touches beyond what the same touches cost warm */
  saving = 0n
  /** a cold touch this does not price (an opcode it does not expect): the saving is unknown */
  unknown = false
  private readonly coldSlot: bigint
  private readonly coldAccount: bigint
  private readonly warmRead: bigint

  constructor(common: Common) {
    this.coldSlot = common.param('coldsloadGas')
    this.coldAccount = common.param('coldaccountaccessGas')
    this.warmRead = common.param('warmstoragereadGas')
  }

  /** Counts the cold touches of `journal` while `watch` watches the execution; the returned function stops. */
  watch(journal: WarmingJournal, watch: GasWatch): () => void {
    const addWarmedAddress = journal.addWarmedAddress
    const addWarmedStorage = journal.addWarmedStorage
    journal.addWarmedAddress = (address) => {
      const op = watch.op
      // SLOAD and SSTORE warm their contract along with the slot (priced below); before the first step
      // the call's own setup warms what is warm by rule
      if (READS_ACCOUNT[op] === 1) this.saving += this.coldAccount - this.warmRead
      // a warm beneficiary costs SELFDESTRUCT nothing extra
      else if (op === SELFDESTRUCT) this.saving += this.coldAccount
      else if (op !== SLOAD && op !== SSTORE && op !== -1) this.unknown = true
      addWarmedAddress.call(journal, address)
    }
    journal.addWarmedStorage = (address, slot) => {
      const op = watch.op
      // SLOAD pays a warm read when warm; SSTORE's cold surcharge is all it pays extra (EIP-2929)
      if (op === SLOAD) this.saving += this.coldSlot - this.warmRead
      else if (op === SSTORE) this.saving += this.coldSlot
      else this.unknown = true
      addWarmedStorage.call(journal, address, slot)
    }
    return () => {
      delete (journal as Partial<WarmingJournal>).addWarmedAddress
      delete (journal as Partial<WarmingJournal>).addWarmedStorage
    }
  }
}
