// geth's access-list tracer lists every address BALANCE, EXTCODESIZE/COPY/HASH, CALL, CALLCODE,
// DELEGATECALL, STATICCALL and SELFDESTRUCT touch, warm or not, but the sender, the recipient and the
// precompiles. @ethereumjs reports an address when it warms it, which comes to the same for every address
// but one: the block's coinbase, warm from the start (EIP-3651) and not left out by geth. Each of those
// opcodes asks the journal whether its address is warm, so that is where a touch of the coinbase shows.

import { bytesToUnprefixedHex, equalsBytes } from '@ethereumjs/util'

/** The part of @ethereumjs/evm's Journal this uses. */
export interface ReportingJournal {
  isWarmedAddress(address: Uint8Array): boolean
  /** set while the journal reports an access list (unprefixed address -> slots) */
  accessList?: Map<string, Set<string>>
}

/** Until the returned function is called, a touch of `coinbase` enters the journal's reported access list. */
export function reportCoinbaseTouches(journal: ReportingJournal, coinbase: Uint8Array): () => void {
  const key = bytesToUnprefixedHex(coinbase)
  const isWarmedAddress = journal.isWarmedAddress
  journal.isWarmedAddress = function (this: ReportingJournal, address: Uint8Array): boolean {
    const list = this.accessList
    if (list !== undefined && !list.has(key) && equalsBytes(address, coinbase)) list.set(key, new Set())
    return isWarmedAddress.call(this, address)
  }
  // the instance's own method shadowed the class's
  return () => delete (journal as Partial<ReportingJournal>).isWarmedAddress
}
