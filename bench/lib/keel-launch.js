// How bin/keel.js launches node: the flags of its `#!/usr/bin/env -S node …` line, so that benches and
// tests that spawn `node bin/keel.js` measure the node as `keel` runs it.

import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const keelBin = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'keel.js')

/** The node flags of bin/keel.js's first line (empty when it names none). */
export function keelNodeFlags() {
  const first = readFileSync(keelBin, 'utf8').split('\n', 1)[0]
  const match = /^#!\/usr\/bin\/env -S node(?<flags>(?: --\S+)*)\s*$/.exec(first)
  if (match === null) throw new Error(`bin/keel.js: unexpected first line ${JSON.stringify(first)}`)
  return match.groups.flags.trim().split(' ').filter(Boolean)
}
