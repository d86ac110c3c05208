import { setFlagsFromString } from 'node:v8';
import type { Agent, Dispatcher } from 'undici';
import { ApiError, NetworkError, UnexpectedResponseError, headerValue, type ResponseHeaders } from './errors.js';

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
  /** Connect, response-headers and between-body-chunks timeout, in ms. Default 30000. */
  timeoutMs?: number;
  userAgent?: string;
  /** Use this dispatcher (a MockAgent in tests) instead of the client's own keep-alive Agent. */
  dispatcher?: Dispatcher;
  onRetry?: (info: RetryInfo) => void;
  /** Backoff between tries: full jitter over min(capMs, baseMs · 2^(try-1)). Default 200 ms base, 5 s cap. */
  backoff?: { baseMs?: number; capMs?: number };
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

/** undici's response body: a Readable with `.text()`, `.json()`, `.dump()`. */
export type RawBody = Dispatcher.ResponseData['body'];

export const DEFAULT_RETRIES = 3;
export const DEFAULT_TIMEOUT_MS = 30_000;
export const BACKOFF_BASE_MS = 200;
export const BACKOFF_CAP_MS = 5_000;
export const RETRY_AFTER_CAP_MS = 60_000;

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
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CLOSED',
]);

function errorCode(error: unknown): string | undefined {
  let current: unknown = error;
  // undici wraps some socket errors; look one or two causes deep for the system code.
  for (let depth = 0; depth < 3 && typeof current === 'object' && current !== null; depth++) {
    if ('code' in current && typeof current.code === 'string') return current.code;
    current = 'cause' in current ? current.cause : undefined;
  }
  return undefined;
}

function isJsonContentType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const mime = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  return mime === 'application/json' || mime.endsWith('+json');
}

function stringifyQueryValue(value: unknown): string {
  if (value instanceof Date) return value.toISOString();
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
    case 'boolean':
    case 'bigint':
      return value.toString();
    default:
      // objects (a filter given as JSON); anything stranger has no query form
      return JSON.stringify(value);
  }
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

/** Milliseconds to wait for a `Retry-After` value (seconds or an HTTP date), capped at 60 s. */
export function parseRetryAfter(value: string | undefined, now: number = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Math.min(Number(trimmed) * 1000, RETRY_AFTER_CAP_MS);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.min(Math.max(0, date - now), RETRY_AFTER_CAP_MS);
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

let agentClass: Promise<typeof Agent> | undefined;

/** undici's Agent, imported on the first request: importing undici costs more than starting node, and many
 * commands never send one. */
function loadAgent(): Promise<typeof Agent> {
  // undici parses responses with llhttp compiled to WebAssembly. V8 then recompiles that module with TurboFan on
  // a background thread, and the process waits for that job before it can exit: over 100 ms of every CLI run on
  // two cores, to speed up a parser that reads a handful of responses. The baseline compiler (Liftoff) is enough.
  setFlagsFromString('--liftoff-only');
  // From the CommonJS exports object: a bundle has no named exports for a CommonJS package imported on demand.
  return (agentClass ??= import('undici').then((undici) => undici.default.Agent));
}

type Attempt =
  | { kind: 'response'; status: number; headers: ResponseHeaders; body: RawBody }
  | { kind: 'network'; error: unknown; code: string | undefined };

/**
 * The HTTP client every command talks through: one keep-alive Agent, auth headers, retries for idempotent
 * requests, transparent token refresh, and error bodies turned into ApiError.
 */
export class HttpClient {
  readonly baseUrl: string;
  private readonly origin: string;
  private readonly basePath: string;
  private readonly auth: AuthProvider | undefined;
  private readonly maxAttempts: number;
  private readonly timeoutMs: number;
  private readonly userAgent: string;
  /** The dispatcher passed in, or the client's own keep-alive Agent once the first request needs it. */
  private dispatcher: Dispatcher | undefined;
  private readonly ownsDispatcher: boolean;
  private readonly onRetry: ((info: RetryInfo) => void) | undefined;
  private readonly backoffBaseMs: number;
  private readonly backoffCapMs: number;
  private refreshing: Promise<boolean> | undefined;

  constructor(options: HttpClientOptions) {
    const url = new URL(options.baseUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new TypeError(`Base URL must be http or https: ${options.baseUrl}`);
    }
    this.baseUrl = options.baseUrl;
    this.origin = url.origin;
    this.basePath = url.pathname.replace(/\/+$/, '');
    this.auth = options.auth;
    this.maxAttempts = Math.max(1, Math.floor(options.retries ?? DEFAULT_RETRIES));
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.userAgent = options.userAgent ?? 'svc';
    this.onRetry = options.onRetry;
    this.backoffBaseMs = options.backoff?.baseMs ?? BACKOFF_BASE_MS;
    this.backoffCapMs = options.backoff?.capMs ?? BACKOFF_CAP_MS;
    this.dispatcher = options.dispatcher;
    this.ownsDispatcher = options.dispatcher === undefined;
  }

  /** Close the client's own Agent (a dispatcher passed in is left to its owner). */
  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher?.close();
  }

  private async agent(): Promise<Dispatcher> {
    if (this.dispatcher) return this.dispatcher;
    const AgentClass = await loadAgent();
    return (this.dispatcher ??= new AgentClass({ keepAliveTimeout: 10_000, connect: { timeout: this.timeoutMs } }));
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

    let attempt = 0;
    let refreshed = false;
    for (;;) {
      attempt += 1;
      const authHeaders = this.auth ? await this.auth.headers() : {};
      const headers = this.headersFor(options, authHeaders, payload !== undefined);
      const result = await this.send(method, path, headers, payload, options.signal);

      if (result.kind === 'network') {
        const error = new NetworkError(`${method} ${this.origin}${path} failed: ${describe(result.error)}`, {
          cause: result.error,
          ...(result.code === undefined ? {} : { code: result.code }),
          attempts: attempt,
        });
        if (attempt < maxAttempts && result.code !== undefined && RETRYABLE_CODES.has(result.code)) {
          await this.pause(
            { method, path, attempt, maxAttempts, delayMs: this.backoff(attempt), error },
            options.signal,
          );
          continue;
        }
        throw error;
      }

      const { status, headers: responseHeaders, body } = result;

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

      if (RETRYABLE_STATUSES.has(status) && attempt < maxAttempts) {
        await body.dump().catch(() => undefined);
        const waitFor = parseRetryAfter(headerValue(responseHeaders, 'retry-after'));
        const delayMs = waitFor ?? this.backoff(attempt);
        await this.pause({ method, path, attempt, maxAttempts, delayMs, status }, options.signal);
        continue;
      }

      if (status >= 400) {
        const text = await this.readText(body, status, method, path, options.signal);
        throw ApiError.fromResponse(status, responseHeaders, text);
      }

      if (options.raw) return { status, headers: responseHeaders, body };

      const text = await this.readText(body, status, method, path, options.signal);
      return { status, headers: responseHeaders, body: parseBody(text, status, responseHeaders) };
    }
  }

  private headersFor(
    options: RequestOptions,
    authHeaders: Record<string, string>,
    hasBody: boolean,
  ): Record<string, string> {
    const headers: Record<string, string> = {
      accept: options.raw ? '*/*' : 'application/json',
      'user-agent': this.userAgent,
    };
    for (const [name, value] of Object.entries(authHeaders)) headers[name.toLowerCase()] = value;
    for (const [name, value] of Object.entries(options.headers ?? {})) headers[name.toLowerCase()] = value;
    if (hasBody) headers['content-type'] ??= 'application/json';
    if (options.idempotencyKey !== undefined) headers['idempotency-key'] = options.idempotencyKey;
    return headers;
  }

  private async send(
    method: RequestMethod,
    path: string,
    headers: Record<string, string>,
    body: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<Attempt> {
    const dispatcher = await this.agent();
    try {
      const response = await dispatcher.request({
        origin: this.origin,
        path,
        method,
        headers,
        body: body ?? null,
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
        ...(signal === undefined ? {} : { signal }),
      });
      return { kind: 'response', status: response.statusCode, headers: response.headers, body: response.body };
    } catch (error) {
      if (signal?.aborted) throw error;
      return { kind: 'network', error, code: errorCode(error) };
    }
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
      if (signal?.aborted) throw error;
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

function parseBody(text: string, status: number, headers: ResponseHeaders): unknown {
  if (text === '') return undefined;
  if (!isJsonContentType(headerValue(headers, 'content-type'))) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new UnexpectedResponseError(`HTTP ${status} response claims JSON but does not parse`, {
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
