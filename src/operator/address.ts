// Recipient addresses typed by an operator: 0x + 40 hex digits; a mixed-case address must carry a
// valid EIP-55 checksum, so that a typo in a checksummed address is caught before tokens move.

import { isValidChecksumAddress, toChecksumAddress } from '@ethereumjs/util'
import { Refusal } from './refusal.js'

/** Returns the checksummed form of a valid address. */
export function checkAddress(text: string): string {
  if (!/^0x[0-9a-fA-F]{40}$/.test(text)) {
    throw new Refusal(`invalid address "${text}": expected 0x followed by 40 hex digits`)
  }
  const body = text.slice(2)
  const mixedCase = body !== body.toLowerCase() && body !== body.toUpperCase()
  if (mixedCase && !isValidChecksumAddress(text)) {
    throw new Refusal(`invalid address "${text}": wrong EIP-55 checksum (mistyped?); check the address, or give it all in lowercase to skip the check`)
  }
  return toChecksumAddress(text.toLowerCase())
}
