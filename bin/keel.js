#!/usr/bin/env -S node --max-semi-space-size=4 --v8-pool-size=0
// The node flags above are Keel's default launch (npm start, the installed `keel` command and the Docker
// image run this file as a program): the main thread's young generation capped at 3 x 4 MiB instead of
// V8's 3 x 16 MiB, ~33 MiB less resident under load at the same CPU per request
// (docs/measurements.md#main-threads-young-generation); the threads Keel starts set their own
// (src/util/worker-heap.ts).
// V8's helper threads (parallel scavenges, concurrent marking) one fewer than the cores instead of
// node's fixed 4: on two cores one helper beside Keel's busy threads, 15-40 MiB less resident in long
// transfer runs and more transfers a second (docs/measurements.md#v8s-helper-threads).
import { main } from '../dist/cli/main.js'
main(process.argv.slice(2)).catch((err) => {
  process.stderr.write(`keel: ${err instanceof Error ? err.message : String(err)}\n`)
  process.exit(1)
})
