import { promises as dns } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction, Socket } from 'node:net';
import { isBlockedAddress, outboundUrlProblem } from '../security/url-safety.js';

/**
 * The one way the server sends HTTP to a URL a caller gave (02 §2.4, §4.3): webhooks, SSO discovery, alert
 * channels. Every request is checked twice: the URL statically (security/url-safety.ts) and every address at
 * connect time, through the agents' own `lookup`, so the address checked is the address connected to (a name that
 * answered a public address when it was stored and a private one now is refused; no check-then-use gap). The
 * connected socket's address is checked once more before anything is written. Redirects are never followed (a 3xx
 * comes back as it is), a timeout aborts, and the body read is capped. Test certificates are trusted only through
 * NODE_EXTRA_CA_CERTS; nothing here turns certificate checks off.
 */

/** The request was refused by the URL guard (statically or at connect time); `reason` says why. */
export class OutboundBlockedError extends Error {
  override name = 'OutboundBlockedError';
  constructor(readonly reason: string) {
    super(`Outbound request blocked: ${reason}`);
  }
}

/** No complete answer within the time limit (connect, send and the whole response). */
export class OutboundTimeoutError extends Error {
  override name = 'OutboundTimeoutError';
  constructor(readonly timeoutMs: number) {
    super(`Timeout after ${timeoutMs}ms`);
  }
}

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to every address (tests inject one to answer differently on each call). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

const systemResolver: Resolver = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

export interface OutboundClientOptions {
  /** CIDRs let through the guard (config.outbound.allow). */
  allow: readonly string[];
  resolve?: Resolver;
  /** Default 30000 ms (02 §8, the webhook delivery timeout). */
  timeoutMs?: number;
  /** Default 1 MiB. */
  maxResponseBytes?: number;
}

export interface OutboundRequestOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  timeoutMs?: number;
  /** Default true: http: URLs are refused unless false. */
  httpsOnly?: boolean;
  /** The body read is cut at this many bytes (the rest is not read). */
  maxResponseBytes?: number;
  signal?: AbortSignal;
}

export interface OutboundResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

interface RawResponse {
  status: number;
  statusText: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** Kept connections: per destination at most this many, idle ones closed after AGENT_IDLE_MS; at most MAX_AGENTS
 * destinations keep connections (the least recently used is closed first). */
const AGENT_MAX_SOCKETS = 32;
const AGENT_IDLE_MS = 15_000;
const MAX_AGENTS = 256;

/** URLs whose static check is kept (staticCheck). */
const CHECKED_URLS_MAX = 1024;

/** Statuses whose Response may not carry a body (fetch spec). */
const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

export class OutboundClient {
  private readonly resolve: Resolver;
  /** One keep-alive agent per destination (scheme, host, port), least recently used last out. */
  private readonly agents = new Map<string, http.Agent>();
  private readonly lookup: LookupFunction;
  private readonly timeoutMs: number;
  private readonly maxResponseBytes: number;

  constructor(private readonly options: OutboundClientOptions) {
    this.resolve = options.resolve ?? systemResolver;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.maxResponseBytes = options.maxResponseBytes ?? 1_048_576;
    this.lookup = this.guardedLookup();
  }

  /**
   * The agent of a destination. Connections are kept alive per destination so a burst of deliveries to one receiver
   * does not pay a DNS lookup and a TLS handshake each; the guard is unchanged, because every connection is still
   * checked when it is made (the agent's guarded lookup and the socket's connected address): a kept connection is
   * one that passed, to the address it passed with. Idle connections close after AGENT_IDLE_MS.
   */
  private agentFor(url: URL): http.Agent {
    const key = `${url.protocol}//${url.host}`;
    const known = this.agents.get(key);
    if (known) {
      this.agents.delete(key);
      this.agents.set(key, known);
      return known;
    }
    const options = { keepAlive: true, maxSockets: AGENT_MAX_SOCKETS, maxFreeSockets: AGENT_MAX_SOCKETS, timeout: AGENT_IDLE_MS, lookup: this.lookup };
    const agent = url.protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
    this.agents.set(key, agent);
    if (this.agents.size > MAX_AGENTS) {
      const [oldestKey, oldest] = this.agents.entries().next().value ?? [];
      if (oldestKey !== undefined) this.agents.delete(oldestKey);
      oldest?.destroy();
    }
    return agent;
  }

  get allow(): readonly string[] {
    return this.options.allow;
  }

  /** The URL, parsed, when both the static check and a resolution of its name pass (02 §4.3: "DNS resolution
   * checked" when a webhook is stored); OutboundBlockedError otherwise. Connecting checks again. */
  async checkUrl(raw: string, opts: { httpsOnly?: boolean } = {}): Promise<URL> {
    // A copy: the caller may change it, the kept one is shared.
    const url = new URL(this.staticCheck(raw, opts.httpsOnly ?? true).href);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (/^[\d.]+$|:/.test(host)) return url;
    await this.resolveChecked(host);
    return url;
  }

  /** One request; the response whatever its status (3xx included). */
  async request(url: string, opts: OutboundRequestOptions = {}): Promise<OutboundResponse> {
    const res = await this.send(url, opts);
    return { status: res.status, headers: { ...res.headers }, body: res.body.toString('utf8') };
  }

  /** WHATWG fetch for libraries that take one (openid-client's customFetch), over `request`'s guard. */
  readonly fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    return this.fetcher({ httpsOnly: true })(input, init);
  };

  /** A fetch with this client's guard and the given scheme rule. */
  fetcher(opts: { httpsOnly: boolean; timeoutMs?: number }): (input: string | URL | Request, init?: RequestInit) => Promise<Response> {
    return async (input, init) => {
      const request = new Request(input, init);
      const headers: Record<string, string> = {};
      request.headers.forEach((value, key) => {
        headers[key] = value;
      });
      const body = request.body ? new Uint8Array(await request.arrayBuffer()) : undefined;
      const res = await this.send(request.url, {
        method: request.method,
        headers,
        ...(body ? { body } : {}),
        httpsOnly: opts.httpsOnly,
        ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}),
        ...(init?.signal ? { signal: init.signal } : {}),
      });
      const responseHeaders = new Headers();
      for (const [key, value] of Object.entries(res.headers)) {
        for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) responseHeaders.append(key, v);
      }
      return new Response(NULL_BODY_STATUSES.has(res.status) ? null : res.body, {
        status: res.status,
        statusText: res.statusText,
        headers: responseHeaders,
      });
    };
  }

  /** Closes the agents' sockets (server shutdown). */
  close(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }

  /** Static checks by URL text and scheme rule: the check depends on nothing else (the allowance is fixed per
   * client), so a webhook's URL is parsed and judged once, not before every attempt. Bounded, oldest out. */
  private readonly checked = new Map<string, URL | OutboundBlockedError>();

  private staticCheck(raw: string, httpsOnly: boolean): URL {
    const key = `${httpsOnly ? 's' : 'a'}${raw}`;
    let known = this.checked.get(key);
    if (known === undefined) {
      try {
        known = this.checkStatically(raw, httpsOnly);
      } catch (err) {
        if (!(err instanceof OutboundBlockedError)) throw err;
        known = err;
      }
      this.checked.set(key, known);
      if (this.checked.size > CHECKED_URLS_MAX) this.checked.delete(this.checked.keys().next().value as string);
    }
    if (known instanceof OutboundBlockedError) throw new OutboundBlockedError(known.reason);
    return known;
  }

  private checkStatically(raw: string, httpsOnly: boolean): URL {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new OutboundBlockedError('Invalid URL format');
    }
    const problem = outboundUrlProblem(url, { httpsOnly, allow: this.options.allow });
    if (problem) throw new OutboundBlockedError(problem);
    return url;
  }

  private async resolveChecked(hostname: string): Promise<ResolvedAddress[]> {
    let addresses: ResolvedAddress[];
    try {
      addresses = await this.resolve(hostname);
    } catch {
      addresses = [];
    }
    if (addresses.length === 0) throw new OutboundBlockedError(`${hostname} could not be resolved`);
    const blocked = addresses.filter((a) => isBlockedAddress(a.address, this.options.allow) !== null);
    if (blocked.length) throw new OutboundBlockedError(`${hostname} resolves to blocked address space: ${blocked.map((a) => a.address).join(', ')}`);
    return addresses;
  }

  /** The agents' `lookup`: the resolver's answer, refused when any address is blocked. */
  private guardedLookup(): LookupFunction {
    return (hostname, options, callback) => {
      this.resolveChecked(hostname).then(
        (all) => {
          const wanted = options.family === 4 || options.family === 6 ? all.filter((a) => a.family === options.family) : all;
          const addresses = wanted.length ? wanted : all;
          if (options.all) callback(null, addresses);
          else callback(null, addresses[0]?.address ?? '', addresses[0]?.family ?? 4);
        },
        (err: Error) => callback(err as NodeJS.ErrnoException, ''),
      );
    };
  }

  private send(raw: string, opts: OutboundRequestOptions): Promise<RawResponse> {
    const url = this.staticCheck(raw, opts.httpsOnly ?? true);
    const timeoutMs = opts.timeoutMs ?? this.timeoutMs;
    const cap = opts.maxResponseBytes ?? this.maxResponseBytes;
    const body = typeof opts.body === 'string' ? Buffer.from(opts.body) : opts.body;
    return new Promise<RawResponse>((resolve, reject) => {
      const secure = url.protocol === 'https:';
      const req = (secure ? https : http).request(url, {
        method: opts.method ?? 'GET',
        headers: { ...opts.headers, ...(body ? { 'content-length': String(body.byteLength) } : {}) },
        agent: this.agentFor(url),
      });
      let settled = false;
      const finish = (err: Error | null, value?: RawResponse) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
        if (err) reject(err);
        else if (value) resolve(value);
      };
      const timer = setTimeout(() => {
        const err = new OutboundTimeoutError(timeoutMs);
        finish(err);
        req.destroy(err);
      }, timeoutMs);
      const onAbort = () => {
        const reason: unknown = opts.signal?.reason;
        const err = reason instanceof Error ? reason : new Error('The request was aborted');
        finish(err);
        req.destroy(err);
      };
      if (opts.signal?.aborted) return onAbort();
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      req.on('socket', (socket: Socket) => {
        // Literal IP hosts never reach `lookup`; every connection is checked on the address it reached. A kept
        // connection was checked when it was made.
        if (!socket.connecting) return;
        socket.prependOnceListener('connect', () => {
          const reason = isBlockedAddress(socket.remoteAddress ?? '', this.options.allow);
          if (reason) socket.destroy(new OutboundBlockedError(reason));
        });
      });
      req.on('error', (err) => finish(err));
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const done = () =>
          finish(null, { status: res.statusCode ?? 0, statusText: res.statusMessage ?? '', headers: res.headers, body: Buffer.concat(chunks) });
        res.on('data', (chunk: Buffer) => {
          const room = cap - size;
          if (chunk.length >= room) {
            chunks.push(chunk.subarray(0, room));
            size = cap;
            done();
            res.destroy();
            return;
          }
          chunks.push(chunk);
          size += chunk.length;
        });
        res.on('end', done);
        res.on('error', (err) => finish(err));
      });
      req.end(body);
    });
  }
}
