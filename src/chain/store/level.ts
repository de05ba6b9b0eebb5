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
  try {
    await level.open()
  } catch (err) {
    // the LOCK of another process (a second node on the same data folder): classic-level only says
    // "Database failed to open", with the reason in its cause
    const cause = (err as { cause?: { code?: string } }).cause
    if (cause?.code === 'LEVEL_LOCKED') {
      throw new Error(`the chain database ${location} is in use by another process (another node on the same --data-dir?)`, { cause })
    }
    throw err
  }
  return level
}
