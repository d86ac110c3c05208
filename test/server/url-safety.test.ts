import fs from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/server/config.js';
import { OutboundBlockedError, OutboundClient, OutboundTimeoutError, type Resolver } from '../../src/server/delivery/outbound.js';
import { DomainError } from '../../src/server/errors.js';
import { checkOutboundUrl, isBlockedAddress } from '../../src/server/security/url-safety.js';
import { startReceiver, type Receiver } from '../helpers/https-receiver.js';

const STRICT = { httpsOnly: true, allow: [] as string[] };

function refusal(raw: string, opts = STRICT): string {
  try {
    checkOutboundUrl(raw, opts);
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).kind).toBe('invalid');
    return (err as DomainError).message;
  }
  throw new Error(`${raw} was accepted`);
}

describe('checkOutboundUrl (02§2.4, 02§4.3)', () => {
  it.each([
    // scheme
    ['http://example.com/hook', 'URL must use HTTPS'],
    ['ftp://example.com/', 'URL must use HTTPS'],
    ['not a url', 'Invalid URL format'],
    // local names
    ['https://localhost/', 'localhost name'],
    ['https://LOCALHOST./', 'localhost name'],
    ['https://api.localhost/', 'localhost name'],
    ['https://printer.local/', 'mDNS'],
    // loopback in every IPv4 encoding the URL parser accepts
    ['https://127.0.0.1/', 'loopback'],
    ['https://127.1/', 'loopback'],
    ['https://2130706433/', 'loopback'],
    ['https://0177.0.0.1/', 'loopback'],
    ['https://0x7f.0.0.1/', 'loopback'],
    ['https://0x7f000001/', 'loopback'],
    // IPv6 loopback and IPv4 inside IPv6
    ['https://[::1]/', 'loopback'],
    ['https://[::ffff:7f00:1]/', 'carries 127.0.0.1'],
    ['https://[::ffff:127.0.0.1]/', 'carries 127.0.0.1'],
    ['https://[::127.0.0.1]/', 'carries 127.0.0.1'],
    ['https://[64:ff9b::7f00:1]/', 'carries 127.0.0.1'],
    ['https://[64:ff9b::a00:1]/', 'carries 10.0.0.1'],
    ['https://[64:ff9b:1::1]/', 'local-use NAT64'],
    ['https://[2002:c0a8:101::1]/', 'carries 192.168.1.1'],
    // RFC 1918, RFC 6598, RFC 5737, link-local, multicast, unspecified
    ['https://10.0.0.1/', 'private'],
    ['https://172.16.5.4/', 'private'],
    ['https://192.168.0.10/', 'private'],
    ['https://100.64.0.1/', 'carrierGradeNat'],
    ['https://192.0.2.1/', 'reserved'],
    ['https://198.51.100.7/', 'reserved'],
    ['https://203.0.113.200/', 'reserved'],
    ['https://169.254.169.254/latest/meta-data', 'linkLocal'],
    ['https://224.0.0.1/', 'multicast'],
    ['https://255.255.255.255/', 'broadcast'],
    ['https://0.0.0.0/', 'unspecified'],
    ['https://[::]/', 'unspecified'],
    // IPv6 documentation, link-local, multicast, unique-local
    ['https://[2001:db8::1]/', 'reserved'],
    ['https://[fe80::1]/', 'linkLocal'],
    ['https://[ff02::1]/', 'multicast'],
    ['https://[fd12:3456::1]/', 'uniqueLocal'],
    ['https://[fc00::1]/', 'uniqueLocal'],
  ])('02§4.3 refuses %s', (raw, reason) => {
    expect(refusal(raw)).toContain(reason);
  });

  it('02§4.3 blocked hosts are refused with "URL host is not allowed: <reason>"', () => {
    expect(refusal('https://10.0.0.1/')).toBe('URL host is not allowed: 10.0.0.1 is in a blocked range (private)');
  });

  it.each([
    'https://example.com/hooks?x=1',
    'https://8.8.8.8/',
    'https://1.1.1.1:8443/x',
    'https://[2606:4700:4700::1111]/',
    'https://[64:ff9b::808:808]/',
    'https://[::ffff:8.8.8.8]/',
    'https://[2002:808:808::1]/',
    'https://93.184.216.34/',
  ])('02§4.3 accepts the public %s', (raw) => {
    expect(checkOutboundUrl(raw, STRICT)).toBeInstanceOf(URL);
  });

  it('02§2.4 http: is accepted when httpsOnly is false, other schemes still refused', () => {
    expect(checkOutboundUrl('http://example.com/', { httpsOnly: false, allow: [] }).protocol).toBe('http:');
    expect(refusal('file:///etc/passwd', { httpsOnly: false, allow: [] })).toBe('URL must use HTTP or HTTPS');
  });

  it('02§4.3 the allowance lets a range through, and only that range', () => {
    const allow = ['127.0.0.1/32', '::1/128'];
    expect(checkOutboundUrl('https://127.0.0.1:8443/', { httpsOnly: true, allow }).port).toBe('8443');
    expect(checkOutboundUrl('https://[::1]/', { httpsOnly: true, allow }).hostname).toBe('[::1]');
    expect(checkOutboundUrl('https://[::ffff:127.0.0.1]/', { httpsOnly: true, allow }).hostname).toBe('[::ffff:7f00:1]');
    expect(checkOutboundUrl('https://localhost/', { httpsOnly: true, allow }).hostname).toBe('localhost');
    expect(refusal('https://127.0.0.2/', { httpsOnly: true, allow })).toContain('loopback');
    expect(refusal('https://10.0.0.1/', { httpsOnly: true, allow })).toContain('private');
  });
});

describe('isBlockedAddress (02§4.3)', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['10.9.8.7', 'private'],
    ['::1', 'loopback'],
    ['::ffff:192.168.1.1', 'private'],
    ['fe80::1%eth0', 'linkLocal'],
    ['not-an-ip', 'not an IP address'],
  ])('02§4.3 %s is blocked (%s)', (ip, reason) => {
    expect(isBlockedAddress(ip, [])).toContain(reason);
  });

  it('02§4.3 public addresses and allowed ranges are not blocked', () => {
    expect(isBlockedAddress('8.8.8.8', [])).toBeNull();
    expect(isBlockedAddress('2606:4700::1', [])).toBeNull();
    expect(isBlockedAddress('10.1.2.3', ['10.0.0.0/8'])).toBeNull();
    expect(isBlockedAddress('::ffff:10.1.2.3', ['10.0.0.0/8'])).toBeNull();
    expect(isBlockedAddress('11.1.2.3', ['10.0.0.0/8'])).toBeNull();
  });
});

describe('SVC_OUTBOUND_ALLOW (02§4.3)', () => {
  it('02§4.3 parses comma-separated CIDRs; empty by default', () => {
    expect(loadConfig({ SVC_OUTBOUND_ALLOW: ' 127.0.0.1/32, ::1/128 ,' }).outbound.allow).toEqual(['127.0.0.1/32', '::1/128']);
    expect(loadConfig({}).outbound.allow).toEqual([]);
  });

  it('02§4.3 an invalid CIDR stops the start naming the variable', () => {
    expect(() => loadConfig({ SVC_OUTBOUND_ALLOW: '127.0.0.1/32,10.0.0.1' })).toThrow(ConfigError);
    expect(() => loadConfig({ SVC_OUTBOUND_ALLOW: '127.0.0.1/33' })).toThrow(/SVC_OUTBOUND_ALLOW: .*127\.0\.0\.1\/33/);
  });
});

describe('OutboundClient (02§2.4, 02§4.3)', () => {
  const receivers: Receiver[] = [];
  const clients: OutboundClient[] = [];
  afterEach(async () => {
    clients.splice(0).forEach((c) => c.close());
    await Promise.all(receivers.splice(0).map((r) => r.close()));
  });
  const receiver = async (...args: Parameters<typeof startReceiver>) => {
    const r = await startReceiver(...args);
    receivers.push(r);
    return r;
  };
  const client = (allow: string[], resolve?: Resolver, timeoutMs?: number) => {
    const c = new OutboundClient({ allow, ...(resolve ? { resolve } : {}), ...(timeoutMs ? { timeoutMs } : {}) });
    clients.push(c);
    return c;
  };
  const blocked = async (promise: Promise<unknown>): Promise<string> => {
    const err: unknown = await promise.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(OutboundBlockedError);
    return (err as OutboundBlockedError).reason;
  };

  it('02§4.3 a loopback receiver is refused without the allowance and nothing reaches it', async () => {
    const r = await receiver();
    expect(await blocked(client([]).request(`${r.url}/hook`, { method: 'POST', body: '{}' }))).toContain('loopback');
    expect(r.received).toHaveLength(0);
  });

  it('02§4.3 the allowance lets 127.0.0.1 through over HTTPS trusted by NODE_EXTRA_CA_CERTS only', async () => {
    const r = await receiver((req, res) => res.writeHead(201, { 'x-seen': req.headers['x-custom'] as string }).end('created'));
    const res = await client(['127.0.0.1/32']).request(`${r.url}/hook`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-custom': 'v' }, body: '{"a":1}' });
    expect(res).toMatchObject({ status: 201, body: 'created', headers: { 'x-seen': 'v' } });
    expect(r.received[0]).toMatchObject({ method: 'POST', path: '/hook', body: '{"a":1}' });
  });

  it('02§4.3 the connected address is checked against the allowance too: a name answering an address outside it is refused', async () => {
    const r = await receiver();
    const allow = ['127.0.0.1/32'];
    const ok = await client(allow, async () => [{ address: '127.0.0.1', family: 4 }]).request(`https://receiver.test:${r.port}/`);
    expect(ok.status).toBe(200);
    const reason = await blocked(client(allow, async () => [{ address: '127.0.0.2', family: 4 }]).request(`https://receiver.test:${r.port}/`));
    expect(reason).toBe('receiver.test resolves to blocked address space: 127.0.0.2');
    expect(r.received).toHaveLength(1);
  });

  it('02§2.4 DNS rebinding (first answer public, second private) is refused at connect time', async () => {
    const r = await receiver();
    let calls = 0;
    const rebinding: Resolver = async () => (++calls === 1 ? [{ address: '93.184.216.34', family: 4 }] : [{ address: '127.0.0.1', family: 4 }]);
    const c = client([], rebinding);
    const url = `https://hooks.receiver.test:${r.port}/`;
    expect((await c.checkUrl(url)).hostname).toBe('hooks.receiver.test');
    expect(await blocked(c.request(url, { method: 'POST', body: '{}' }))).toContain('resolves to blocked address space: 127.0.0.1');
    expect(calls).toBe(2);
    expect(r.received).toHaveLength(0);
  });

  it('02§2.4 a name with any private answer among public ones is refused; an unresolvable name too', async () => {
    const mixed = client([], async () => [
      { address: '93.184.216.34', family: 4 },
      { address: '10.0.0.5', family: 4 },
    ]);
    expect(await blocked(mixed.checkUrl('https://mixed.example/'))).toBe('mixed.example resolves to blocked address space: 10.0.0.5');
    const none = client([], async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    });
    expect(await blocked(none.checkUrl('https://nowhere.example/'))).toBe('nowhere.example could not be resolved');
  });

  it('02§2.4 redirects are never followed: the 3xx comes back as it is', async () => {
    const r = await receiver((req, res) => res.writeHead(302, { location: '/elsewhere' }).end());
    const c = client(['127.0.0.1/32']);
    const res = await c.request(`${r.url}/start`);
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('/elsewhere');
    const fetched = await c.fetch(`${r.url}/start`);
    expect(fetched.status).toBe(302);
    expect(r.received.map((x) => x.path)).toEqual(['/start', '/start']);
  });

  it('02§8 a receiver that never answers times out', async () => {
    const r = await receiver(() => {
      /* never answers */
    });
    const started = Date.now();
    const err: unknown = await client(['127.0.0.1/32'])
      .request(`${r.url}/slow`, { timeoutMs: 300 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OutboundTimeoutError);
    expect((err as Error).message).toBe('Timeout after 300ms');
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('02§4.3 the response body is capped', async () => {
    const r = await receiver((_req, res) => res.end('x'.repeat(100_000)));
    const res = await client(['127.0.0.1/32']).request(r.url, { maxResponseBytes: 100 });
    expect(res.body).toBe('x'.repeat(100));
  });

  it('02§4.3 fetch is WHATWG-compatible and goes through the same guard', async () => {
    const r = await receiver((req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ got: req.body })));
    const allowed = client(['127.0.0.1/32']);
    const res = await allowed.fetch(`${r.url}/token`, { method: 'POST', body: new URLSearchParams({ grant_type: 'x' }) });
    expect(await res.json()).toEqual({ got: 'grant_type=x' });
    expect(r.received[0]?.headers['content-type']).toContain('application/x-www-form-urlencoded');
    expect(await blocked(client([]).fetch(`${r.url}/token`))).toContain('loopback');
    expect(await blocked(allowed.fetch('http://127.0.0.1:1/'))).toBe('URL must use HTTPS');
  });

  it('02§4.3 a certificate nothing trusts is refused (certificate checks are never turned off)', async () => {
    const fixture = (name: string) => fs.readFileSync(new URL(`../fixtures/tls/${name}`, import.meta.url));
    const server = https.createServer({ key: fixture('self-signed-key.pem'), cert: fixture('self-signed-cert.pem') }, (_req, res) => res.end('ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as AddressInfo).port;
      const err: unknown = await client(['127.0.0.1/32'])
        .request(`https://127.0.0.1:${port}/`)
        .catch((e: unknown) => e);
      expect((err as NodeJS.ErrnoException).code).toMatch(/CERT|SELF_SIGNED/);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
