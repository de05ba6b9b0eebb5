// Native token amounts: decimal text in ether (18 decimals), gwei (9) or wei (0) <-> wei as bigint.

import { Refusal } from './refusal.js'

export const UNITS = { ether: 18, gwei: 9, wei: 0 } as const
export type Unit = keyof typeof UNITS

export function parseUnit(text: string): Unit {
  if (Object.hasOwn(UNITS, text)) return text as Unit
  throw new Refusal(`invalid --unit "${text}": expected ether, gwei or wei`)
}

/** "1.5" ether -> 1500000000000000000n. Refuses zero, negative, malformed and over-precise amounts. */
export function parseAmount(text: string, unit: Unit): bigint {
  const decimals = UNITS[unit]
  if (/^-\s*(\d+\.?\d*|\.\d+)$/.test(text)) throw new Refusal(`amount must be greater than zero (got ${text})`)
  const match = /^(\d*)(?:\.(\d*))?$/.exec(text)
  if (match === null || text === '' || text === '.') {
    throw new Refusal(`invalid amount "${text}": expected a decimal number of ${unit}`)
  }
  const whole = match[1] ?? ''
  const fraction = (match[2] ?? '').replace(/0+$/, '')
  if (fraction.length > decimals) {
    throw new Refusal(
      decimals === 0
        ? `invalid amount "${text}": wei amounts are whole numbers`
        : `invalid amount "${text}": ${unit} has at most ${decimals} decimals`,
    )
  }
  const wei = BigInt(whole === '' ? '0' : whole) * 10n ** BigInt(decimals) + BigInt(fraction.padEnd(decimals, '0') || '0')
  if (wei === 0n) throw new Refusal(`amount must be greater than zero (got ${text})`)
  return wei
}

/** 1500000000000000000n -> "1.5" (in ether unless another unit is asked for). */
export function formatAmount(wei: bigint, unit: Unit = 'ether'): string {
  const decimals = UNITS[unit]
  if (decimals === 0) return wei.toString()
  const negative = wei < 0n
  const abs = negative ? -wei : wei
  const base = 10n ** BigInt(decimals)
  const fraction = (abs % base).toString().padStart(decimals, '0').replace(/0+$/, '')
  return `${negative ? '-' : ''}${abs / base}${fraction === '' ? '' : `.${fraction}`}`
}
