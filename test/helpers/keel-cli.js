// Runs the `keel` command line (bin/keel.js) as a child process with a clean KEEL_* environment.

import { execFile } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

/** @returns {Promise<{code: number, stdout: string, stderr: string}>} */
export function keelCli(args, { env = {}, cwd = repoRoot, timeoutMs = 120_000 } = {}) {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('KEEL_')))
  return new Promise((resolve) => {
    execFile(process.execPath, [join(repoRoot, 'bin', 'keel.js'), ...args], { cwd, env: { ...clean, ...env }, timeout: timeoutMs },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }))
  })
}
