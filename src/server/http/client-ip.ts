import { isIP } from 'node:net';
import type { FastifyRequest } from 'fastify';
import ipaddr from 'ipaddr.js';

/** Parses SVC_TRUSTED_PROXIES entries (addresses or CIDR ranges) into a matcher. */
export function trustedProxyMatcher(entries: readonly string[]): (address: string) => boolean {
  const ranges = entries.map((entry) => {
    try {
      return entry.includes('/') ? ipaddr.parseCIDR(entry) : ([ipaddr.parse(entry), ipaddr.parse(entry).kind() === 'ipv4' ? 32 : 128] as const);
    } catch {
      throw new Error(`SVC_TRUSTED_PROXIES: "${entry}" is not an IP address or CIDR range`);
    }
  });
  return (address: string) => {
    if (!ipaddr.isValid(address)) return false;
    let parsed = ipaddr.parse(address);
    if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
    return ranges.some(([range, bits]) => range.kind() === parsed.kind() && parsed.match(range, bits));
  };
}

/** The client address for the audit log: X-Forwarded-For (via Fastify's trustProxy) or X-Real-IP, only
 * when the connection comes from a trusted proxy; otherwise the socket's address. */
export function clientIpResolver(isTrusted: (address: string) => boolean, anyTrusted: boolean) {
  return (request: FastifyRequest): string | null => {
    const socketAddress = request.socket.remoteAddress ?? null;
    if (anyTrusted && socketAddress && isTrusted(socketAddress)) {
      const forwarded = request.headers['x-forwarded-for'];
      if (!forwarded) {
        const realIp = request.headers['x-real-ip'];
        if (typeof realIp === 'string' && isIP(realIp.trim()) !== 0) return realIp.trim();
      }
    }
    // A forwarded value that is not an address (a garbled header) falls back to the socket's address. Node's own
    // check (native, on every request): dotted-quad IPv4 or IPv6, not the legacy forms such as 127.1.
    return request.ip && isIP(request.ip) !== 0 ? request.ip : socketAddress;
  };
}
