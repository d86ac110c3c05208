/** An error the client may see: status, message, machine code and optional details (DESIGN.md "Errors"). */
export class HttpError extends Error {
  override name = 'HttpError';
  constructor(
    readonly status: number,
    message: string,
    readonly code?: string,
    readonly details?: unknown,
    /** Extra top-level fields of the error body (e.g. `status` on PARTNER_INACTIVE, `validTiers`). */
    readonly extra?: Record<string, unknown>,
    /** Response headers to send with the error (Retry-After). */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }
}

export const badRequest = (message: string, code = 'BAD_REQUEST', extra?: Record<string, unknown>) =>
  new HttpError(400, message, code, undefined, extra);
export const unauthorized = (message = 'Missing or invalid authorization header', code = 'UNAUTHORIZED') =>
  new HttpError(401, message, code);
export const forbidden = (message = 'Permission denied', code = 'FORBIDDEN', extra?: Record<string, unknown>) =>
  new HttpError(403, message, code, undefined, extra);
export const notFound = (message = 'Not found', code = 'NOT_FOUND') => new HttpError(404, message, code);
export const conflict = (message: string, code = 'CONFLICT') => new HttpError(409, message, code);
export const unprocessable = (message: string, code = 'UNPROCESSABLE') => new HttpError(422, message, code);
export const tooManyRequests = (message: string, retryAfterSeconds: number, code = 'RATE_LIMITED') =>
  new HttpError(429, message, code, undefined, undefined, { 'retry-after': String(Math.max(1, retryAfterSeconds)) });

export const orgAccessDenied = () => forbidden('Access to this organization denied', 'ORG_ACCESS_DENIED');
export const siteAccessDenied = () => forbidden('Access to this site denied', 'SITE_ACCESS_DENIED');
