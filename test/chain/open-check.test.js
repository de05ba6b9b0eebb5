// The start's table-file check against LevelDB's own list of live files: a compaction that LevelDB starts
// at open can delete files it merged while the check reads the list, and a file gone from the list by
// then is not damage. The compaction is stood in for by a list that names one more file the first time
// it is read (a file the compaction has since removed), over a real database's list and files.

import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { openChainLevel } from '../../dist/chain/store/level.js'
import { damagedTableFiles } from '../../dist/chain/store/open-check.js'

const dir = mkdtempSync(join(tmpdir(), 'keel-open-check-'))
let level

before(async () => {
  const first = await openChainLevel(dir)
  await first.batch(Array.from({ length: 2000 }, (_, i) => ({ type: 'put', key: Uint8Array.of(0x6b, i >> 8, i & 255), value: new Uint8Array(64).fill(i & 255) })))
  await first.close()
  // opening again turns the log into a table file
  level = await openChainLevel(dir)
  assert.match(level.getProperty('leveldb.sstables'), /^ \d+:\d+\[/m, 'a table file to list')
})
after(async () => {
  await level?.close()
  rmSync(dir, { recursive: true, force: true })
})

/** The real list with one more level-0 file, which is not on disk. */
const withGoneFile = (listed) => listed.replace('--- level 0 ---\n', "--- level 0 ---\n 999999:4096['a' @ 1 : 1 .. 'b' @ 2 : 1]\n")

test('a listed file that the current list no longer names (a compaction removed it) is not damage', () => {
  let reads = 0
  const racing = { getProperty: (name) => (reads++ === 0 ? withGoneFile(level.getProperty(name)) : level.getProperty(name)) }
  assert.deepEqual(damagedTableFiles(racing, dir), [])
  assert.equal(reads, 2, 'the list read again')
})

test('a file the current list still names and the folder lacks is damage', () => {
  const damaged = { getProperty: (name) => withGoneFile(level.getProperty(name)) }
  assert.deepEqual(damagedTableFiles(damaged, dir), ['999999.ldb (missing)'])
  assert.deepEqual(damagedTableFiles(level, dir), [])
})
