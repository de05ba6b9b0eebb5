// Which browser origins may call the node (--cors-origins). "*" (the default, as public endpoints and
// geth's --http.corsdomain "*" do) lets any dapp call; a list echoes the request's Origin only when listed.

export class CorsPolicy {
  private constructor(
    private readonly any: boolean,
    private readonly origins: ReadonlySet<string>,
  ) {}

  /** Comma-separated origins ("https://app.example.com"), or "*". */
  static parse(list: string | undefined): CorsPolicy {
    const entries = (list ?? '*').split(',').map((o) => o.trim().replace(/\/+$/, '').toLowerCase()).filter((o) => o !== '')
    if (entries.length === 0 || entries.includes('*')) return new CorsPolicy(true, new Set())
    return new CorsPolicy(false, new Set(entries))
  }

  /** True when the answer depends on the Origin header (responses then carry Vary: Origin). */
  get variesByOrigin(): boolean {
    return !this.any
  }

  /** The Access-Control-Allow-Origin value for a request with this Origin header; '' = send none. */
  allowOrigin(origin: string): string {
    if (this.any) return '*'
    return origin !== '' && this.origins.has(origin.toLowerCase()) ? origin : ''
  }
}
