import type { z } from 'zod';
import { IdParamsSchema, pagedSchema } from './common.js';
import { endpoint, type EndpointAuth } from './endpoint.js';

// Builders of the endpoint shapes most areas repeat: one resource by its `:id` (200), a paged list, a create.
// Each returns what `endpoint()` would for the same declaration (same keys, same literal types), so the generated
// client, OpenAPI document and manifest do not change. PARAMS: an area's own `:id` schema that describes the id.

type IdParams = typeof IdParamsSchema;

/** `METHOD path` with no body (GET, DELETE). */
function bodiless<const M extends 'GET' | 'DELETE'>(method: M) {
  return <const P extends string, R extends z.ZodType, const A extends EndpointAuth, const S extends string>(
    path: P,
    response: R,
    auth: A,
    summary: S,
    params: IdParams = IdParamsSchema,
  ) => endpoint({ method, path, params, responses: { 200: response }, auth, summary });
}

/** `GET path`: one resource by its `:id`. */
export const getById = bodiless('GET');

/** `DELETE path`: one resource by its `:id`. */
export const deleteById = bodiless('DELETE');

/** `PATCH path` with BODY: change one resource by its `:id`. */
export function updateById<
  const P extends string,
  B extends z.ZodType,
  R extends z.ZodType,
  const A extends EndpointAuth,
  const S extends string,
>(path: P, body: B, response: R, auth: A, summary: S, params: IdParams = IdParamsSchema) {
  return endpoint({ method: 'PATCH', path, params, body, responses: { 200: response }, auth, summary });
}

/** `GET path` with QUERY: a paged list of ITEM (`{ data, pagination }`, 01 §4 "Paged lists"). */
export function listPaged<
  const P extends string,
  Q extends z.ZodType,
  I extends z.ZodType,
  const A extends EndpointAuth,
  const S extends string,
>(path: P, query: Q, item: I, auth: A, summary: S) {
  return endpoint({ method: 'GET', path, query, responses: { 200: pagedSchema(item) }, auth, summary });
}

/** `POST path` with BODY that creates a resource: 201 with RESPONSE, and an Idempotency-Key honoured. */
export function createOne<
  const P extends string,
  B extends z.ZodType,
  R extends z.ZodType,
  const A extends EndpointAuth,
  const S extends string,
>(path: P, body: B, response: R, auth: A, summary: S) {
  return endpoint({ method: 'POST', path, body, responses: { 201: response }, auth, idempotent: true, summary });
}
