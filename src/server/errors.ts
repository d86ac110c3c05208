import { z } from 'zod';
import { UntracedError } from './lib/untraced-error.js';

/**
 * What went wrong, in the terms of the business rules. The one error handler (http/error-handler.ts) maps a
 * kind to its HTTP status, so services, jobs and tools throw these without knowing HTTP.
 */
export type ErrorKind =
  | 'invalid'
  | 'unauthenticated'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'unprocessable'
  | 'gone'
  | 'precondition_failed'
  | 'rate_limited'
  | 'upstream_failed'
  | 'unavailable';

export interface DomainErrorOptions {
  /** `details` of the error body (validation issues). */
  details?: unknown;
  /** Extra top-level fields of the error body (e.g. `status` on PARTNER_INACTIVE, `validTiers`). */
  extra?: Record<string, unknown>;
  /** When the caller may try again (rate limits): sent as Retry-After. */
  retryAfterSeconds?: number;
}

/** The kinds that are a dependency's failure rather than the caller's: answered 5xx and logged with their stack. */
const SERVER_FAULTS: ReadonlySet<ErrorKind> = new Set(['upstream_failed', 'unavailable']);

/**
 * An error the client may see: kind, the spec's message and machine code, optional details (DESIGN.md "Errors").
 * A client fault (a 4xx) is an answer, not a failure to trace, and is made without a stack trace (UntracedError:
 * capturing one was most of what a 401, 404 or 429 cost of its own); a server fault keeps its stack.
 */
export class DomainError extends UntracedError {
  override name = 'DomainError';
  readonly details?: unknown;
  readonly extra?: Record<string, unknown>;
  readonly retryAfterSeconds?: number;
  constructor(
    readonly kind: ErrorKind,
    message: string,
    readonly code?: string,
    options: DomainErrorOptions = {},
  ) {
    super(message, SERVER_FAULTS.has(kind));
    this.details = options.details;
    this.extra = options.extra;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }

  /** The caller's fault (bad input, no access, gone), as opposed to a dependency failing. */
  get isClientFault(): boolean {
    return !SERVER_FAULTS.has(this.kind);
  }
}

export const badRequest = (message: string, code = 'BAD_REQUEST', extra?: Record<string, unknown>) =>
  new DomainError('invalid', message, code, { extra });
export const unauthorized = (message = 'Missing or invalid authorization header', code = 'UNAUTHORIZED', extra?: Record<string, unknown>) =>
  new DomainError('unauthenticated', message, code, { extra });
export const forbidden = (message = 'Permission denied', code = 'FORBIDDEN', extra?: Record<string, unknown>) =>
  new DomainError('forbidden', message, code, { extra });
export const notFound = (message = 'Not found', code = 'NOT_FOUND') => new DomainError('not_found', message, code);
export const conflict = (message: string, code = 'CONFLICT') => new DomainError('conflict', message, code);
export const unprocessable = (message: string, code = 'UNPROCESSABLE') => new DomainError('unprocessable', message, code);
export const tooManyRequests = (message: string, retryAfterSeconds: number, code = 'RATE_LIMITED') =>
  new DomainError('rate_limited', message, code, { retryAfterSeconds: Math.max(1, retryAfterSeconds) });

export const orgAccessDenied = () => forbidden('Access to this organization denied', 'ORG_ACCESS_DENIED');
export const siteAccessDenied = () => forbidden('Access to this site denied', 'SITE_ACCESS_DENIED');
/** 01 §2.6: a device, or a device group, outside the caller's device groups. */
export const deviceAccessDenied = () => forbidden('Access to this device denied', 'DEVICE_ACCESS_DENIED');
export const deviceGroupAccessDenied = () => forbidden('Access to this device group denied', 'DEVICE_GROUP_ACCESS_DENIED');
/** 01 §1: a user whose link reaches what the caller does not (beside PERMISSION_NOT_HELD); `wider` names what. */
export const reachNotHeld = (wider: readonly string[]) =>
  forbidden('Cannot manage a user whose access reaches beyond your own', 'REACH_NOT_HELD', { wider });
/** 01 §2: a suspended or deleted partner's callers are refused, saying which. */
export const partnerInactive = (status: string) => forbidden('Account inactive', 'PARTNER_INACTIVE', { status });

/** 04 wire notes: 400 with `error` = the issues joined by "; " as "<dot.path>: <message>", and `details` =
 * `{formErrors, fieldErrors}`. */
export function validationError(error: z.ZodError, where: 'params' | 'query' | 'body'): DomainError {
  const message = error.issues
    .map((issue) => {
      const at = issue.path.length ? issue.path.map(String).join('.') : where;
      return `${at}: ${issue.message}`;
    })
    .join('; ');
  return new DomainError('invalid', message, 'VALIDATION_ERROR', { details: z.flattenError(error) });
}

/** A validation failure found by a service rather than a schema (a field required only for some callers),
 * in the same shape as the schema failures. */
export function fieldError(path: string, message: string): DomainError {
  return new DomainError('invalid', `${path}: ${message}`, 'VALIDATION_ERROR', {
    details: { formErrors: [], fieldErrors: { [path]: [message] } },
  });
}
