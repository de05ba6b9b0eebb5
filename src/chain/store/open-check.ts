// The chain database a node opens at start, checked before anything writes to it. LevelDB opens a folder
// whose CURRENT file is gone as a new, empty database (create_if_missing) and then deletes the old table
// files as obsolete; it opens a folder with a truncated table file and fails only when a read reaches it.
// So a node refuses to start, writing nothing, when:
//  - the folder holds files but no CURRENT (the manifest pointer) or LevelDB refuses to open it (a missing
//    table file, a damaged manifest: LevelDB's own checks at open);
//  - a live table file is not the size LevelDB recorded or does not end in its table footer (truncated,
//    overwritten);
//  - the head pointer, the head's header and canonical hash or its state root node cannot be read.
// A full walk is `keel db check`; this costs a stat and an 8-byte read per table file and a few reads,
// whatever the chain's size. LevelDB's open may itself rewrite its manifest and turn its log into a
// table; no table file is changed or removed before these checks pass.

import { closeSync, existsSync, fstatSync, openSync, readdirSync, readSync } from 'node:fs'
import { join } from 'node:path'
import { RLP } from '@ethereumjs/rlp'
import { bytesToHex, equalsBytes, KECCAK256_RLP } from '@ethereumjs/util'
import { openChainLevel } from './level.js'
import type { ChainLevel } from './level.js'
import { decodeHead, Keys } from './schema.js'

/** LevelDB's table footer: the last 8 bytes of every table file (kTableMagicNumber, little-endian). */
const TABLE_MAGIC = Uint8Array.of(0x57, 0xfb, 0x80, 0x8b, 0x24, 0x75, 0x47, 0xdb)
const FOOTER_BYTES = 48

export class DamagedDatabase extends Error {
  constructor(
    readonly chainDir: string,
    readonly problem: string,
  ) {
    const dataDir = join(chainDir, '..')
    super(
      `the chain database ${chainDir} cannot be used: ${problem}. The node did not start and wrote nothing to it. ` +
        `To find the first damaged block: keel db check --data-dir ${dataDir}. ` +
        `To let LevelDB rebuild its index of table files (it keeps a copy of the folder first): keel db repair --data-dir ${dataDir}. ` +
        `Or start from a backup: keel restore BACKUP_DIR --data-dir NEW_DIR.`,
    )
    this.name = 'DamagedDatabase'
  }
}

/**
 * The live table files (LevelDB's own list, `leveldb.sstables`: number and size per file) that are
 * missing, of another size than LevelDB recorded, or not ending in a table footer. Files outside the
 * list (a compaction's output cut short by a crash) are LevelDB's garbage, deleted at open, not damage.
 * A compaction LevelDB starts at open deletes the files it merged once it has installed its output, so a
 * file missing from an older list is damage only while the current list still names it.
 */
export function damagedTableFiles(level: ChainLevel, chainDir: string): string[] {
  let listed = level.getProperty('leveldb.sstables')
  for (let attempt = 1; ; attempt++) {
    const { bad, missing } = checkTableFiles(listed, chainDir)
    if (!missing || attempt === LIST_ATTEMPTS) return bad
    const now = level.getProperty('leveldb.sstables')
    if (now === listed) return bad
    listed = now
  }
}

/** Lists read while compactions replace files under the check; each one installed changes the list. */
const LIST_ATTEMPTS = 10

function checkTableFiles(listed: string, chainDir: string): { bad: string[]; missing: boolean } {
  const bad: string[] = []
  let missing = false
  for (const [, number, recorded] of listed.matchAll(/^ (\d+):(\d+)\[/gm)) {
    const base = number.padStart(6, '0')
    const table = openTable(chainDir, base)
    if (table === undefined) {
      bad.push(`${base}.ldb (missing)`)
      missing = true
      continue
    }
    const { fd, name } = table
    try {
      const size = fstatSync(fd).size
      const tail = new Uint8Array(TABLE_MAGIC.length)
      if (size !== Number(recorded)) bad.push(`${name} (${size} bytes, LevelDB recorded ${recorded})`)
      else if (size < FOOTER_BYTES || readSync(fd, tail, 0, tail.length, size - tail.length) !== tail.length || !equalsBytes(tail, TABLE_MAGIC)) {
        bad.push(`${name} (no LevelDB table footer)`)
      }
    } finally {
      closeSync(fd)
    }
  }
  return { bad, missing }
}

/** Table file `base` opened for reading (LevelDB names it .ldb, older versions .sst), or undefined when it is not there. */
function openTable(chainDir: string, base: string): { fd: number; name: string } | undefined {
  for (const name of [`${base}.ldb`, `${base}.sst`]) {
    try {
      return { fd: openSync(join(chainDir, name), 'r'), name }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
    }
  }
  return undefined
}

/** Opens the chain a node starts on (creating it only in a new folder), or throws DamagedDatabase. */
export async function openChainForStart(chainDir: string): Promise<ChainLevel> {
  const holdsFiles = existsSync(chainDir) && readdirSync(chainDir).length > 0
  if (holdsFiles && !existsSync(join(chainDir, 'CURRENT'))) {
    throw new DamagedDatabase(chainDir, 'its CURRENT file (the pointer to the manifest) is missing')
  }
  let level: ChainLevel
  try {
    level = await openChainLevel(chainDir, { createIfMissing: !holdsFiles })
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause
    if (cause?.code === 'LEVEL_LOCKED' || /in use by another process/.test((err as Error).message)) throw err
    throw new DamagedDatabase(chainDir, `LevelDB cannot open it: ${cause?.message ?? (err as Error).message}`)
  }
  if (!holdsFiles) return level
  try {
    const bad = damagedTableFiles(level, chainDir)
    if (bad.length > 0) throw new DamagedDatabase(chainDir, `table file ${bad.join(', ')} is truncated or overwritten`)
    await checkHead(level, chainDir)
  } catch (err) {
    await level.close()
    throw err
  }
  return level
}

async function checkHead(level: ChainLevel, chainDir: string): Promise<void> {
  const damaged = (problem: string) => new DamagedDatabase(chainDir, problem)
  let headBytes: Uint8Array | undefined
  try {
    headBytes = await level.get(Keys.meta('head'))
    if (headBytes === undefined) {
      // a folder with a chain always has a head; one whose first start stopped before the genesis has no keys
      const it = level.keys({ limit: 1 })
      const any = await it.next()
      await it.close()
      if (any !== undefined) throw damaged('it holds keys but no head pointer (m head)')
      return
    }
    const { number, hash } = decodeHead(headBytes)
    const [canonical, headerRlp] = await level.getMany([Keys.canonicalHash(number), Keys.header(number)])
    if (canonical === undefined || !equalsBytes(canonical, hash)) throw damaged(`the head pointer names block ${number} ${bytesToHex(hash)}, whose canonical hash entry is ${canonical === undefined ? 'missing' : bytesToHex(canonical)}`)
    if (headerRlp === undefined) throw damaged(`the head block ${number} has no header`)
    const stateRoot = (RLP.decode(headerRlp) as Uint8Array[])[3]
    if (!equalsBytes(stateRoot, KECCAK256_RLP) && (await level.get(Keys.trieNode(stateRoot))) === undefined) {
      throw damaged(`the state root ${bytesToHex(stateRoot)} of the head block ${number} is missing`)
    }
  } catch (err) {
    if (err instanceof DamagedDatabase) throw err
    // a read that reached a damaged table: LevelDB's Corruption or IO error
    throw damaged(`reading the head failed: ${(err as Error).message}`)
  }
}
