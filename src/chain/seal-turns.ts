// How long the seal's long steps (the state flush, the transaction and receipt tries, the commit) run
// between turns of the producer's event loop, in which submissions and pool queries are answered. The
// build itself turns every 2 ms (builder.ts). Turns every 2 ms through the seal too halved
// eth_sendRawTransaction's p99 but took ~8% of the ERC20 rate of the transfer bench (64 senders, each
// waiting for its answer): answered sooner, requests arrive spread out and each costs the main thread and
// the producer more. Every 5 ms keeps the rate and a lower p99 than long stretches gave (ERC20 84
// against 106 ms, native 64 against 102; docs/measurements.md#producer-turns-during-a-blocks-build).

export const SEAL_TURN_MS = 5
