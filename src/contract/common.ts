import { z } from 'zod';

export const UuidSchema = z.uuid();

/** ISO 8601 with offset or Z, as the API sends and accepts timestamps. */
export const DateTimeSchema = z.iso.datetime({ offset: true });

/** Timestamps in responses: the server always writes ISO strings. */
export const TimestampSchema = z.string();

/** The `:id` path parameter of an endpoint that addresses one resource. */
export const IdParamsSchema = z.object({ id: UuidSchema });

/** The name of a resource as a request gives it: trimmed, 1-255 characters. */
export const NameSchema = z.string().trim().min(1).max(255);

/** When a resource was made and last changed, as every mutable resource reports it: spread into its object. */
export const timestampFields = { createdAt: TimestampSchema, updatedAt: TimestampSchema };

function integerOr(fallback: number, min: number, max: number) {
  return z.preprocess((value) => {
    const parsed = typeof value === 'string' || typeof value === 'number' ? Number.parseInt(String(value), 10) : NaN;
    if (!Number.isFinite(parsed)) return fallback;
    return Math.min(max, Math.max(min, parsed));
  }, z.number().int());
}

/** 01 §4 "Paged lists": page default 1, limit default 50, max 100; out-of-range values are clamped and
 * unparseable ones fall back to the defaults (04 wire notes). */
export const PageQuerySchema = z.object({
  page: integerOr(1, 1, 1_000_000).optional().default(1),
  limit: integerOr(50, 1, 100).optional().default(50),
});

export const PaginationSchema = z.object({
  page: z.number().int(),
  limit: z.number().int(),
  total: z.number().int(),
});
export type Pagination = z.infer<typeof PaginationSchema>;

export function pagedSchema<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item), pagination: PaginationSchema });
}

export function dataSchema<T extends z.ZodType>(item: T) {
  return z.object({ data: item });
}

export const SuccessSchema = z.object({ success: z.literal(true) });

/** `{ success: true, ...shape }`: the envelope some areas (PAM above all) answer in. */
export function successWith<S extends z.ZodRawShape>(shape: S) {
  return SuccessSchema.extend(shape);
}

/** One error body everywhere (DESIGN.md "Errors", 04 wire notes "Cross-cutting"). */
export const ErrorBodySchema = z
  .object({
    error: z.string(),
    code: z.string().optional(),
    details: z.unknown().optional(),
  })
  .loose();
export type ErrorBody = z.infer<typeof ErrorBodySchema>;

/** Boolean query flags as the API accepts them: true/false strings. */
export const QueryBooleanSchema = z.enum(['true', 'false']).transform((v) => v === 'true');

/** A free-form JSON object (addresses, contacts, settings whose structure the spec does not show). */
export const JsonObjectSchema = z.record(z.string(), z.unknown());

/** `resource:action` strings such as `devices:read` or `*:*`. */
export const PermissionStringSchema = z.string().regex(/^(\*|[a-z_]+):(\*|[a-z_]+)$/, 'expected resource:action');
