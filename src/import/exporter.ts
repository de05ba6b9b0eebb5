// keel export: blocks written in geth's chain file format (RLP blocks one after another, gzip for .gz),
// what `geth import` and `keel import` read. Every key is read from one LevelDB snapshot, and a block is
// written in one batch, so an export taken while the node seals blocks holds whole blocks up to the
// snapshot's head. The file is written under a temporary name and renamed once complete.

import { createWriteStream, existsSync, renameSync, rmSync } from 'node:fs'
import { once } from 'node:events'
import type { Writable } from 'node:stream'
import { createGzip } from 'node:zlib'
import { RLP } from '@ethereumjs/rlp'
import { bytesToHex } from '@ethereumjs/util'
import { decodeBody } from '../chain/body.js'
import { encodeBlockRlp } from '../chain/block-rlp.js'
import type { ChainLevel } from '../chain/store/level.js'
import { decodeHead, Keys } from '../chain/store/schema.js'
import { Refusal } from '../operator/refusal.js'

export interface ExportResult {
  file: string
  from: string
  to: string
  blocks: number
  bytes: number
  lastHash: string
}

export async function exportChain(level: ChainLevel, file: string, range: { from?: bigint; to?: bigint }): Promise<ExportResult> {
  if (existsSync(file)) throw new Refusal(`${file} exists; refusing to overwrite it`)
  const snapshot = level.snapshot()
  const tmp = `${file}.partial`
  try {
    const stored = await level.get(Keys.meta('head'), { snapshot })
    if (stored === undefined) throw new Refusal('the data folder has no chain to export')
    const head = decodeHead(stored).number
    const from = range.from ?? 0n
    const to = range.to ?? head
    if (from > to) throw new Refusal(`--from ${from} is after --to ${to}`)
    if (to > head) throw new Refusal(`--to ${to} is past the head (block ${head})`)
    const out = createWriteStream(tmp, { flags: 'wx' })
    const sink: Writable = file.endsWith('.gz') ? createGzip() : out
    if (sink !== out) sink.pipe(out)
    let bytes = 0
    let lastHash = ''
    for (let n = from; n <= to; n++) {
      const [headerRlp, bodyRlp, hash] = await level.getMany([Keys.header(n), Keys.body(n), Keys.canonicalHash(n)], { snapshot })
      if (headerRlp === undefined || bodyRlp === undefined || hash === undefined) throw new Error(`database corrupt: block ${n} is incomplete`)
      // a header with a withdrawals root (Shanghai on) has 17 fields or more: 15, then the base fee, then it
      const fields = (RLP.decode(headerRlp) as Uint8Array[]).length
      const rlp = encodeBlockRlp(headerRlp, decodeBody(bodyRlp), fields >= 17)
      bytes += rlp.length
      lastHash = bytesToHex(hash)
      if (!sink.write(rlp)) await once(sink, 'drain')
    }
    sink.end()
    await once(out, 'close')
    renameSync(tmp, file)
    return { file, from: from.toString(), to: to.toString(), blocks: Number(to - from + 1n), bytes, lastHash }
  } catch (err) {
    rmSync(tmp, { force: true })
    throw err
  } finally {
    await snapshot.close()
  }
}
