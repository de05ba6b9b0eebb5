// How bin/keel.js launches node: the flags of its launch line (sh runs it, node skips it), for this host,
// so that benches and tests that spawn `node bin/keel.js` measure the node as `keel` runs it.

import { readFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const keelBin = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'keel.js')

// ':' //; flags=FLAGS; [ "$(nproc …)" -gt CPUS ] || flags="$flags SMALL_HOST_FLAGS"; exec node $flags "$0" "$@"
const LAUNCH = /^':' \/\/; flags=(?<flags>[^;]*); \[ "\$\(nproc[^)]*\)" -gt (?<cpus>\d+) \] \|\| flags="\$flags (?<small>[^"]+)"; exec node \$flags "\$0" "\$@"$/

/** The node flags bin/keel.js's launch line gives node on a host with `cpus` CPUs (nproc, this host's by default). */
export function keelNodeFlags(cpus = availableParallelism()) {
  const line = readFileSync(keelBin, 'utf8').split('\n', 2)[1]
  const match = LAUNCH.exec(line)
  if (match === null) throw new Error(`bin/keel.js: unexpected launch line ${JSON.stringify(line)}`)
  const { flags, small } = match.groups
  return [...flags.split(' '), ...(cpus > Number(match.groups.cpus) ? [] : small.split(' '))].filter(Boolean)
}
