import type {
  Agent,
  AgentOptions,
  ClientRequest,
  IncomingMessage,
  RequestOptions as NodeRequestOptions,
} from 'node:http';
import {
  ApiError,
  NetworkError,
  UnexpectedResponseError,
  errorCode,
  headerValue,
  type ResponseHeaders,
} from './errors.js';
import { scalarText } from '../lib/scalar-text.js';

/** Error codes with which a server refuses the bearer token itself (04 wire notes "Cross-cutting"). */
const TOKEN_REFUSED_CODES = new Set(['INVALID_TOKEN', 'UNAUTHORIZED', 'TOKEN_EXPIRED']);

function tokenRefused(bodyText: string): boolean {
  try {
    const parsed = JSON.parse(bodyText) as { code?: unknown };
    return typeof parsed.code !== 'string' || TOKEN_REFUSED_CODES.has(parsed.code);
  } catch {
    return true;
  }
}

/** Supplies credentials for each request; the CLI implements it over its profile and secret store. */
export interface AuthProvider {
  /** Headers to send with every request, e.g. `{ authorization: 'Bearer …' }` or `{ 'x-api-key': … }`. */
  headers(): Promise<Record<string, string>>;
  /**
   * Called once when a request sent with a bearer token gets 401. Resolve true when a new token is in place
   * (the request is then sent once more with fresh `headers()`), false when it cannot be refreshed (the 401
   * stands). Errors it throws propagate unchanged.
   */
  refresh?(): Promise<boolean>;
}

export type RequestMethod = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS';

/** What `onRetry` learns before the client waits and tries again. */
export interface RetryInfo {
  method: string;
  path: string;
  /** The try that just failed, from 1. */
  attempt: number;
  /** Tries allowed in all. */
  maxAttempts: number;
  /** How long the client waits before the next try. */
  delayMs: number;
  /** The retryable status (429, 502, 503, 504), when the server answered. */
  status?: number;
  /** The transport failure, when it did not. */
  error?: NetworkError;
}

export interface HttpClientOptions {
  /** Where the API lives, e.g. `https://rmm.example.com` (a path prefix is kept). */
  baseUrl: string;
  auth?: AuthProvider;
  /** Tries in all for a retryable request (CLI.md "Retries"). Default 3. */
  retries?: number;
  /** Connect, response-headers and between-body-chunks timeout of each try, in ms. Default 30000. */
  timeoutMs?: number;
  /**
   * The longest a request may spend waiting between its tries, in ms (default 60000). A Retry-After that would
   * go beyond it fails the request at once with the server's answer (its Retry-After says when to try again).
   */
  retryBudgetMs?: number;
  userAgent?: string;
  onRetry?: (info: RetryInfo) => void;
  /** Backoff between tries: full jitter over min(capMs, baseMs · 2^(try-1)). Default 200 ms base, 5 s cap. */
  backoff?: { baseMs?: number; capMs?: number };
  /** Told the headers of every answer, before its body is read (the session keeps the cookies it sets). */
  onResponse?: (headers: ResponseHeaders) => void | Promise<void>;
}

export interface RequestOptions {
  method: RequestMethod;
  /** Path with parameters filled in, below the base URL (include `/api/v1` yourself); may carry a `?query`. */
  path: string;
  /** Arrays become repeated keys; undefined and null are skipped; other values are stringified. */
  query?: Record<string, unknown>;
  /** Sent as JSON when defined. */
  body?: unknown;
  headers?: Record<string, string>;
  /** Sent as `Idempotency-Key`; makes a POST or PATCH retryable. */
  idempotencyKey?: string;
  /** Return the body stream unread (CSV, JSON lines, long exports). */
  raw?: boolean;
  signal?: AbortSignal;
}

export interface HttpResponse<T = unknown> {
  status: number;
  headers: ResponseHeaders;
  body: T;
}

/** A response body left unread: node's IncomingMessage (a Readable) with `.text()`, `.json()`, `.dump()`. */
export type RawBody = IncomingMessage & {
  /** The whole body as UTF-8. */
  text(): Promise<string>;
  json(): Promise<unknown>;
  /** Reads and drops the body so the connection can be reused; past `limit` bytes (128 KiB) it closes it instead. */
  dump(options?: { limit?: number }): Promise<void>;
};

export const DEFAULT_RETRIES = 3;
export const DEFAULT_TIMEOUT_MS = 30_000;
export const BACKOFF_BASE_MS = 200;
export const BACKOFF_CAP_MS = 5_000;
export const RETRY_BUDGET_MS = 60_000;
/** An idle pooled connection is closed after this long (sooner when the server's Keep-Alive says so). */
const KEEP_ALIVE_MS = 10_000;
const DUMP_LIMIT_BYTES = 128 * 1024;

const IDEMPOTENT_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);
const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([429, 502, 503, 504]);
/** Transport failures worth another try: the server may well answer the next one. */
const RETRYABLE_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'CONNECT_TIMEOUT',
  'HEADERS_TIMEOUT',
]);

function isJsonContentType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const mime = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  return mime === 'application/json' || mime.endsWith('+json');
}

function stringifyQueryValue(value: unknown): string {
  // Objects (a filter given as JSON) as JSON; anything stranger has no query form.
  return scalarText(value) ?? JSON.stringify(value);
}

/** `?a=1&tag=x&tag=y` from a record; arrays repeat the key, undefined and null are left out. */
export function buildQuery(query: Record<string, unknown> | undefined): string {
  if (query === undefined) return '';
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    const values: readonly unknown[] = Array.isArray(value) ? value : [value];
    for (const item of values) {
      if (item === undefined || item === null) continue;
      params.append(key, stringifyQueryValue(item));
    }
  }
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

/** Milliseconds a `Retry-After` value (seconds or an HTTP date) asks to wait. */
export function retryAfterMs(value: string | undefined, now: number = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** `3 tries in 90.4 s`: what a failure cost, for its message. */
function spent(attempts: number, since: number): string {
  return `${attempts} ${attempts === 1 ? 'try' : 'tries'} in ${((Date.now() - since) / 1000).toFixed(1)} s`;
}

/** What a request stopped by its signal rejects with: the signal's reason. */
function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error('aborted');
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      if (signal) reject(abortReason(signal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** What node:http and node:https have in common, as this client uses it. */
interface Transport {
  request(options: NodeRequestOptions, onResponse: (response: IncomingMessage) => void): ClientRequest;
  Agent: new (options: AgentOptions) => Agent;
}

/** Loaded on the first request: many commands never send one, and node:https (tls) is only for https URLs. */
async function loadTransport(protocol: string): Promise<Transport> {
  return protocol === 'https:' ? import('node:https') : import('node:http');
}

/** Whole body as UTF-8 text, decoded once at the end (a chunk may split a character); a gzipped body (JSON
 * requests ask for one) is inflated first. */
async function readAll(body: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  const bytes = Buffer.concat(chunks);
  if (body.headers['content-encoding'] !== 'gzip') return bytes.toString('utf8');
  const { gunzipSync } = await import('node:zlib');
  return gunzipSync(bytes).toString('utf8');
}

function dump(body: IncomingMessage, limit: number): Promise<void> {
  return new Promise((resolve) => {
    if (body.destroyed || body.readableEnded) {
      resolve();
      return;
    }
    let seen = 0;
    body.on('data', (chunk: Buffer) => {
      seen += chunk.length;
      // A big body (an export page nobody will read) costs less as a new connection than as a download.
      if (seen > limit) body.destroy();
    });
    body.once('close', () => resolve());
    body.resume();
  });
}

function rawBody(response: IncomingMessage): RawBody {
  // Node emits a body's error only to listeners: without one, a connection that dies before the caller starts
  // reading would leave a stream that just ends early instead of one that fails with the cause.
  response.on('error', () => undefined);
  return Object.assign(response, {
    text: () => readAll(response),
    json: async (): Promise<unknown> => JSON.parse(await readAll(response)),
    dump: (options?: { limit?: number }) => dump(response, options?.limit ?? DUMP_LIMIT_BYTES),
  });
}

/** Response headers with a repeated header as an array of its values, a single one as a string. */
function responseHeaders(response: IncomingMessage): ResponseHeaders {
  const headers: ResponseHeaders = {};
  for (const [name, values] of Object.entries(response.headersDistinct)) {
    if (values !== undefined) headers[name] = values.length === 1 ? values[0] : values;
  }
  return headers;
}

function timeoutError(request: ClientRequest, response: IncomingMessage | undefined, timeoutMs: number): Error {
  const [code, what] =
    response !== undefined
      ? ['BODY_TIMEOUT', 'between body chunks']
      : request.socket?.connecting
        ? ['CONNECT_TIMEOUT', 'to connect']
        : ['HEADERS_TIMEOUT', 'for the response headers'];
  return Object.assign(new Error(`No answer within ${timeoutMs} ms ${what}`), { code });
}

type Attempt =
  | { kind: 'response'; status: number; headers: ResponseHeaders; body: RawBody }
  | { kind: 'network'; error: unknown; code: string | undefined };

/**
 * The HTTP client every command talks through (node:http, or node:https for an https base URL): one keep-alive
 * Agent, auth headers, retries for idempotent requests, transparent token refresh, and error bodies turned into
 * ApiError.
 */
export class HttpClient {
  readonly baseUrl: string;
  private readonly origin: string;
  private readonly protocol: string;
  /** host and port as node:http takes them (an IPv6 literal without its brackets). */
  private readonly hostname: string;
  private readonly port: string;
  private readonly basePath: string;
  private readonly auth: AuthProvider | undefined;
  private readonly maxAttempts: number;
  private readonly timeoutMs: number;
  private readonly retryBudgetMs: number;
  private readonly userAgent: string;
  /** The transport and its keep-alive Agent, once the first request needs them. */
  private connection: Promise<{ transport: Transport; agent: Agent }> | undefined;
  private readonly onRetry: ((info: RetryInfo) => void) | undefined;
  private readonly backoffBaseMs: number;
  private readonly backoffCapMs: number;
  private refreshing: Promise<boolean> | undefined;
  private readonly onResponse: ((headers: ResponseHeaders) => void | Promise<void>) | undefined;

  constructor(options: HttpClientOptions) {
    const url = new URL(options.baseUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new TypeError(`Base URL must be http or https: ${options.baseUrl}`);
    }
    this.baseUrl = options.baseUrl;
    this.origin = url.origin;
    this.protocol = url.protocol;
    this.hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
    this.port = url.port;
    this.basePath = url.pathname.replace(/\/+$/, '');
    this.auth = options.auth;
    this.maxAttempts = Math.max(1, Math.floor(options.retries ?? DEFAULT_RETRIES));
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.retryBudgetMs = options.retryBudgetMs ?? RETRY_BUDGET_MS;
    this.userAgent = options.userAgent ?? 'svc';
    this.onRetry = options.onRetry;
    this.onResponse = options.onResponse;
    this.backoffBaseMs = options.backoff?.baseMs ?? BACKOFF_BASE_MS;
    this.backoffCapMs = options.backoff?.capMs ?? BACKOFF_CAP_MS;
  }

  /** Closes the pooled connections. Not needed for the process to exit: an idle pooled socket is unref'd. */
  async close(): Promise<void> {
    (await this.connection)?.agent.destroy();
    this.connection = undefined;
  }

  private connect(): Promise<{ transport: Transport; agent: Agent }> {
    return (this.connection ??= loadTransport(this.protocol).then((transport) => ({
      transport,
      agent: new transport.Agent({ keepAlive: true, timeout: KEEP_ALIVE_MS }),
    })));
  }

  /** The path (below the origin) a request goes to, base path and query included. */
  resolvePath(path: string, query?: Record<string, unknown>): string {
    const suffix = buildQuery(query);
    const joined = `${this.basePath}${path.startsWith('/') ? path : `/${path}`}`;
    if (suffix === '') return joined;
    return joined.includes('?') ? `${joined}&${suffix.slice(1)}` : `${joined}${suffix}`;
  }

  request(options: RequestOptions & { raw: true }): Promise<HttpResponse<RawBody>>;
  request(options: RequestOptions & { raw?: false }): Promise<HttpResponse>;
  request(options: RequestOptions): Promise<HttpResponse>;
  async request(options: RequestOptions): Promise<HttpResponse> {
    const method = options.method;
    const path = this.resolvePath(options.path, options.query);
    const retryable = IDEMPOTENT_METHODS.has(method) || options.idempotencyKey !== undefined;
    const maxAttempts = retryable ? this.maxAttempts : 1;
    const payload = options.body === undefined ? undefined : JSON.stringify(options.body);

    const started = Date.now();
    let waited = 0;
    let attempt = 0;
    let refreshed = false;
    for (;;) {
      attempt += 1;
      const authHeaders = this.auth ? await this.auth.headers() : {};
      const headers = this.headersFor(options, authHeaders, payload);
      const result = await this.send(method, path, headers, payload, options.signal);

      if (result.kind === 'network') {
        const cause = describe(result.error);
        const error = new NetworkError(`${method} ${this.origin}${path} failed: ${cause}`, {
          cause: result.error,
          ...(result.code === undefined ? {} : { code: result.code }),
          attempts: attempt,
        });
        if (attempt < maxAttempts && result.code !== undefined && RETRYABLE_CODES.has(result.code)) {
          const delayMs = this.backoff(attempt);
          waited += delayMs;
          await this.pause({ method, path, attempt, maxAttempts, delayMs, error }, options.signal);
          continue;
        }
        // The time of every try, not one timeout: a hung server costs the tries times --timeout.
        throw new NetworkError(`${error.message}; ${spent(attempt, started)}`, {
          cause: result.error,
          ...(result.code === undefined ? {} : { code: result.code }),
          attempts: attempt,
        });
      }

      const { status, headers: responseHeaders, body } = result;
      await this.onResponse?.(responseHeaders);

      if (status === 401 && !refreshed && this.auth?.refresh && sentBearer(headers, authHeaders)) {
        const text = await this.readText(body, status, method, path, options.signal);
        refreshed = true;
        // Only a refused token is worth a refresh: a 401 about something else (a wrong re-auth password, a bad
        // MFA code) would be sent twice for nothing.
        if (tokenRefused(text) && (await this.refreshOnce())) {
          attempt -= 1; // the re-send with a fresh token is not a retry
          continue;
        }
        throw ApiError.fromResponse(status, responseHeaders, text);
      }

      // A Retry-After beyond what is left of the budget fails now, with the answer that says when to try again.
      const delayMs = retryAfterMs(headerValue(responseHeaders, 'retry-after')) ?? this.backoff(attempt);
      if (RETRYABLE_STATUSES.has(status) && attempt < maxAttempts && waited + delayMs <= this.retryBudgetMs) {
        await body.dump().catch(() => undefined);
        waited += delayMs;
        await this.pause({ method, path, attempt, maxAttempts, delayMs, status }, options.signal);
        continue;
      }

      if (status >= 400) {
        const text = await this.readText(body, status, method, path, options.signal);
        throw ApiError.fromResponse(status, responseHeaders, text);
      }

      if (options.raw) return { status, headers: responseHeaders, body };

      const text = await this.readText(body, status, method, path, options.signal);
      return { status, headers: responseHeaders, body: parseBody(text, status, responseHeaders, `${this.origin}${path}`) };
    }
  }

  private headersFor(
    options: RequestOptions,
    authHeaders: Record<string, string>,
    payload: string | undefined,
  ): Record<string, string> {
    const headers: Record<string, string> = {
      accept: options.raw ? '*/*' : 'application/json',
      'user-agent': this.userAgent,
    };
    // A JSON answer may come gzipped (read whole, then inflated); a raw body is handed over as the stream it is.
    if (!options.raw) headers['accept-encoding'] = 'gzip';
    for (const [name, value] of Object.entries(authHeaders)) headers[name.toLowerCase()] = value;
    for (const [name, value] of Object.entries(options.headers ?? {})) headers[name.toLowerCase()] = value;
    if (payload !== undefined) {
      headers['content-type'] ??= 'application/json';
      headers['content-length'] = String(Buffer.byteLength(payload));
    }
    if (options.idempotencyKey !== undefined) headers['idempotency-key'] = options.idempotencyKey;
    return headers;
  }

  /** One try: resolves when the response headers are in (or the transport failed), the body unread. */
  private async send(
    method: RequestMethod,
    path: string,
    headers: Record<string, string>,
    body: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<Attempt> {
    const { transport, agent } = await this.connect();
    if (signal?.aborted) throw abortReason(signal);
    return new Promise((resolve, reject) => {
      let response: IncomingMessage | undefined;
      // Once the response is in, its body stream carries any later failure.
      const fail = (error: Error) => (response ?? request).destroy(error);
      const onAbort = () => {
        if (signal) fail(abortReason(signal));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const request = transport.request(
        // `timeout` is the socket's idle timeout while this request holds it: connecting, waiting, reading.
        {
          protocol: this.protocol,
          hostname: this.hostname,
          port: this.port,
          path,
          method,
          headers,
          agent,
          timeout: this.timeoutMs,
        },
        (res) => {
          response = res;
          res.once('close', () => signal?.removeEventListener('abort', onAbort));
          resolve({ kind: 'response', status: res.statusCode ?? 0, headers: responseHeaders(res), body: rawBody(res) });
        },
      );
      request.on('timeout', () => fail(timeoutError(request, response, this.timeoutMs)));
      request.on('error', (error) => {
        if (response !== undefined) return;
        signal?.removeEventListener('abort', onAbort);
        if (signal?.aborted) reject(abortReason(signal));
        else resolve({ kind: 'network', error, code: errorCode(error) });
      });
      request.end(body);
    });
  }

  /** Reads a whole body; a connection that dies mid-body is a NetworkError. */
  private async readText(
    body: RawBody,
    status: number,
    method: string,
    path: string,
    signal: AbortSignal | undefined,
  ): Promise<string> {
    try {
      return await body.text();
    } catch (error) {
      if (signal?.aborted) throw abortReason(signal);
      const code = errorCode(error);
      throw new NetworkError(
        `${method} ${this.origin}${path} failed while reading the HTTP ${status} body: ${describe(error)}`,
        {
          cause: error,
          ...(code === undefined ? {} : { code }),
        },
      );
    }
  }

  /** Several requests may hit 401 at once; they share one refresh. */
  private refreshOnce(): Promise<boolean> {
    const auth = this.auth;
    if (!auth?.refresh) return Promise.resolve(false);
    this.refreshing ??= auth.refresh().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  /** Full jitter: uniform in [0, min(cap, base · 2^(attempt-1))]. */
  private backoff(attempt: number): number {
    const ceiling = Math.min(this.backoffCapMs, this.backoffBaseMs * 2 ** (attempt - 1));
    return Math.round(Math.random() * ceiling);
  }

  private async pause(info: RetryInfo, signal: AbortSignal | undefined): Promise<void> {
    this.onRetry?.(info);
    if (info.delayMs > 0) await sleep(info.delayMs, signal);
  }
}

function sentBearer(sent: Record<string, string>, authHeaders: Record<string, string>): boolean {
  const fromAuth = Object.entries(authHeaders).find(([name]) => name.toLowerCase() === 'authorization')?.[1];
  const authorization = sent.authorization;
  return fromAuth !== undefined && authorization === fromAuth && /^bearer\s/i.test(authorization);
}

/** The JSON body of a success; anything else (a web server's page at a wrong base URL) is an unexpected response. */
function parseBody(text: string, status: number, headers: ResponseHeaders, url: string): unknown {
  if (text === '') return undefined;
  const contentType = headerValue(headers, 'content-type');
  if (!isJsonContentType(contentType))
    throw new UnexpectedResponseError(`unexpected response from ${url} (HTTP ${status}, content-type ${contentType ?? 'none'})`, {
      status,
      body: text,
    });
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new UnexpectedResponseError(`unexpected response from ${url}: HTTP ${status} claims JSON but does not parse`, {
      status,
      body: text,
      cause: error,
    });
  }
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const code = errorCode(error);
    return code !== undefined && !error.message.includes(code) ? `${error.message} (${code})` : error.message;
  }
  return String(error);
}
