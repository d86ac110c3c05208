import { z } from 'zod';
import { getById, listPaged } from './builders.js';
import { DateTimeSchema, PageQuerySchema, TimestampSchema, UuidSchema } from './common.js';
import { endpoint } from './endpoint.js';

/** 03 §2.6 audit log entry. */
export const AuditLogSchema = z.object({
  id: UuidSchema,
  orgId: UuidSchema.nullable(),
  partnerId: UuidSchema.nullable(),
  timestamp: TimestampSchema,
  actorType: z.enum(['user', 'api_key', 'agent', 'system']),
  actorId: z.string(),
  actorEmail: z.string().nullable(),
  action: z.string(),
  resourceType: z.string(),
  resourceId: z.string().nullable(),
  resourceName: z.string().nullable(),
  details: z.record(z.string(), z.unknown()),
  ipAddress: z.string().nullable(),
  userAgent: z.string().nullable(),
  result: z.enum(['success', 'failure', 'denied']),
  errorMessage: z.string().nullable(),
  checksum: z.string(),
});
export type AuditLog = z.infer<typeof AuditLogSchema>;

/** 03 §4.4: user, action, resource are case-insensitive matches; from/to bound the timestamp. */
export const AuditFilterSchema = PageQuerySchema.extend({
  user: z.string().max(255).optional(),
  action: z.string().max(100).optional(),
  resource: z.string().max(255).optional(),
  orgId: UuidSchema.optional(),
  from: DateTimeSchema.optional(),
  to: DateTimeSchema.optional(),
});

export const AuditVerifySchema = z.object({
  valid: z.boolean(),
  chains: z.array(
    z.object({
      chain: z.string(),
      entries: z.number().int(),
      valid: z.boolean(),
      firstBroken: z.object({ id: z.string().nullable(), seq: z.number().int(), reason: z.string() }).nullable(),
    }),
  ),
});

const list = listPaged('/audit-logs/logs', AuditFilterSchema, AuditLogSchema, { permission: 'audit:read' },
  'List audit log entries, newest first');

export const audit = {
  list,
  // Issue 15 item 11: the path the deployed service's clients list from; the same list as /audit-logs/logs.
  listAll: endpoint({ ...list, path: '/audit-logs', summary: 'List audit log entries, newest first (the same list as /audit-logs/logs)' }),
  get: getById('/audit-logs/logs/:id', AuditLogSchema, { permission: 'audit:read' }, 'Get one audit log entry'),
  search: listPaged('/audit-logs/search', AuditFilterSchema.extend({ q: z.string().max(255).optional() }),
    AuditLogSchema, { permission: 'audit:read' },
    'Search audit entries: q matches action, actor e-mail, resource type, resource name and details'),
  export: endpoint({
    method: 'GET',
    path: '/audit-logs/export',
    query: AuditFilterSchema.omit({ page: true, limit: true }).extend({ format: z.enum(['csv', 'jsonl']).optional() }),
    responses: { 200: { raw: true, contentTypes: ['text/csv', 'application/x-ndjson'] } },
    auth: { permission: 'audit:export', mfa: true, sessionOnly: true },
    summary: 'Export matching audit entries as CSV (or JSON lines), oldest first',
  }),
  verify: endpoint({
    method: 'GET',
    path: '/audit-logs/verify',
    query: z.object({ orgId: UuidSchema.optional() }),
    responses: { 200: AuditVerifySchema },
    auth: { permission: 'audit:read' },
    summary: 'Check the checksum chains of the entries the caller can see',
  }),
} as const;
