// The text geth gives an exceptional halt of the EVM (core/vm/errors.go), from @ethereumjs's EVMError.
// eth_call and eth_estimateGas answer it as a -32000 error, eth_createAccessList as its `error` field.
// Clients show it to the user as it is, so it reads as geth's: the invalid opcode and the stack's height
// are named where geth names them.

/** What the EVM's patched interpreter (patches/) leaves on the error of the frame that halted. */
export interface HaltError {
  error: string
  keelOpcode?: number
  keelStackHeight?: number
}

const HALTS: Record<string, string> = {
  'out of gas': 'out of gas',
  'stack overflow': 'stack limit reached 1024 (1023)',
  'static state change': 'write protection',
  'code size to deposit exceeds maximum code size': 'max code size exceeded',
  'code store out of gas': 'contract creation code storage out of gas',
  'create collision': 'contract address collision',
  'value overflow': 'gas uint64 overflow',
  'invalid bytecode deployed': 'invalid code: must not begin with 0xef',
  'invalid input length': 'invalid input length',
  'initcode exceeds max initcode size': 'max initcode size exceeded',
  'insufficient balance': 'insufficient balance for transfer',
}

// The items each opcode takes from the stack (geth's minStack), for the ones with a fixed name; DUPn,
// SWAPn and LOGn are computed.
const STACK_INPUTS: Record<number, number> = {
  0x01: 2, 0x02: 2, 0x03: 2, 0x04: 2, 0x05: 2, 0x06: 2, 0x07: 2, 0x08: 3, 0x09: 3, 0x0a: 2, 0x0b: 2,
  0x10: 2, 0x11: 2, 0x12: 2, 0x13: 2, 0x14: 2, 0x15: 1, 0x16: 2, 0x17: 2, 0x18: 2, 0x19: 1, 0x1a: 2,
  0x1b: 2, 0x1c: 2, 0x1d: 2, 0x1e: 1, 0x20: 2,
  0x31: 1, 0x35: 1, 0x37: 3, 0x39: 3, 0x3b: 1, 0x3c: 4, 0x3e: 3, 0x3f: 1,
  0x40: 1, 0x49: 1,
  0x50: 1, 0x51: 1, 0x52: 2, 0x53: 2, 0x54: 1, 0x55: 2, 0x56: 1, 0x57: 2, 0x5c: 1, 0x5d: 2, 0x5e: 3,
  0xf0: 3, 0xf1: 7, 0xf2: 7, 0xf3: 2, 0xf4: 6, 0xf5: 4, 0xfa: 6, 0xfd: 2, 0xff: 1,
}

function stackInputs(op: number): number | undefined {
  if (op >= 0x80 && op <= 0x8f) return op - 0x7f
  if (op >= 0x90 && op <= 0x9f) return op - 0x8e
  if (op >= 0xa0 && op <= 0xa4) return op - 0x9e
  return STACK_INPUTS[op]
}

/** geth's OpCode.String() for an opcode the EVM rejected: INVALID (0xfe) or an undefined byte. */
function invalidOpcodeName(op: number): string {
  return op === 0xfe ? 'INVALID' : `opcode 0x${op.toString(16)} not defined`
}

export function haltMessage(halt: HaltError): string {
  const { error, keelOpcode: op, keelStackHeight: height } = halt
  // @ethereumjs appends where the jump was ("invalid JUMP at <code hash>/<address>:<pc>")
  if (error.startsWith('invalid JUMP')) return 'invalid jump destination'
  if (error === 'invalid opcode') return op === undefined ? error : `invalid opcode: ${invalidOpcodeName(op)}`
  if (error === 'stack underflow') {
    const required = op === undefined ? undefined : stackInputs(op)
    return required === undefined || height === undefined ? error : `stack underflow (${height} <=> ${required})`
  }
  return HALTS[error] ?? error
}
