// V8's memory reducer watches an isolate go quiet after a burst and then runs full collections that
// shrink its heap. Those collections find every object of the burst dead, so V8 also drops the
// optimized code that embedded them, and the next burst pays to compile it again: a fresh node idle
// for 40 s spent ~100 µs more CPU per transfer on its first native transfer run than one idle for 1 s.
// V8 reads the flag when it sets up an isolate's heap, so setting it here, before the producer and the
// call workers start, turns the reducer off for those threads; the main thread's heap already exists
// and keeps it. Measured in bench/README.md (twenty-ninth session).

import { setFlagsFromString } from 'node:v8'

/** Lets (true) or keeps (false) V8's memory reducer from shrinking the heaps of threads started after this call. */
export function applyIdleHeapShrink(enabled: boolean): void {
  setFlagsFromString(enabled ? '--memory-reducer' : '--no-memory-reducer')
}
