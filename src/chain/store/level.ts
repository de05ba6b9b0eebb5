// Opening the chain database. Every handle in the process (producer, main thread, call workers) must
// open with multithreading: true, or LevelDB refuses the second handle with a LOCK error.

import { ClassicLevel } from 'classic-level'

export type ChainLevel = ClassicLevel<Uint8Array, Uint8Array>

export interface OpenOptions {
  /** LevelDB block cache; the writer gets more, readers rely on it too. */
  cacheSize?: number
  writeBufferSize?: number
  /** Readers never create the database. */
  createIfMissing?: boolean
}

export async function openChainLevel(location: string, opts: OpenOptions = {}): Promise<ChainLevel> {
  const level = new ClassicLevel<Uint8Array, Uint8Array>(location, {
    keyEncoding: 'view',
    valueEncoding: 'view',
    multithreading: true,
    cacheSize: opts.cacheSize ?? 8 << 20,
    writeBufferSize: opts.writeBufferSize ?? 16 << 20,
    createIfMissing: opts.createIfMissing ?? true,
  })
  await level.open()
  return level
}
