// V8 grows each isolate's young generation up to 3 x 16 MiB semi-spaces and keeps it committed: with a
// producer and call workers next to the main thread, that comes to ~100 MiB of resident memory. Garbage in
// these threads dies young; smaller semi-spaces keep the scavenges cheap and the memory down.
//  - call workers: 8 MiB semi-spaces; 4 MiB cost eth_estimateGas ~9% (5 alternating runs).
//  - the producer: 4 MiB semi-spaces (8 MiB less resident; transfers per second unchanged).
//  - the main thread: 4 MiB semi-spaces, from `--max-semi-space-size=4` on bin/keel.js's first line (only
//    a node flag sizes the main isolate). V8 lets that flag override every later isolate's own limit, so
//    once the main isolate is up it is cleared, and the threads above get theirs.

import { setFlagsFromString } from 'node:v8'

/** Lets threads started from now on size their young generation by their own resource limits. */
export function releaseSemiSpaceFlag(): void {
  setFlagsFromString('--max-semi-space-size=0')
}

export const CALL_WORKER_HEAP_LIMITS = { maxYoungGenerationSizeMb: 24 }
export const PRODUCER_HEAP_LIMITS = { maxYoungGenerationSizeMb: 12 }
