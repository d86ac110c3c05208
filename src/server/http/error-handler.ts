import type { FastifyError, FastifyInstance } from 'fastify';
import { ZodError } from 'zod';
import { HttpError } from './errors.js';
import { validationError } from './validation.js';

/** Fastify's own client errors, mapped to the one error body (never a 500 for bad input). */
function fastifyClientError(err: FastifyError): HttpError | null {
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new HttpError(400, 'Malformed JSON in request body', 'MALFORMED_JSON');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new HttpError(413, 'Request body is too large', 'PAYLOAD_TOO_LARGE');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new HttpError(415, 'Unsupported content type; send application/json', 'UNSUPPORTED_MEDIA_TYPE');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new HttpError(400, 'Invalid Content-Length', 'BAD_REQUEST');
    default:
      break;
  }
  if (err instanceof SyntaxError) return new HttpError(400, 'Malformed JSON in request body', 'MALFORMED_JSON');
  const status = err.statusCode;
  if (status && status >= 400 && status < 500) return new HttpError(status, err.message, 'BAD_REQUEST');
  return null;
}

/** One error handler for the whole app: the DESIGN.md error body; messages only for statuses below 500. */
export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((err, request, reply) => {
    let httpError: HttpError | null;
    if (err instanceof HttpError) httpError = err;
    else if (err instanceof ZodError) httpError = validationError(err, 'body');
    else httpError = fastifyClientError(err as FastifyError);

    if (!httpError) {
      request.log.error({ err }, 'unhandled error');
      return reply.code(500).send({ error: 'Internal Server Error' });
    }
    if (httpError.headers) reply.headers(httpError.headers);
    const body: Record<string, unknown> = { error: httpError.message, ...(httpError.extra ?? {}) };
    if (httpError.code) body.code = httpError.code;
    if (httpError.details !== undefined) body.details = httpError.details;
    return reply.code(httpError.status).send(body);
  });

  app.setNotFoundHandler((request, reply) => reply.code(404).send({ error: 'Not Found', path: request.url.split('?')[0] }));
}
