// bin/keel.js as a program: sh runs its launch line, which execs node with Keel's node flags. A `node` and
// an `nproc` first on PATH stand in for the real ones, to read what it execs on hosts of each size.

import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { keelBin, keelNodeFlags } from '../../bench/lib/keel-launch.js'

function script(dir, name, body) {
  const path = join(dir, name)
  writeFileSync(path, `#!/bin/sh\n${body}\n`)
  chmodSync(path, 0o755)
}

/** The arguments bin/keel.js hands node when nproc prints `cpus` (or fails, when `cpus` is undefined). */
function launch(t, cpus) {
  const dir = mkdtempSync(join(tmpdir(), 'keel-launch-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  script(dir, 'node', 'for a in "$@"; do printf "%s\\n" "$a"; done')
  script(dir, 'nproc', cpus === undefined ? 'exit 1' : `echo ${cpus}`)
  return new Promise((resolve, reject) => {
    execFile(keelBin, ['start', '--dev', 'a b'], { env: { ...process.env, PATH: `${dir}:${process.env.PATH}` }, timeout: 10_000 },
      (err, stdout) => (err ? reject(err) : resolve(stdout.split('\n').slice(0, -1))))
  })
}

test('on two CPUs or fewer node runs with single-threaded GC; above, with V8\'s own', async (t) => {
  for (const cpus of [1, 2]) {
    assert.deepEqual(await launch(t, cpus), ['--max-semi-space-size=4', '--single-threaded-gc', keelBin, 'start', '--dev', 'a b'])
  }
  for (const cpus of [3, 64]) assert.deepEqual(await launch(t, cpus), ['--max-semi-space-size=4', keelBin, 'start', '--dev', 'a b'])
  // nproc missing or failing: V8's own collection
  assert.deepEqual(await launch(t, undefined), ['--max-semi-space-size=4', keelBin, 'start', '--dev', 'a b'])
})

test('keelNodeFlags (what benches and tests spawn node with) reads the same launch line', async (t) => {
  for (const cpus of [1, 2, 3, 64]) assert.deepEqual([...keelNodeFlags(cpus), keelBin, 'start', '--dev', 'a b'], await launch(t, cpus))
})
