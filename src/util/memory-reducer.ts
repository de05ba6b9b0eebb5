// V8's memory reducer watches an isolate go quiet after a burst and then runs full collections that
// shrink its heap. Those collections find every object of the burst dead, so V8 also drops the
// optimized code that embedded them, and the next burst pays to compile it again: the block producer
// of a fresh node idle for 40 s spent ~100 µs more CPU per transfer on its first native transfer run
// than one idle for 1 s. V8 reads the flag when it sets up an isolate's heap, so a thread keeps the
// setting that held when it started; the main thread's heap exists before Keel reads its options.
// Measured in commit 284d1c1 (bench/README.md there).

import { setFlagsFromString } from 'node:v8'

/** Turns V8's memory reducer on or off for the threads (isolates) started after this call. */
export function setMemoryReducer(enabled: boolean): void {
  setFlagsFromString(enabled ? '--memory-reducer' : '--no-memory-reducer')
}

/**
 * The setting node's own flags gave the process (`node --no-memory-reducer bin/keel.js`; V8 takes the
 * last of them and reads `_` as `-`): what Keel restores after turning the reducer off for one thread,
 * since V8 has no way to read a flag back. NODE_OPTIONS may not carry this flag (node refuses it there).
 */
export function memoryReducerAtStart(execArgv: readonly string[] = process.execArgv): boolean {
  let enabled = true
  for (const arg of execArgv) {
    const flag = arg.replaceAll('_', '-')
    if (flag === '--memory-reducer') enabled = true
    else if (flag === '--no-memory-reducer' || flag === '--nomemory-reducer') enabled = false
  }
  return enabled
}
