// Between two full collections V8 lets an isolate's old generation grow to a limit it derives from the
// live size after the last one, by a factor of up to 4 on small heaps when collecting is cheap. Keel's
// main thread keeps ~20-35 MiB live, yet under the bench's transfers it grew to 80 MiB of old space
// before V8 collected it, on top of the other threads doing the same. A fixed factor bounds that growth;
// the flag is process-wide, so it applies to the producer and the call workers too, and V8 reads it each
// time it recomputes a limit, so setting it at start (after V8 is up) takes effect from the first
// collection on. Measured in commit 8fb7388 (bench/README.md there).

import { setFlagsFromString } from 'node:v8'

/** Sets V8's old-generation growing factor to 1 + percent/100 for every isolate; 0 keeps V8's own. */
export function applyHeapGrowthPercent(percent: number): void {
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${Math.trunc(percent)}`)
}
