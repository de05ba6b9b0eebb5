// State overrides (eth_call's third parameter, eth_simulateV1's stateOverrides) applied as geth's
// override.StateOverride.Apply applies them: balance, nonce, code, the whole storage or some slots,
// and movePrecompileToAddress. An override of a precompile's address takes the precompile away (its new
// code, if any, runs instead); a moved precompile answers at its new address.

import type { EVMInterface as EVM } from '@ethereumjs/evm'
import type { StateManagerInterface } from '@ethereumjs/common'
import { Account, Address, hexToBytes, setLengthLeft, toChecksumAddress } from '@ethereumjs/util'
import { serverError } from '../rpc/errors.js'
import type { ExecAccountOverride } from './types.js'

export type Overrides = Record<string, ExecAccountOverride>

/** The EVM's table of precompiles by unprefixed lowercase address (what getPrecompile reads). */
type PrecompileTable = Map<string, unknown>

interface EvmWithTable {
  _precompiles: PrecompileTable
}

/** True when applying `overrides` changes which addresses are precompiles. */
export function touchesPrecompiles(evm: EVM, overrides: Overrides | undefined): boolean {
  if (overrides === undefined) return false
  const table = (evm as unknown as EvmWithTable)._precompiles
  for (const [address, o] of Object.entries(overrides)) {
    if (o.movePrecompileToAddress !== undefined || table.has(address.slice(2))) return true
  }
  return false
}

/**
 * Gives the EVM its own copy of the precompile table, to be changed by the overrides; returns what puts
 * the EVM's table back (the call sessions' EVMs outlive a call).
 */
export function ownPrecompileTable(evm: EVM): () => void {
  const holder = evm as unknown as EvmWithTable
  const original = holder._precompiles
  holder._precompiles = new Map(original)
  return () => {
    holder._precompiles = original
  }
}

export async function applyStateOverrides(sm: StateManagerInterface, evm: EVM, overrides: Overrides | undefined): Promise<void> {
  if (overrides === undefined) return
  const table = (evm as unknown as EvmWithTable)._precompiles
  const movedTo = new Set<string>()
  for (const [addr, o] of Object.entries(overrides)) {
    const key = addr.slice(2)
    if (movedTo.has(key)) throw serverError(`account ${toChecksumAddress(addr)} has already been overridden by a precompile`)
    const precompile = table.get(key)
    if (o.movePrecompileToAddress !== undefined) {
      if (precompile === undefined) throw serverError(`account ${toChecksumAddress(addr)} is not a precompile`)
      const to = o.movePrecompileToAddress
      if (overrides[to] !== undefined) throw serverError(`account ${toChecksumAddress(to)} is already overridden`)
      table.set(to.slice(2), precompile)
      movedTo.add(to.slice(2))
    }
    if (precompile !== undefined) table.delete(key)
    const address = new Address(hexToBytes(addr as `0x${string}`))
    const account = (await sm.getAccount(address)) ?? new Account()
    if (o.balance !== undefined) account.balance = o.balance
    if (o.nonce !== undefined) account.nonce = o.nonce
    await sm.putAccount(address, account)
    if (o.code !== undefined) await sm.putCode(address, o.code)
    if (o.state !== undefined) {
      await sm.clearStorage(address)
      for (const [slot, value] of Object.entries(o.state)) await sm.putStorage(address, slotBytes(slot), slotBytes(value))
    }
    if (o.stateDiff !== undefined) {
      for (const [slot, value] of Object.entries(o.stateDiff)) await sm.putStorage(address, slotBytes(slot), slotBytes(value))
    }
  }
}

function slotBytes(hex: string): Uint8Array {
  return setLengthLeft(hexToBytes(hex as `0x${string}`), 32)
}
