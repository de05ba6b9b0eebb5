// The @ethereumjs speedups every thread that runs the EVM (producer, call workers) relies on.
// patches/ (applied by patch-package when `npm ci` runs the install scripts) changes the packages' own
// code; the jump-destination cache wraps a method at run time. A node whose packages are not patched
// refuses to start: every call and block would be several times slower without saying why.

import { readFileSync } from 'node:fs'
import { ethereumjsEsmFile } from './evm-internals.js'
import { cacheJumpDestinations } from './jumpdest-cache.js'

/** The files patches/ changes, each with a line only the patched version has. */
export const PATCHED_FILES: ReadonlyArray<{ pkg: string; file: string; marker: string }> = [
  { pkg: '@ethereumjs/evm', file: 'evm.js', marker: 'function frameMessage(' },
  { pkg: '@ethereumjs/evm', file: 'evm.js', marker: 'this.keelSkipZeroValueTouch === true' },
  { pkg: '@ethereumjs/evm', file: 'interpreter.js', marker: 'async _runStepAsync(' },
  { pkg: '@ethereumjs/evm', file: 'interpreter.js', marker: 'this._runState.keelStopped === true' },
  { pkg: '@ethereumjs/evm', file: 'opcodes/functions.js', marker: 'runState.keelStopped = true' },
  { pkg: '@ethereumjs/evm', file: 'interpreter.js', marker: 'async _keelFinishStep(' },
  { pkg: '@ethereumjs/evm', file: 'interpreter.js', marker: 'e.keelStackHeight = this._runState.stack.length' },
  { pkg: '@ethereumjs/evm', file: 'interpreter.js', marker: 'const keelYield = this._evm.keelYield' },
  { pkg: '@ethereumjs/evm', file: 'opcodes/gas.js', marker: 'keel: handlers that await nothing are plain functions' },
  { pkg: '@ethereumjs/evm', file: 'memory.js', marker: 'const INITIAL_SIZE = 1024' },
  { pkg: '@ethereumjs/evm', file: 'memory.js', marker: 'function initialStore(' },
  { pkg: '@ethereumjs/evm', file: 'memory.js', marker: 'keelRelease() {' },
  { pkg: '@ethereumjs/evm', file: 'evm.js', marker: 'interpreterRes.runState.memory.keelRelease();' },
  { pkg: '@ethereumjs/evm', file: 'stack.js', marker: 'this._keelPopped = []' },
  { pkg: '@ethereumjs/evm', file: 'opcodes/functions.js', marker: 'function keelWriteWord(' },
  { pkg: '@ethereumjs/evm', file: 'interpreter.js', marker: 'opHandler(this._runState, this.common);' },
  { pkg: '@ethereumjs/evm', file: 'journal.js', marker: 'const KEEL_NO_SLOTS = new Set()' },
  { pkg: '@ethereumjs/evm', file: 'opcodes/gas.js', marker: 'async function keelLoadSlot(' },
  { pkg: '@ethereumjs/mpt', file: 'db/checkpointDB.js', marker: 'const convertedOps = new Array(opStack.length)' },
  { pkg: '@ethereumjs/util', file: 'bytes.js', marker: 'padded.set(msg, right ? 0 : length - msg.length)' },
  { pkg: '@ethereumjs/util', file: 'bytes.js', marker: 'const nativeHexSlice = Buffer.prototype.hexSlice' },
  { pkg: '@ethereumjs/util', file: 'bytes.js', marker: 'function smallBytesToBigInt(' },
  { pkg: '@ethereumjs/util', file: 'bytes.js', marker: 'keel: the same copy, as a plain Uint8Array' },
  { pkg: '@ethereumjs/rlp', file: 'index.js', marker: 'function decodeAt(' },
  { pkg: '@ethereumjs/vm', file: 'runTx.js', marker: 'opts.keelSkipSenderCodeCheck !== true' },
  { pkg: '@ethereumjs/vm', file: 'runTx.js', marker: 'opts.keelNoBaseFee === true' },
  { pkg: '@ethereumjs/vm', file: 'bloom/index.js', marker: 'const packed = bitPositions(e, this.keccakFunction);' },
  { pkg: '@ethereumjs/tx', file: 'util/internal.js', marker: 'opts.keelNoGasLimitCap !== true' },
  { pkg: '@ethereumjs/tx', file: 'capabilities/legacy.js', marker: 'const known = tx.cache.keelSenderAddress' },
]

/** The patched files that are not (empty when all are). */
export function unpatchedFiles(): string[] {
  return PATCHED_FILES.filter(({ pkg, file, marker }) => !readFileSync(ethereumjsEsmFile(pkg, file), 'utf8').includes(marker)).map(
    ({ pkg, file }) => `${pkg}/dist/esm/${file}`,
  )
}

/** Throws when a patched file is not: a node refuses to start rather than run several times slower. */
export function assertEvmPatched(): void {
  const missing = unpatchedFiles()
  if (missing.length > 0) {
    throw new Error(
      `${missing.join(', ')} not patched: patches/ is applied by patch-package when \`npm ci\` runs the ` +
        'install scripts; reinstall with `npm ci`',
    )
  }
}

export async function installEvmSpeedups(): Promise<void> {
  assertEvmPatched()
  await cacheJumpDestinations()
}
