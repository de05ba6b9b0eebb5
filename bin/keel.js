#!/bin/sh
':' //; flags=--max-semi-space-size=4; [ "$(nproc 2>/dev/null || echo 3)" -gt 2 ] || flags="$flags --single-threaded-gc"; exec node $flags "$0" "$@"
// Lines 1-2 are Keel's default launch (npm start, the installed `keel` command and the Docker image run this
// file as a program): sh runs line 2 and execs node, for which it is a string and a comment. Node's flags:
//  - --max-semi-space-size=4: the main thread's young generation at 3 x 4 MiB instead of V8's 3 x 16 MiB,
//    ~33 MiB less resident under load at the same CPU per request (bench/README.md, "Main thread's young
//    generation"). The threads Keel starts set their own (src/util/worker-heap.ts).
//  - --single-threaded-gc on a host with two CPUs or fewer: V8's helper threads for parallel and concurrent
//    collection compete with Keel's own threads for the cores; without them a mined transfer costs ~9% less
//    CPU (bench/README.md, "Single-threaded GC on small hosts"). V8 takes GC flags only on the command line.
import { main } from '../dist/cli/main.js'
main(process.argv.slice(2)).catch((err) => {
  process.stderr.write(`keel: ${err instanceof Error ? err.message : String(err)}\n`)
  process.exit(1)
})
