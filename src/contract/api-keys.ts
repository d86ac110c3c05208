import { z } from 'zod';
import { createOne, deleteById, getById, listPaged, updateById } from './builders.js';
import { DateTimeSchema, IdParamsSchema as IdParams, NameSchema as Name, PageQuerySchema, TimestampSchema, UuidSchema, successWith, timestampFields } from './common.js';
import { endpoint } from './endpoint.js';


/** 01 §2.1: `svc_` followed by 32 base64url characters. */
export const API_KEY_PATTERN = /^svc_[A-Za-z0-9_-]{32}$/;
export const API_KEY_PREFIX = 'svc_';

/** The text every response that carries a new key repeats (04 wire notes "API keys"). */
export const API_KEY_WARNING = 'Store this API key securely. It will not be shown again.';

export const ApiKeyStatusSchema = z.enum(['active', 'expired', 'revoked']);
export type ApiKeyStatus = z.infer<typeof ApiKeyStatusSchema>;

/** A key scope: a `resource:action` permission (either part may be `*`) or `*` for everything (01 §5.4). */
export const ApiKeyScopeSchema = z
  .string()
  .max(100)
  .regex(/^(\*|(\*|[a-z_]+):(\*|[a-z_]+))$/, 'expected resource:action or *');

const RateLimit = z.number().int().min(1).max(100_000);

/** 01 §2.1 metadata; keyHash is never listed, so the response schemas strip it. */
export const ApiKeySchema = z.object({
  id: UuidSchema,
  orgId: UuidSchema,
  name: z.string(),
  keyPrefix: z.string(),
  scopes: z.array(z.string()),
  expiresAt: TimestampSchema.nullable(),
  rateLimit: z.number().int(),
  status: ApiKeyStatusSchema,
  createdBy: UuidSchema.nullable(),
  ...timestampFields,
  lastUsedAt: TimestampSchema.nullable(),
  usageCount: z.number().int(),
});
export type ApiKey = z.infer<typeof ApiKeySchema>;

/** Create and rotate answers: the metadata plus the full key, shown this once, and the warning. */
export const ApiKeyWithSecretSchema = ApiKeySchema.extend({
  key: z.string().describe('The full API key; it is not shown again'),
  warning: z.string(),
});
export type ApiKeyWithSecret = z.infer<typeof ApiKeyWithSecretSchema>;

export const ApiKeyCreateSchema = z.strictObject({
  orgId: UuidSchema.describe('Organization the key belongs to'),
  name: Name.describe('Name of the key (1-255 characters)'),
  scopes: z
    .array(ApiKeyScopeSchema)
    .max(200)
    .optional()
    .describe('Permissions of the key: resource:action strings, or * for all (default none)'),
  expiresAt: DateTimeSchema.nullable().optional().describe('When the key stops working (ISO 8601); omitted or null: never'),
  rateLimit: RateLimit.optional().describe('Requests per hour, 1-100000 (default 1000)'),
});

export const ApiKeyUpdateSchema = z.strictObject({
  name: Name.optional().describe('New name (1-255 characters)'),
  scopes: z.array(ApiKeyScopeSchema).max(200).optional().describe('Replaces the scopes: resource:action strings, or *'),
  rateLimit: RateLimit.optional().describe('Requests per hour, 1-100000'),
});

export const ApiKeyListQuerySchema = PageQuerySchema.extend({
  orgId: UuidSchema.optional().describe('Only keys of this organization'),
  status: ApiKeyStatusSchema.optional().describe('Only keys in this state'),
});

export const ApiKeyRevokedSchema = successWith({
  message: z.string(),
  apiKey: z.object({
    id: UuidSchema,
    name: z.string(),
    keyPrefix: z.string(),
    status: ApiKeyStatusSchema,
    updatedAt: TimestampSchema,
  }),
});

const READ = { permission: 'organizations:read', sessionOnly: true } as const;
const WRITE = { permission: 'organizations:write', mfa: true, sessionOnly: true } as const;

/** 01 §4.1: key management needs a user session (never a key) and MFA for changes (01 §5.5). */
export const apiKeys = {
  list: listPaged('/api-keys', ApiKeyListQuerySchema, ApiKeySchema, READ, 'List API keys, newest first'),
  create: createOne('/api-keys', ApiKeyCreateSchema, ApiKeyWithSecretSchema, WRITE,
    'Create an API key; the key is shown only in this response'),
  get: getById('/api-keys/:id', ApiKeySchema, READ, 'Get an API key (metadata only)'),
  update: updateById('/api-keys/:id', ApiKeyUpdateSchema, ApiKeySchema, WRITE,
    'Update the name, scopes or rate limit of an active API key'),
  revoke: deleteById('/api-keys/:id', ApiKeyRevokedSchema, WRITE,
    'Revoke an API key; it stops working at once, permanently'),
  rotate: endpoint({
    method: 'POST',
    path: '/api-keys/:id/rotate',
    params: IdParams,
    responses: { 200: ApiKeyWithSecretSchema },
    auth: WRITE,
    summary: 'Replace the key material; the old key stops working at once',
  }),
} as const;
