// Which address a request comes from. The socket peer, unless the peer is a trusted proxy: then the
// forwarding header is walked from the right (the hop the trusted proxy itself appended) skipping trusted
// hops, as eRPC does. Proxies that take the leftmost entry are spoofable, since the client writes it.
//
// X-Forwarded-For wins when present (what AWS/GCP load balancers, nginx, HAProxy and Envoy emit); RFC 7239
// `Forwarded` is read only without it. A proxy that emits only `Forwarded` must drop a client-sent
// X-Forwarded-For, or the client could choose its own address.

import type { CidrSet } from './cidr.js'
import { formatIp, parseIp } from './cidr.js'

export type HeaderReader = (lowerCaseName: string) => string

export type ClientIpResolver = (peerIp: string, header: HeaderReader) => string

/** A resolver for RpcServerOptions.resolveClientIp; with no trusted proxy, the peer as is. */
export function createClientIpResolver(trustedProxies: CidrSet): ClientIpResolver {
  if (trustedProxies.size === 0) return (peerIp) => peerIp
  return (peerIp, header) => {
    if (!trustedProxies.has(peerIp)) return peerIp
    const xff = header('x-forwarded-for')
    if (xff !== '') return walkFromRight(xff.split(','), peerIp, trustedProxies, plainHop)
    const forwarded = header('forwarded')
    if (forwarded !== '') return walkFromRight(forwarded.split(','), peerIp, trustedProxies, forwardedForHop)
    return peerIp
  }
}

/**
 * The first untrusted hop from the right. A hop that is not an address (RFC 7239 "unknown", an obfuscated
 * name, garbage) ends the walk at the nearest trusted hop: nothing left of it can be vouched for.
 */
function walkFromRight(hops: string[], peerIp: string, trusted: CidrSet, read: (hop: string) => string): string {
  let nearest = peerIp
  for (let i = hops.length - 1; i >= 0; i--) {
    const ip = parseIp(read(hops[i]!))
    if (ip === undefined) return nearest
    const text = formatIp(ip)
    if (!trusted.hasIp(ip)) return text
    nearest = text
  }
  return nearest
}

/** An X-Forwarded-For entry: an address, sometimes with a port ("1.2.3.4:5678", "[::1]:5678"). */
function plainHop(hop: string): string {
  return stripPort(hop.trim())
}

/** The for= parameter of one RFC 7239 element: for=1.2.3.4;proto=https or for="[2001:db8::1]:4711". */
function forwardedForHop(element: string): string {
  for (const pair of element.split(';')) {
    const eq = pair.indexOf('=')
    if (eq < 0 || pair.slice(0, eq).trim().toLowerCase() !== 'for') continue
    let value = pair.slice(eq + 1).trim()
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1)
    return stripPort(value)
  }
  return ''
}

function stripPort(value: string): string {
  if (value.startsWith('[')) {
    const close = value.indexOf(']')
    return close < 0 ? value : value.slice(1, close)
  }
  const colon = value.indexOf(':')
  // One colon: IPv4 with a port. More: a bare IPv6 address.
  if (colon >= 0 && value.indexOf(':', colon + 1) < 0) return value.slice(0, colon)
  return value
}
