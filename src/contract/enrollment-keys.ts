import { z } from 'zod';
import { createOne, deleteById, getById, listPaged } from './builders.js';
import { DateTimeSchema, IdParamsSchema as IdParams, NameSchema, PageQuerySchema, QueryBooleanSchema, SuccessSchema, TimestampSchema, UuidSchema, timestampFields } from './common.js';
import { endpoint } from './endpoint.js';


const MaxUsage = z.number().int().min(1).max(100_000);
const TtlMinutes = z.number().int().min(1).max(525_600);

/** 01 §2.2 metadata: the raw key is never listed, only its peppered hash is stored. */
export const EnrollmentKeySchema = z.object({
  id: UuidSchema,
  orgId: UuidSchema,
  siteId: UuidSchema.nullable(),
  name: z.string(),
  usageCount: z.number().int(),
  maxUsage: z.number().int().nullable(),
  expiresAt: TimestampSchema,
  createdBy: UuidSchema.nullable(),
  ...timestampFields,
});
export type EnrollmentKey = z.infer<typeof EnrollmentKeySchema>;

/** Create and rotate answers: the metadata plus the raw key (64 hex characters), shown this once. */
export const EnrollmentKeyWithSecretSchema = EnrollmentKeySchema.extend({
  key: z.string().describe('The enrollment key; it is not shown again'),
});

function notBoth(value: { expiresAt?: string | null | undefined; ttlMinutes?: number | undefined }, ctx: z.RefinementCtx): void {
  if (value.expiresAt !== undefined && value.ttlMinutes !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['ttlMinutes'], message: 'give either expiresAt or ttlMinutes, not both' });
  }
}

export const EnrollmentKeyCreateSchema = z
  .strictObject({
    orgId: UuidSchema.optional().describe('Organization (required for partner and system callers)'),
    siteId: UuidSchema.nullable().optional().describe('Site that enrolled devices are pinned to'),
    name: NameSchema.describe('Name of the key (1-255 characters)'),
    maxUsage: MaxUsage.optional().describe('How many devices may enroll with it, 1-100000 (default 1)'),
    expiresAt: DateTimeSchema.optional().describe('When the key expires (ISO 8601); default now plus the server TTL'),
    ttlMinutes: TtlMinutes.optional().describe('Lifetime in minutes, 1-525600, instead of expiresAt'),
  })
  .superRefine(notBoth);

export const EnrollmentKeyRotateSchema = z
  .strictObject({
    maxUsage: MaxUsage.nullable().optional().describe('New usage cap, 1-100000, or null for unlimited; omitted: kept'),
    expiresAt: DateTimeSchema.optional().describe('New expiry (ISO 8601); omitted: kept'),
    ttlMinutes: TtlMinutes.optional().describe('New lifetime in minutes from now, 1-525600, instead of expiresAt'),
  })
  .superRefine(notBoth);

export const EnrollmentKeyListQuerySchema = PageQuerySchema.extend({
  orgId: UuidSchema.optional().describe('Only keys of this organization'),
  siteId: UuidSchema.optional().describe('Only keys pinned to this site'),
  expired: QueryBooleanSchema.optional().describe('true: only expired keys; false: only unexpired ones'),
});

const READ = { permission: 'organizations:read', sessionOnly: true } as const;
const WRITE = { permission: 'organizations:write', mfa: true, sessionOnly: true } as const;

/** 01 §4.2: managed like API keys, by user sessions only, with MFA for changes (01 §5.5). */
export const enrollmentKeys = {
  list: listPaged('/enrollment-keys', EnrollmentKeyListQuerySchema, EnrollmentKeySchema, READ,
    'List enrollment keys, newest first'),
  create: createOne('/enrollment-keys', EnrollmentKeyCreateSchema, EnrollmentKeyWithSecretSchema, WRITE,
    'Create an enrollment key; the key is shown only in this response'),
  get: getById('/enrollment-keys/:id', EnrollmentKeySchema, READ, 'Get an enrollment key (metadata only)'),
  rotate: endpoint({
    method: 'POST',
    path: '/enrollment-keys/:id/rotate',
    params: IdParams,
    body: EnrollmentKeyRotateSchema,
    responses: { 200: EnrollmentKeyWithSecretSchema },
    auth: WRITE,
    summary: 'Issue new key material and reset its usage count; the old key stops working at once',
  }),
  delete: deleteById('/enrollment-keys/:id', SuccessSchema, WRITE, 'Delete an enrollment key (hard delete)'),
} as const;
