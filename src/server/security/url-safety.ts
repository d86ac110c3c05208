import ipaddr from 'ipaddr.js';
import { DomainError } from '../errors.js';

/**
 * The one guard of every request the server makes to a URL a caller gave (02 §2.4, §4.3): webhooks, SSO
 * discovery, alert channels. `checkOutboundUrl` is the static check done when the URL is stored;
 * `isBlockedAddress` is what the outbound client (delivery/outbound.ts) applies to every address it is about to
 * connect to, so a name that later resolves to a private address is refused at connect time.
 *
 * Blocked: every IPv4 range ipaddr.js names other than `unicast` (loopback, RFC 1918, RFC 6598, RFC 5737 and the
 * other reserved blocks, link-local, multicast, broadcast, 0.0.0.0/8), and every IPv6 range other than `unicast`
 * (loopback, unspecified, link-local, multicast, unique-local, documentation, discard, site-local, Teredo, ...).
 * IPv6 forms that embed an IPv4 address (IPv4-mapped, IPv4-compatible, IPv4-translated, NAT64 64:ff9b::/96,
 * 6to4) are judged by the IPv4 address they carry. `allow` (SVC_OUTBOUND_ALLOW) lets CIDRs through.
 */

/** IPv6 ranges (ipaddr.js names) whose address carries an IPv4 address in its last 32 bits. */
const EMBEDS_IPV4_AT_END = new Set(['ipv4Mapped', 'rfc6145', 'rfc6052']);

function parseCidrs(allow: readonly string[]): Array<[ipaddr.IPv4 | ipaddr.IPv6, number]> {
  return allow.map((cidr) => ipaddr.parseCIDR(cidr));
}

function allowedBy(address: ipaddr.IPv4 | ipaddr.IPv6, cidrs: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]>): boolean {
  return cidrs.some(([range, bits]) => range.kind() === address.kind() && address.match(range, bits));
}

/** The IPv4 address an IPv6 address carries (mapped, compatible, translated, NAT64 well-known prefix, 6to4). */
function embeddedIpv4(address: ipaddr.IPv6): ipaddr.IPv4 | null {
  const range = address.range();
  const bytes = address.toByteArray();
  // ::a.b.c.d (IPv4-compatible, deprecated) has no name of its own in ipaddr.js; its first 96 bits are zero.
  const compatible = bytes.slice(0, 12).every((b) => b === 0) && range !== 'unspecified' && range !== 'loopback';
  // 64:ff9b:1::/48 (RFC 8215, local-use NAT64) places the IPv4 address elsewhere: it is refused as a whole below.
  const wellKnownNat64 = range !== 'rfc6052' || address.match(ipaddr.parseCIDR('64:ff9b::/96'));
  if (compatible || (EMBEDS_IPV4_AT_END.has(range) && wellKnownNat64)) return ipaddr.fromByteArray(bytes.slice(12)) as ipaddr.IPv4;
  if (range === '6to4') return ipaddr.fromByteArray(bytes.slice(2, 6)) as ipaddr.IPv4;
  return null;
}

/** Why the server must not connect to `ip`, or null when it may. `ip` is an address as the resolver or the socket
 * reports it (no brackets); anything that is not an IP address is refused. */
export function isBlockedAddress(ip: string, allow: readonly string[]): string | null {
  const text = ip.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (!ipaddr.isValid(text)) return `${ip} is not an IP address`;
  const address = ipaddr.parse(text);
  const cidrs = parseCidrs(allow);
  if (allowedBy(address, cidrs)) return null;
  if (address.kind() === 'ipv4') {
    const range = address.range();
    return range === 'unicast' ? null : `${text} is in a blocked range (${range})`;
  }
  const inner = embeddedIpv4(address as ipaddr.IPv6);
  if (inner) {
    if (allowedBy(inner, cidrs)) return null;
    const range = inner.range();
    return range === 'unicast' ? null : `${text} carries ${inner.toString()}, in a blocked range (${range})`;
  }
  const range = address.range();
  if (range === 'rfc6052') return `${text} is in a blocked range (local-use NAT64)`;
  return range === 'unicast' ? null : `${text} is in a blocked range (${range})`;
}

/** Host names that name this machine or its local network, whatever they resolve to. */
function localNameProblem(hostname: string, allow: readonly string[]): string | null {
  const name = hostname.toLowerCase();
  if (name === 'localhost' || name.endsWith('.localhost')) {
    // Loopback by definition (RFC 6761): let through only when the allowance covers the loopback address.
    return isBlockedAddress('127.0.0.1', allow) === null ? null : `${hostname} is a localhost name`;
  }
  if (name.endsWith('.local')) return `${hostname} is a local-network (mDNS) name`;
  if (name.endsWith('.internal') || name.endsWith('.home.arpa')) return `${hostname} is a local-network name`;
  return null;
}

export interface OutboundUrlOptions {
  /** Refuse http: (webhooks, 02 §2.7); otherwise http: and https: are accepted. */
  httpsOnly: boolean;
  /** CIDRs let through (config.outbound.allow). */
  allow: readonly string[];
}

/** Why `url` may not be requested, without resolving its name: scheme, local names and IP literals in any of the
 * encodings the URL parser accepts (decimal, octal, hex IPv4; IPv6 with an embedded IPv4). Null when it may. */
export function outboundUrlProblem(url: URL, opts: OutboundUrlOptions): string | null {
  if (url.protocol !== 'https:' && (opts.httpsOnly || url.protocol !== 'http:')) return opts.httpsOnly ? 'URL must use HTTPS' : 'URL must use HTTP or HTTPS';
  // The WHATWG parser has already turned every IPv4 spelling into dotted decimal and bracketed IPv6.
  const hostname = url.hostname.replace(/\.$/, '');
  if (hostname === '') return 'URL host is not allowed: empty host';
  const literal = hostname.replace(/^\[|\]$/g, '');
  const reason = ipaddr.isValid(literal) ? isBlockedAddress(literal, opts.allow) : localNameProblem(hostname, opts.allow);
  return reason === null ? null : `URL host is not allowed: ${reason}`;
}

/** The static check at creation time (02 §2.4, §4.3): the parsed URL, or a DomainError (400) saying why not. */
export function checkOutboundUrl(raw: string, opts: OutboundUrlOptions): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new DomainError('invalid', 'Invalid URL format', 'INVALID_URL');
  }
  const problem = outboundUrlProblem(url, opts);
  if (problem) throw new DomainError('invalid', problem, 'UNSAFE_URL');
  return url;
}
