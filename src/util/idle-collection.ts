// A thread that has gone quiet keeps the heap its last burst grew: V8 shrinks the young generation only
// in a collection that finds the allocation rate low, and an idle thread runs none. A call worker is idle
// while the node mines transfers, and the block producer between bursts of transactions; the young
// generation each burst grew counted in the node's resident memory
// (docs/measurements.md#an-idle-threads-heap).
//
// So, once per idle spell: a scavenge after a second, and another after `idleMs`. V8 rates allocation as
// the bytes since its last collection over the time since; after the first, the second sees only the
// idle seconds and takes the young generation to its least. Not a full collection: it also shrinks the
// old generation, but the burst after it ran 14-23% slower (V8 dropped what the thread had compiled).

import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

// V8's gc() with `{ type: 'minor' }`: a scavenge (with no argument it runs a full collection)
type Gc = (options: { type: 'minor' }) => void

let gc: Gc | null | undefined

/**
 * V8's gc(), from a context made while --expose-gc holds; null if V8 did not give it. The flag is
 * process-wide and left set: call workers reach their first idle spell together, and one clearing it
 * while another makes its context would leave the other without gc() (only new contexts see the flag,
 * and Keel makes none other).
 */
function exposedGc(): Gc | null {
  if (gc === undefined) {
    setFlagsFromString('--expose-gc')
    try {
      const fn: unknown = runInNewContext('gc')
      gc = typeof fn === 'function' ? (fn as Gc) : null
    } catch {
      gc = null
    }
  }
  return gc
}

/** When the first scavenge runs, in ms of an idle spell. */
const SCAVENGE_AFTER_MS = 1000

/** The idle time before the closing scavenge, for every thread that runs one (call workers, the producer). */
export const IDLE_COLLECTION_MS = 6000

export class IdleCollection {
  private open = 0
  private lastEnd = performance.now()
  /** the current idle spell's steps done (start-up's garbage counts as work: a node's first spell collects) */
  private scavenged = false
  private collected = false
  private readonly timer: NodeJS.Timeout
  /** idle spells' closing scavenges run (tests, benchmarks) */
  collections = 0

  constructor(
    /** idle time before the closing scavenge; V8 rates allocation over 5 s, so at least SCAVENGE_AFTER_MS + 5 s */
    private readonly idleMs: number,
    checkEveryMs = 500,
    /** work that begin()/end() do not bracket (the producer's seals): while it answers false, the spell waits */
    private readonly quiet: () => boolean = () => true,
  ) {
    this.timer = setInterval(() => this.check(), checkEveryMs)
    this.timer.unref()
  }

  begin(): void {
    this.open++
    this.scavenged = false
    this.collected = false
  }

  end(): void {
    this.open--
    this.lastEnd = performance.now()
  }

  stop(): void {
    clearInterval(this.timer)
  }

  private check(): void {
    if (this.open > 0 || this.collected) return
    if (!this.quiet()) {
      this.lastEnd = performance.now()
      return
    }
    const collect = exposedGc()
    // without gc() the thread keeps its heap until V8 collects it, as before this existed
    if (collect === null) return this.stop()
    const idle = performance.now() - this.lastEnd
    if (!this.scavenged && idle >= Math.min(SCAVENGE_AFTER_MS, this.idleMs)) {
      this.scavenged = true
      collect({ type: 'minor' })
    }
    if (idle >= this.idleMs) {
      this.collected = true
      this.collections++
      collect({ type: 'minor' })
    }
  }
}
