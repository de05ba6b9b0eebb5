// Go's time.Duration formatting for whole milliseconds ("300ms", "1.5s", "1m30s"): geth prints its
// timeouts this way, and clients match its messages.

export function goDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`
  const s = ms / 1000
  if (s < 60) return `${s}s`
  const m = Math.floor(s / 60)
  const rest = s - m * 60
  return m < 60 ? `${m}m${rest}s` : `${Math.floor(m / 60)}h${m % 60}m${rest}s`
}
