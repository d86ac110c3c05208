import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ZodError } from 'zod';
import { DomainError, badRequest, type ErrorKind } from '../errors.js';

/** What the client is told: the status and the one error body (DESIGN.md "Errors"). */
interface Failure {
  status: number;
  message: string;
  code?: string;
  details?: unknown;
  extra?: Record<string, unknown>;
  retryAfterSeconds?: number;
}

/** The one place a domain error's kind becomes an HTTP status. */
const STATUS_BY_KIND: Record<ErrorKind, number> = {
  invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  unprocessable: 422,
  gone: 410,
  precondition_failed: 412,
  rate_limited: 429,
  upstream_failed: 502,
  unavailable: 503,
};

function fromDomainError(err: DomainError): Failure {
  const { message, code, details, extra, retryAfterSeconds } = err;
  return { status: STATUS_BY_KIND[err.kind], message, code, details, extra, retryAfterSeconds };
}

const malformedJson = (): Failure => ({ status: 400, message: 'Malformed JSON in request body', code: 'MALFORMED_JSON' });

/** Fastify's own client errors, mapped to the one error body (never a 500 for bad input). */
function fastifyClientError(err: FastifyError): Failure | null {
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return malformedJson();
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { status: 413, message: 'Request body is too large', code: 'PAYLOAD_TOO_LARGE' };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { status: 415, message: 'Unsupported content type; send application/json', code: 'UNSUPPORTED_MEDIA_TYPE' };
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { status: 400, message: 'Invalid Content-Length', code: 'BAD_REQUEST' };
    default:
      break;
  }
  if (err instanceof SyntaxError) return malformedJson();
  const status = err.statusCode;
  if (status && status >= 400 && status < 500) return { status, message: err.message, code: CODE_BY_STATUS[status] ?? 'BAD_REQUEST' };
  return null;
}

const CODE_BY_STATUS: Record<number, string> = {
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  406: 'NOT_ACCEPTABLE',
  408: 'REQUEST_TIMEOUT',
  411: 'LENGTH_REQUIRED',
  413: 'PAYLOAD_TOO_LARGE',
  414: 'URI_TOO_LONG',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'RATE_LIMITED',
  431: 'HEADERS_TOO_LARGE',
};

/** JSON bodies may nest at most this deep. JSON.parse copes with any depth, but everything after it that
 * walks the value recursively (JSON.stringify when a JSON column is stored, the idempotency hash) overflows
 * the stack on a body such as 60 000 nested objects, which would be a 500. */
export const MAX_BODY_DEPTH = 64;

/** The nesting depth of a parsed JSON value, walked without recursion; stops counting past `limit`. */
export function jsonDepth(value: unknown, limit = MAX_BODY_DEPTH): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop() as [unknown, number];
    if (typeof current !== 'object' || current === null) continue;
    if (depth > deepest) deepest = depth;
    if (deepest > limit) return deepest;
    for (const child of Object.values(current))
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
  }
  return deepest;
}

/** One error handler for the whole app: the DESIGN.md error body; messages only for statuses below 500.
 * It also refuses over-deep JSON bodies before any handler sees them (see MAX_BODY_DEPTH). */
export function installErrorHandler(
  app: FastifyInstance,
  /** Runs before the not-found answer (the guard's API-key check: 01 §5.6 headers on a key's 404). */
  notFoundPreHandler?: (request: FastifyRequest, reply: FastifyReply) => Promise<void>,
): void {
  app.addHook('preValidation', async (request) => {
    if (typeof request.body === 'object' && request.body !== null && jsonDepth(request.body) > MAX_BODY_DEPTH) {
      throw badRequest(`Request body is nested too deeply (at most ${MAX_BODY_DEPTH} levels)`, 'BODY_TOO_DEEP');
    }
  });

  app.setErrorHandler((err, request, reply) => {
    let failure: Failure | null;
    if (err instanceof DomainError) failure = fromDomainError(err);
    // Input is validated with safeParse and arrives here as a DomainError; a ZodError is a response that does
    // not match its contract schema: a server bug, answered 500 (not blamed on the client) and logged.
    else if (err instanceof ZodError) failure = null;
    else failure = fastifyClientError(err as FastifyError);

    if (!failure) {
      const issues = err instanceof ZodError ? err.issues.slice(0, 10) : undefined;
      request.log.error(
        { err, issues, route: request.routeOptions.url },
        issues ? 'response does not match the contract' : 'unhandled error',
      );
      return reply.code(500).send({ error: 'Internal Server Error' });
    }
    if (failure.retryAfterSeconds !== undefined) reply.header('retry-after', String(failure.retryAfterSeconds));
    const body: Record<string, unknown> = { error: failure.message, ...(failure.extra ?? {}) };
    if (failure.code) body.code = failure.code;
    if (failure.details !== undefined) body.details = failure.details;
    return reply.code(failure.status).send(body);
  });

  app.setNotFoundHandler(notFoundPreHandler ? { preHandler: notFoundPreHandler } : {}, (request, reply) =>
    reply.code(404).send({ error: 'Not Found', path: request.url.split('?')[0] }),
  );
}
