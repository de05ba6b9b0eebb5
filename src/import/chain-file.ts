// geth's chain export format (`geth export`, `geth import`): RLP-encoded blocks one after another, gzip
// when the file name ends in .gz. Read as a stream, one block at a time, so that a chain of any length
// is imported in the memory of a few blocks.

import { createReadStream, statSync } from 'node:fs'
import { createGunzip } from 'node:zlib'
import type { Readable } from 'node:stream'
import { ImportError } from './import-error.js'

export interface RawBlock {
  /** the block's RLP, as the file holds it */
  rlp: Uint8Array
  /** where it starts in the (uncompressed) file */
  offset: number
}

/** Bytes of the RLP item at the front of `buf`: its prefix and payload (undefined: the prefix is incomplete). */
function itemLength(buf: Uint8Array, at: number, end: number): number | undefined {
  const b = buf[at]
  if (b < 0xc0) return -1 // a block is a list; anything else is not a block
  if (b <= 0xf7) return 1 + (b - 0xc0)
  const lenBytes = b - 0xf7
  if (at + 1 + lenBytes > end) return undefined
  let len = 0
  for (let i = 0; i < lenBytes; i++) len = len * 256 + buf[at + 1 + i]
  return 1 + lenBytes + len
}

export interface ChainFile {
  path: string
  /** size on disk (compressed for .gz), for the progress estimate */
  size: number
  /** bytes of the file read so far (compressed for .gz) */
  readBytes(): number
  blocks(): AsyncGenerator<RawBlock>
}

export function openChainFile(path: string): ChainFile {
  let size: number
  try {
    size = statSync(path).size
  } catch (err) {
    throw new ImportError(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`)
  }
  const file = createReadStream(path, { highWaterMark: 1 << 20 })
  const stream: Readable = path.endsWith('.gz') ? file.pipe(createGunzip()) : file
  if (stream !== file) file.on('error', (err) => stream.destroy(err))
  return {
    path,
    size,
    readBytes: () => file.bytesRead,
    async *blocks() {
      let buf = new Uint8Array(0)
      let start = 0
      let offset = 0
      try {
        for await (const chunk of stream) {
          const joined = new Uint8Array(buf.length - start + (chunk as Buffer).length)
          joined.set(buf.subarray(start), 0)
          joined.set(chunk as Buffer, buf.length - start)
          buf = joined
          start = 0
          for (;;) {
            if (start >= buf.length) break
            const len = itemLength(buf, start, buf.length)
            if (len === -1) throw new ImportError(`${path}: byte ${offset} is not the start of an RLP-encoded block`)
            if (len === undefined || start + len > buf.length) break
            yield { rlp: buf.slice(start, start + len), offset }
            start += len
            offset += len
          }
        }
      } catch (err) {
        if (err instanceof ImportError) throw err
        throw new ImportError(`${path}: ${(err as Error).message}`)
      }
      if (start < buf.length) throw new ImportError(`${path}: truncated: the block at byte ${offset} ends past the end of the file (${offset + buf.length - start} bytes)`)
    },
  }
}
