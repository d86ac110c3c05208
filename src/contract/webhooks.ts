import { z } from 'zod';
import { createOne, deleteById, getById, listPaged, updateById } from './builders.js';
import { IdParamsSchema as IdParams, JsonObjectSchema, NameSchema, PageQuerySchema, SuccessSchema, TimestampSchema, UuidSchema, pagedSchema, timestampFields } from './common.js';
import { endpoint } from './endpoint.js';

/** 02 §2.7 statuses: paused sends nothing; failed is set by PATCH or by the system (docs/api-notes.md). */
export const WebhookStatusSchema = z.enum(['active', 'paused', 'failed']);
/** 02 §2.7 delivery statuses. */
export const DeliveryStatusSchema = z.enum(['pending', 'delivered', 'failed', 'retrying']);

/** 05-wire-notes 4.3: names the sender sets itself, refused in custom headers. */
export const RESERVED_HEADER_NAMES = [
  'accept-encoding',
  'connection',
  'content-length',
  'content-type',
  'host',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'user-agent',
];

/** An HTTP header name: an RFC 7230 token. */
export const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// eslint-disable-next-line no-control-regex
const CONTROL_CHARS = /[\u0000-\u0008\u000a-\u001f\u007f]/;
/** What an HTTP header value cannot carry (Node's client refuses it at every send): a value accepted with one would
 * fail every delivery. */
// eslint-disable-next-line no-control-regex
const BEYOND_LATIN1 = /[^\u0000-\u00ff]/;

/** Why an HTTP header value cannot be sent as it is (the end of `Header "<n>" …`), or null when it can. */
export function headerValueProblem(value: string): string | null {
  if (CONTROL_CHARS.test(value)) return 'cannot contain control characters';
  if (BEYOND_LATIN1.test(value)) return 'can hold only Latin-1 characters';
  return null;
}

export const WebhookHeaderSchema = z.object({ key: z.string(), value: z.string() });

/** Custom headers (05-wire-notes 4.3): RFC 7230 token names, not reserved, not duplicated, no control characters. */
const HeaderListSchema = z
  .array(z.strictObject({ key: z.string().min(1).max(256), value: z.string().max(4096) }))
  .max(50)
  .superRefine((headers, ctx) => {
    const seen = new Set<string>();
    headers.forEach(({ key, value }, i) => {
      const name = key.toLowerCase();
      const issue = (message: string) => ctx.addIssue({ code: 'custom', path: [i, 'key'], message });
      if (!HEADER_NAME.test(key)) issue(`Header "${key}" must be a valid RFC token`);
      else if (RESERVED_HEADER_NAMES.includes(name) || name.startsWith('x-svc-')) issue(`Header "${key}" is reserved`);
      else if (seen.has(name)) issue(`Header "${key}" is duplicated`);
      const problem = headerValueProblem(value);
      if (problem) ctx.addIssue({ code: 'custom', path: [i, 'value'], message: `Header "${key}" ${problem}` });
      seen.add(name);
    });
  });

const EventListSchema = z.array(z.string().trim().min(1).max(100)).min(1).max(100);

export const WebhookSchema = z.object({
  id: UuidSchema,
  orgId: UuidSchema,
  name: z.string(),
  url: z.string(),
  events: z.array(z.string()),
  headers: z.array(WebhookHeaderSchema),
  status: WebhookStatusSchema,
  hasSecret: z.boolean(),
  /** Until when deliveries also carry a signature with the previous secret (after rotate-secret); null: none. */
  previousSecretExpiresAt: TimestampSchema.nullable(),
  createdBy: UuidSchema.nullable(),
  ...timestampFields,
  lastDeliveryAt: TimestampSchema.nullable(),
});
export type Webhook = z.infer<typeof WebhookSchema>;

export const DeliveryStatsSchema = z.object({
  total: z.number().int(),
  pending: z.number().int(),
  delivered: z.number().int(),
  failed: z.number().int(),
  retrying: z.number().int(),
  lastDeliveredAt: TimestampSchema.nullable(),
});

export const WebhookWithStatsSchema = WebhookSchema.extend({ deliveryStats: DeliveryStatsSchema });

export const WebhookDeliverySchema = z.object({
  id: UuidSchema,
  webhookId: UuidSchema,
  orgId: UuidSchema,
  status: DeliveryStatusSchema,
  event: z.string(),
  eventId: UuidSchema,
  payload: JsonObjectSchema,
  responseStatus: z.number().int().nullable(),
  responseBody: z.string().nullable(),
  attempt: z.number().int(),
  nextAttemptAt: TimestampSchema.nullable(),
  createdAt: TimestampSchema,
  deliveredAt: TimestampSchema.nullable(),
});
export type WebhookDelivery = z.infer<typeof WebhookDeliverySchema>;

const Secret = z.string().min(1).max(255);

export const WebhookCreateSchema = z.strictObject({
  orgId: UuidSchema.optional().describe('Organization (required for partner and system callers)'),
  name: NameSchema.describe('Name (1-255 characters)'),
  url: z.string().min(1).max(2048).describe('HTTPS URL the deliveries are POSTed to'),
  secret: Secret.describe('Signing secret (1-255 characters); write-only'),
  events: EventListSchema.describe('Event types (02 §6), or * for every event'),
  headers: HeaderListSchema.optional().default([]).describe('Custom headers [{key, value}]'),
});

export const WebhookUpdateSchema = z.strictObject({
  name: NameSchema.optional(),
  url: z.string().min(1).max(2048).optional(),
  secret: Secret.optional().describe('New signing secret, replacing the old one at once (see rotate-secret)'),
  events: EventListSchema.optional(),
  headers: HeaderListSchema.optional(),
  status: WebhookStatusSchema.optional(),
});

export const WebhookListQuerySchema = PageQuerySchema.extend({
  orgId: UuidSchema.optional().describe('Only webhooks of this organization'),
  status: WebhookStatusSchema.optional(),
});

export const DeliveryListQuerySchema = PageQuerySchema.extend({
  status: DeliveryStatusSchema.optional(),
});

export const WebhookTestSchema = z.strictObject({
  event: z.string().trim().min(1).max(100).optional().describe('Event type (default webhook.test)'),
  payload: JsonObjectSchema.optional().describe('The data of the test event'),
});

export const WebhookRotateSecretSchema = z.strictObject({
  secret: Secret.describe('The new signing secret'),
  overlapSeconds: z
    .number()
    .int()
    .min(0)
    .max(7 * 86_400)
    .optional()
    .default(86_400)
    .describe('How long deliveries also carry a signature with the old secret (0-604800 s, default 86400)'),
});

const DeliveryParams = z.object({ id: UuidSchema, deliveryId: UuidSchema });

const READ = {} as const;
const WRITE = { permission: 'organizations:write', mfa: true } as const;

/** 02 §4.3 plus the list route of 05-wire-notes 4.3 and secret rotation. */
export const webhooks = {
  list: listPaged('/webhooks', WebhookListQuerySchema, WebhookSchema, READ, 'List webhooks, newest first'),
  create: createOne('/webhooks', WebhookCreateSchema, WebhookSchema, WRITE,
    'Create a webhook; the URL must be HTTPS and public'),
  get: getById('/webhooks/:id', WebhookWithStatsSchema, READ, 'Get a webhook with its delivery statistics'),
  update: updateById('/webhooks/:id', WebhookUpdateSchema, WebhookSchema, WRITE,
    'Change any of name, url, secret, events, headers, status'),
  delete: deleteById('/webhooks/:id', SuccessSchema, WRITE, 'Delete a webhook and its deliveries'),
  deliveries: endpoint({
    method: 'GET',
    path: '/webhooks/:id/deliveries',
    params: IdParams,
    query: DeliveryListQuerySchema,
    responses: { 200: pagedSchema(WebhookDeliverySchema) },
    auth: READ,
    summary: 'List deliveries of a webhook, newest first',
  }),
  retry: endpoint({
    method: 'POST',
    path: '/webhooks/:id/retry/:deliveryId',
    params: DeliveryParams,
    responses: {
      202: z.object({ message: z.string(), delivery: WebhookDeliverySchema.pick({ id: true, status: true, attempt: true }) }),
    },
    auth: WRITE,
    summary: 'Queue a failed delivery again, as a new pending delivery',
  }),
  test: endpoint({
    method: 'POST',
    path: '/webhooks/:id/test',
    params: IdParams,
    body: WebhookTestSchema,
    responses: {
      202: z.object({
        message: z.string(),
        delivery: WebhookDeliverySchema.pick({ id: true, webhookId: true, status: true, event: true, attempt: true }),
      }),
    },
    auth: WRITE,
    summary: 'Queue a test delivery (event webhook.test unless given)',
  }),
  rotateSecret: endpoint({
    method: 'POST',
    path: '/webhooks/:id/rotate-secret',
    params: IdParams,
    body: WebhookRotateSecretSchema,
    responses: { 200: WebhookSchema },
    auth: WRITE,
    summary: 'Replace the signing secret; the old one also signs deliveries for the overlap window',
  }),
} as const;
