// An RLP list from items already encoded one by one: a long list (a block's 2,000 receipts) can then be
// encoded in slices, with turns of the event loop between items, and joined at the end in one copy.

/** RLP.encode([a, b, ...]) from RLP.encode(a), RLP.encode(b), ... */
export function joinRlpList(items: readonly Uint8Array[]): Uint8Array {
  let length = 0
  for (const item of items) length += item.length
  // the list's prefix: 0xc0 + length up to 55 bytes, else 0xf7 + the length's own byte count, then the length
  const lengthBytes: number[] = []
  if (length > 55) for (let n = length; n > 0; n = Math.floor(n / 256)) lengthBytes.unshift(n % 256)
  const out = new Uint8Array(1 + lengthBytes.length + length)
  out[0] = length > 55 ? 0xf7 + lengthBytes.length : 0xc0 + length
  out.set(lengthBytes, 1)
  let at = 1 + lengthBytes.length
  for (const item of items) {
    out.set(item, at)
    at += item.length
  }
  return out
}
