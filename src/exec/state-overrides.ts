// State overrides (eth_call's third parameter, eth_simulateV1's stateOverrides) applied as geth's
// override.StateOverride.Apply applies them: balance, nonce, code, the whole storage or some slots,
// and movePrecompileToAddress. An override of a precompile's address takes the precompile away (its new
// code, if any, runs instead); a moved precompile answers at its new address.

import type { EVMInterface as EVM } from '@ethereumjs/evm'
import type { StateManagerInterface } from '@ethereumjs/common'
import { Account, Address, bytesToUnprefixedHex, hexToBytes, setLengthLeft, toChecksumAddress } from '@ethereumjs/util'
import { serverError } from '../errors.js'
import type { ExecAccountOverride } from './types.js'

export type Overrides = Record<string, ExecAccountOverride>

/** The precompiles by unprefixed lowercase address, as @ethereumjs's EVM keeps them. */
export type PrecompileTable = Map<string, unknown>

interface EvmWithTable {
  _precompiles: PrecompileTable
  getPrecompile?: (address: unknown) => unknown
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
 * Gives the EVM a copy of its precompile table for the overrides to change: calls find precompiles
 * there, while the fork's own set (what runTx warms, EIP-2929) stays as it is, as geth warms the
 * fork's precompiles whatever the overrides moved. `restore` puts the EVM back (the engine keeps
 * its per-state-root EVMs from call to call).
 */
export function ownPrecompileTable(evm: EVM): { table: PrecompileTable; restore: () => void } {
  const holder = evm as unknown as EvmWithTable
  const table = new Map(holder._precompiles)
  holder.getPrecompile = (address: unknown) =>
    table.get(typeof address === 'string' ? address.slice(2).padStart(40, '0').toLowerCase() : bytesToUnprefixedHex((address as Address).bytes))
  return {
    table,
    restore: () => {
      delete holder.getPrecompile
    },
  }
}

/** `precompiles`: the EVM's own table (ownPrecompileTable) when the overrides touch precompiles. */
export async function applyStateOverrides(sm: StateManagerInterface, overrides: Overrides | undefined, precompiles?: PrecompileTable): Promise<void> {
  if (overrides === undefined) return
  const table: PrecompileTable = precompiles ?? new Map()
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
    // a move alone changes no state: the precompile's address gets no account (geth writes none)
    if (o.balance === undefined && o.nonce === undefined && o.code === undefined && o.state === undefined && o.stateDiff === undefined) continue
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
