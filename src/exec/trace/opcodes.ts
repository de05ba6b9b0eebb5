// The opcodes the tracers look for, by their byte.

export const SLOAD = 0x54
export const SSTORE = 0x55
export const BALANCE = 0x31
export const EXTCODESIZE = 0x3b
export const EXTCODECOPY = 0x3c
export const EXTCODEHASH = 0x3f
export const LOG0 = 0xa0
export const LOG4 = 0xa4
export const CREATE = 0xf0
export const CALL = 0xf1
export const CALLCODE = 0xf2
export const DELEGATECALL = 0xf4
export const CREATE2 = 0xf5
export const STATICCALL = 0xfa
export const SELFDESTRUCT = 0xff

/** The stipend a call with value gives its callee on top of the gas it passes. */
export const CALL_STIPEND = 2300n
