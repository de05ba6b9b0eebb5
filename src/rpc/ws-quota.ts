// Open WebSocket connections per client address, so one client cannot take every socket of the node.

export class ConnectionQuota {
  private readonly perIp = new Map<string, number>()

  /** limit 0 = unlimited */
  constructor(private readonly limit: number) {}

  /** Whether one more connection from `ip` would stay within the quota. */
  admits(ip: string): boolean {
    return this.limit === 0 || (this.perIp.get(ip) ?? 0) < this.limit
  }

  acquire(ip: string): void {
    this.perIp.set(ip, (this.perIp.get(ip) ?? 0) + 1)
  }

  release(ip: string): void {
    const count = this.perIp.get(ip)
    if (count === undefined) return
    if (count <= 1) this.perIp.delete(ip)
    else this.perIp.set(ip, count - 1)
  }

  /** Addresses holding at least one connection (a leak shows up here). */
  get addresses(): number {
    return this.perIp.size
  }
}
