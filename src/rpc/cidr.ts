// IP addresses and CIDR ranges, IPv4 and IPv6, for the trusted-proxy list and the rate-limit allow-list.
// An IPv4-mapped IPv6 address (::ffff:1.2.3.4, what a dual-stack socket reports for an IPv4 peer) is
// treated as the IPv4 address, so "10.0.0.0/8" matches it.

/** A parsed address: IPv4 as 32 bits, IPv6 as 128 bits. */
export interface IpAddress {
  readonly v6: boolean
  readonly bits: bigint
}

const IPV4_PART = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/
const MAPPED_V4_PREFIX = 0xffffn << 32n

function parseIpv4(text: string): bigint | undefined {
  const parts = text.split('.')
  if (parts.length !== 4) return undefined
  let bits = 0n
  for (const part of parts) {
    if (!IPV4_PART.test(part)) return undefined
    bits = (bits << 8n) | BigInt(part)
  }
  return bits
}

function parseHextets(text: string, out: bigint[]): boolean {
  if (text === '') return true
  for (const group of text.split(':')) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(group)) return false
    out.push(BigInt(`0x${group}`))
  }
  return true
}

function parseIpv6(input: string): bigint | undefined {
  let text = input
  const zone = text.indexOf('%')
  if (zone >= 0) text = text.slice(0, zone)
  if (text.length < 2 || text.length > 45) return undefined
  // A trailing dotted IPv4 part is two groups: rewrite it as such.
  const lastColon = text.lastIndexOf(':')
  if (text.indexOf('.', lastColon) >= 0) {
    const v4 = parseIpv4(text.slice(lastColon + 1))
    if (v4 === undefined) return undefined
    text = `${text.slice(0, lastColon + 1)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`
  }
  const head: bigint[] = []
  const back: bigint[] = []
  const gap = text.indexOf('::')
  if (gap >= 0) {
    if (text.indexOf('::', gap + 1) >= 0) return undefined
    if (!parseHextets(text.slice(0, gap), head) || !parseHextets(text.slice(gap + 2), back)) return undefined
    const missing = 8 - head.length - back.length
    if (missing < 1) return undefined
    return join([...head, ...new Array<bigint>(missing).fill(0n), ...back])
  }
  if (!parseHextets(text, head) || head.length !== 8) return undefined
  return join(head)
}

const join = (groups: bigint[]): bigint => groups.reduce((acc, g) => (acc << 16n) | g, 0n)

/** Parses "1.2.3.4", "::1", "[::1]" or "::ffff:1.2.3.4" (as IPv4); undefined when it is not an address. */
export function parseIp(text: string): IpAddress | undefined {
  let value = text
  if (value.startsWith('[') && value.endsWith(']')) value = value.slice(1, -1)
  if (value.includes(':')) {
    const bits = parseIpv6(value)
    if (bits === undefined) return undefined
    if (bits >> 32n === MAPPED_V4_PREFIX >> 32n) return { v6: false, bits: bits & 0xffffffffn }
    return { v6: true, bits }
  }
  const bits = parseIpv4(value)
  return bits === undefined ? undefined : { v6: false, bits }
}

/** The canonical text of an address (IPv6 without zero compression: stable, not pretty). */
export function formatIp(ip: IpAddress): string {
  if (!ip.v6) return [24n, 16n, 8n, 0n].map((shift) => String((ip.bits >> shift) & 0xffn)).join('.')
  const groups: string[] = []
  for (let shift = 112n; shift >= 0n; shift -= 16n) groups.push(((ip.bits >> shift) & 0xffffn).toString(16))
  return groups.join(':')
}

export class Cidr {
  private readonly mask: bigint
  private readonly network: bigint

  constructor(
    readonly v6: boolean,
    network: bigint,
    readonly prefixLength: number,
  ) {
    const width = v6 ? 128n : 32n
    this.mask = ((1n << width) - 1n) ^ ((1n << (width - BigInt(prefixLength))) - 1n)
    this.network = network & this.mask
  }

  /** "10.0.0.0/8", "fd00::/8", or a bare address (a /32 or /128). Throws with a clear message otherwise. */
  static parse(text: string): Cidr {
    const slash = text.indexOf('/')
    const address = parseIp(slash < 0 ? text : text.slice(0, slash))
    if (address === undefined) throw new Error(`"${text}" is not an IP address or CIDR range`)
    const width = address.v6 ? 128 : 32
    let prefix = width
    if (slash >= 0) {
      const suffix = text.slice(slash + 1)
      prefix = /^\d{1,3}$/.test(suffix) ? Number(suffix) : Number.NaN
      // An IPv4-mapped network written in IPv6 form (::ffff:10.0.0.0/104) becomes its IPv4 prefix.
      if (!address.v6 && text.slice(0, slash).includes(':')) prefix -= 96
      if (!(prefix >= 0 && prefix <= width)) throw new Error(`"${text}" has an invalid prefix length (0-${width})`)
    }
    return new Cidr(address.v6, address.bits, prefix)
  }

  contains(ip: IpAddress): boolean {
    return ip.v6 === this.v6 && (ip.bits & this.mask) === this.network
  }

  toString(): string {
    return `${formatIp({ v6: this.v6, bits: this.network })}/${this.prefixLength}`
  }
}

/** A set of CIDR ranges; `has` takes address text as sockets and headers give it. */
export class CidrSet {
  readonly ranges: readonly Cidr[]

  constructor(ranges: readonly Cidr[]) {
    this.ranges = ranges
  }

  /** Comma-separated CIDRs; empty or undefined gives the empty set. */
  static parse(list: string | undefined): CidrSet {
    if (list === undefined) return new CidrSet([])
    const entries = list.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '')
    return new CidrSet(entries.map((entry) => Cidr.parse(entry)))
  }

  get size(): number {
    return this.ranges.length
  }

  has(ipText: string): boolean {
    if (this.ranges.length === 0) return false
    const ip = parseIp(ipText)
    return ip !== undefined && this.hasIp(ip)
  }

  hasIp(ip: IpAddress): boolean {
    for (const range of this.ranges) if (range.contains(ip)) return true
    return false
  }
}
