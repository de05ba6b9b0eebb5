// Decoding of revert data into geth's "execution reverted: <reason>" text: Error(string) and
// Panic(uint256) as geth's abi.UnpackRevert does; anything else (custom errors) has no text reason.

const ERROR_SELECTOR = '08c379a0'
const PANIC_SELECTOR = '4e487b71'

const PANIC_REASONS: Record<number, string> = {
  0x00: 'generic panic',
  0x01: 'assert(false)',
  0x11: 'arithmetic underflow or overflow',
  0x12: 'division or modulo by zero',
  0x21: 'enum overflow',
  0x22: 'invalid encoded storage byte array accessed',
  0x31: 'out-of-bounds array access; popping on an empty array',
  0x32: 'out-of-bounds access of an array or bytesN',
  0x41: 'out of memory',
  0x51: 'uninitialized function',
}

function word(hex: string, index: number): bigint | undefined {
  const start = 8 + index * 64
  if (hex.length < start + 64) return undefined
  return BigInt(`0x${hex.slice(start, start + 64)}`)
}

/** The reason text, or undefined when the data is not Error(string) / Panic(uint256). */
export function decodeRevertReason(dataHex: string): string | undefined {
  const hex = dataHex.startsWith('0x') ? dataHex.slice(2) : dataHex
  const selector = hex.slice(0, 8).toLowerCase()
  if (selector === PANIC_SELECTOR) {
    const code = word(hex, 0)
    if (code === undefined) return undefined
    return code < 0x100n && PANIC_REASONS[Number(code)] !== undefined
      ? PANIC_REASONS[Number(code)]
      : `unknown panic code: 0x${code.toString(16)}`
  }
  if (selector !== ERROR_SELECTOR) return undefined
  const offset = word(hex, 0)
  if (offset === undefined || offset > BigInt(hex.length)) return undefined
  const lengthWord = 8 + Number(offset) * 2
  if (hex.length < lengthWord + 64) return undefined
  const length = Number(BigInt(`0x${hex.slice(lengthWord, lengthWord + 64)}`))
  const start = lengthWord + 64
  if (hex.length < start + length * 2) return undefined
  return Buffer.from(hex.slice(start, start + length * 2), 'hex').toString('utf8')
}
