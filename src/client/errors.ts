/** Response headers: lower-case names, a repeated header as an array of its values. */
export type ResponseHeaders = Record<string, string | string[] | undefined>;

/** The first value of a response header, by lower-case name. */
export function headerValue(headers: ResponseHeaders, name: string): string | undefined {
  const value = headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

/** The `code` of a transport error (`ECONNRESET`, `HPE_INVALID_CONSTANT`, …), when it has one. */
export function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string'
    ? error.code
    : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The server answered with an error status (>= 400, after any retries). Built from the one error body
 * `{ error, code?, details? }` (DESIGN.md "Errors"); `body` keeps whatever the server sent (parsed JSON, or
 * the text when it was not JSON).
 */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly status: number;
  readonly code?: string;
  readonly details?: unknown;
  readonly body?: unknown;
  readonly headers: ResponseHeaders;

  constructor(init: {
    status: number;
    message?: string;
    code?: string;
    details?: unknown;
    body?: unknown;
    headers?: ResponseHeaders;
  }) {
    super(init.message ?? `HTTP ${init.status}`);
    this.status = init.status;
    if (init.code !== undefined) this.code = init.code;
    if (init.details !== undefined) this.details = init.details;
    if (init.body !== undefined) this.body = init.body;
    this.headers = init.headers ?? {};
  }

  /** From a status, headers and the raw response text. */
  static fromResponse(status: number, headers: ResponseHeaders, text: string): ApiError {
    let body: unknown = text === '' ? undefined : text;
    try {
      if (text !== '') body = JSON.parse(text) as unknown;
    } catch {
      // not JSON (a proxy's HTML page, a plain-text 502): keep the text as the body
    }
    const init: ConstructorParameters<typeof ApiError>[0] = { status, headers, body };
    if (isRecord(body)) {
      if (typeof body.error === 'string' && body.error !== '') init.message = body.error;
      if (typeof body.code === 'string') init.code = body.code;
      if (body.details !== undefined) init.details = body.details;
    }
    return new ApiError(init);
  }
}

/** The request never got an HTTP answer: connection refused or reset, DNS failure, timeout. */
export class NetworkError extends Error {
  override readonly name = 'NetworkError';
  /**
   * The transport's error code when known: node's (`ECONNREFUSED`, `ECONNRESET` — also a socket hang up or a body
   * cut off —, `ENOTFOUND`, `HPE_…` for a response that is not HTTP, TLS codes such as `CERT_HAS_EXPIRED`) or the
   * client's timeouts (`CONNECT_TIMEOUT`, `HEADERS_TIMEOUT`, `BODY_TIMEOUT`).
   */
  readonly code?: string;
  /** How many times the request was sent before giving up. */
  readonly attempts: number;

  constructor(message: string, options: { cause: unknown; code?: string; attempts?: number }) {
    super(message, { cause: options.cause });
    if (options.code !== undefined) this.code = options.code;
    this.attempts = options.attempts ?? 1;
  }
}

/** A success response that is not what the client was told to expect (unparseable JSON, schema mismatch). */
export class UnexpectedResponseError extends Error {
  override readonly name = 'UnexpectedResponseError';
  readonly status: number;
  readonly body: unknown;
  readonly issues?: unknown;

  constructor(message: string, init: { status: number; body: unknown; issues?: unknown; cause?: unknown }) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.body = init.body;
    if (init.issues !== undefined) this.issues = init.issues;
  }
}

/**
 * The path of a 404 that means "no such route" rather than "no such record" (issue 15 item 4): the bundled
 * server's and a hosted deployment's `{error: "Not Found", path}`, or Fastify's own `{message: "Route GET:/… not
 * found", error: "Not Found", statusCode: 404}`. A missing record carries a `code` and says what is missing.
 */
export function unknownRoutePath(err: unknown): string | undefined {
  if (!(err instanceof ApiError) || err.status !== 404 || err.code !== undefined || !isRecord(err.body)) return undefined;
  const { path, message } = err.body;
  if (typeof path === 'string' && path !== '') return path;
  const route = typeof message === 'string' ? /^Route (\S+) not found$/.exec(message) : null;
  return route?.[1]?.replace(/^([A-Z]+):/, '$1 ');
}
