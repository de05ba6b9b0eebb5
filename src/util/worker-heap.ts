// V8 grows each isolate's young generation up to 3 x 16 MiB semi-spaces and keeps it committed: with a
// producer and call workers next to the main thread, that was ~100 MiB of resident memory.
// Garbage in these threads dies young; 8 MiB semi-spaces keep the scavenges cheap and the eth_call /
// eth_estimateGas throughput where it was (measured with bench/macro), and the memory down.

export const WORKER_HEAP_LIMITS = { maxYoungGenerationSizeMb: 24 }
