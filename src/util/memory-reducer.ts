// V8's memory reducer watches an isolate go quiet after a burst and then runs full collections that
// shrink its heap. Those collections find every object of the burst dead, so V8 also drops the
// optimized code that embedded them, and the next burst pays to compile it again: the block producer
// of a fresh node idle for 40 s spent ~100 µs more CPU per transfer on its first native transfer run
// than one idle for 1 s. V8 reads the flag when it sets up an isolate's heap, so a thread keeps the
// setting that held when it started; the main thread's heap exists before Keel reads its options.
// Measured in bench/README.md (twenty-ninth session).

import { setFlagsFromString } from 'node:v8'

/** Turns V8's memory reducer on or off for the threads (isolates) started after this call. */
export function setMemoryReducer(enabled: boolean): void {
  setFlagsFromString(enabled ? '--memory-reducer' : '--no-memory-reducer')
}
