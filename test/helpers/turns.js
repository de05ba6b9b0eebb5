// Counts the turns of the event loop other callbacks get: a setImmediate chain, from start() to stop().

export function countTurns() {
  let turns = 0
  let counting = true
  const tick = () => {
    turns++
    if (counting) setImmediate(tick)
  }
  setImmediate(tick)
  return {
    /** Ends the count; the turns so far. */
    stop() {
      counting = false
      return turns
    },
  }
}
