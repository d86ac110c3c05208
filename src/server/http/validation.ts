import { z } from 'zod';
import { HttpError } from './errors.js';

/** 04 wire notes: 400 with `error` = the issues joined by "; " as "<dot.path>: <message>", and `details` =
 * `{formErrors, fieldErrors}`. */
export function validationError(error: z.ZodError, where: 'params' | 'query' | 'body'): HttpError {
  const message = error.issues
    .map((issue) => {
      const at = issue.path.length ? issue.path.map(String).join('.') : where;
      return `${at}: ${issue.message}`;
    })
    .join('; ');
  return new HttpError(400, message, 'VALIDATION_ERROR', z.flattenError(error));
}

/** A validation failure found by a service rather than a schema (a field required only for some callers),
 * in the same shape as the schema failures. */
export function fieldError(path: string, message: string): HttpError {
  return new HttpError(400, `${path}: ${message}`, 'VALIDATION_ERROR', {
    formErrors: [],
    fieldErrors: { [path]: [message] },
  });
}
