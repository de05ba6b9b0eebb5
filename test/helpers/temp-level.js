// A chain LevelDB in a temporary folder for one test: closed and removed when the test ends.

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openChainLevel } from '../../dist/chain/store/level.js'

/** `t`: the test (its `after` closes the database and removes the folder); `name`: the folder's prefix. */
export async function tempLevel(t, name) {
  const dir = mkdtempSync(join(tmpdir(), `keel-${name}-`))
  const level = await openChainLevel(dir)
  t.after(async () => {
    await level.close()
    rmSync(dir, { recursive: true, force: true })
  })
  return level
}
