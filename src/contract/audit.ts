import { z } from 'zod';
import { getById } from './builders.js';
import { DateTimeSchema, PageQuerySchema, PaginationSchema, QueryBooleanSchema, TimestampSchema, UuidSchema } from './common.js';
import { endpoint } from './endpoint.js';

/** 03 §2.6 action categories. */
export const AuditCategorySchema = z.enum([
  'authentication',
  'device',
  'automation',
  'policy',
  'alert',
  'compliance',
  'organization',
  'system',
]);
export type AuditCategory = z.infer<typeof AuditCategorySchema>;

/** 03 §2.6 "Action categories by prefix", first match wins; everything else is `system`. */
const CATEGORY_PREFIXES: readonly (readonly [string, AuditCategory])[] = [
  ['user.login', 'authentication'],
  ['user.logout', 'authentication'],
  ['user.permission', 'authentication'],
  ['device.', 'device'],
  ['script.', 'automation'],
  ['policy.', 'policy'],
  ['automation.policy.', 'policy'],
  ['alert.', 'alert'],
  ['data.', 'compliance'],
  ['organization.', 'organization'],
];

/** The category of an audit action (03 §2.6): the one rule for entries, exports, reports and stats. */
export function auditCategoryOf(action: string): AuditCategory {
  for (const [prefix, category] of CATEGORY_PREFIXES) if (action.startsWith(prefix)) return category;
  return 'system';
}

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
  category: AuditCategorySchema,
});
export type AuditLog = z.infer<typeof AuditLogSchema>;

/** A comma-separated list of actions (05 "03 §2.6/§4.4": excludeActions). */
const ActionListSchema = z
  .string()
  .max(4000)
  .transform((s) => s.split(',').map((x) => x.trim()).filter((x) => x !== ''));

/** 03 §4.4 and 05 "03 §2.6/§4.4": from/to bound the timestamp, both inclusive; orgId as the list takes it. */
export const AuditRangeSchema = z.object({
  orgId: UuidSchema.optional(),
  from: DateTimeSchema.optional(),
  to: DateTimeSchema.optional(),
});

/** 03 §4.4: user, action, resource are case-insensitive matches; from/to bound the timestamp (inclusive). */
export const AuditFilterSchema = PageQuerySchema.extend({
  user: z.string().max(255).optional(),
  action: z.string().max(100).optional(),
  resource: z.string().max(255).optional(),
  ...AuditRangeSchema.shape,
  excludeActions: ActionListSchema.optional().describe('Comma-separated actions to leave out'),
});

/** The list and search queries: the filters and `skipCount=true` (no count: total and totalPages are -1). */
const AuditListQuerySchema = AuditFilterSchema.extend({
  skipCount: QueryBooleanSchema.optional().describe('true: do not count the matches (total and totalPages are -1)'),
});

/** 05 "03 §2.6/§4.4": the audit lists' paging carries totalPages (ceil(total/limit); -1 with skipCount). */
export const AuditPaginationSchema = PaginationSchema.extend({ totalPages: z.number().int() });
export const AuditPageSchema = z.object({ data: z.array(AuditLogSchema), pagination: AuditPaginationSchema });
export const AuditSearchPageSchema = AuditPageSchema.extend({ query: z.string() });

/** The columns an export may name (`columns=a,b`); the default set leaves out those after `checksum`. */
export const AUDIT_EXPORT_KNOWN_COLUMNS = [
  'id',
  'timestamp',
  'orgId',
  'partnerId',
  'actorType',
  'actorId',
  'actorName',
  'actorEmail',
  'action',
  'resourceType',
  'resourceId',
  'resourceName',
  'result',
  'errorMessage',
  'ipAddress',
  'userAgent',
  'details',
  'checksum',
  'category',
] as const;
export type AuditExportColumn = (typeof AUDIT_EXPORT_KNOWN_COLUMNS)[number];

const ExportColumnsSchema = z
  .string()
  .max(1000)
  .transform((s, ctx) => {
    const names = s.split(',').map((x) => x.trim()).filter((x) => x !== '');
    const unknown = names.filter((n) => !(AUDIT_EXPORT_KNOWN_COLUMNS as readonly string[]).includes(n));
    if (unknown.length > 0 || names.length === 0) {
      ctx.addIssue({
        code: 'custom',
        message: unknown.length > 0 ? `Unknown columns: ${unknown.join(', ')}` : 'columns names no column',
      });
      return z.NEVER;
    }
    return names as AuditExportColumn[];
  });

/** 05 "03 §2.6/§4.4" reports and stats. */
const UserActivitySchema = z.object({
  userId: z.string(),
  userName: z.string(),
  userEmail: z.string(),
  actionCount: z.number().int(),
  lastActiveAt: TimestampSchema,
});
const ActionCountSchema = z.object({ action: z.string(), count: z.number().int() });
export const AuditUserActivityReportSchema = z.object({
  totalUsers: z.number().int(),
  totalEvents: z.number().int(),
  actionsPerUser: z.array(UserActivitySchema),
  topUsers: z.array(UserActivitySchema),
  recentActivity: z.array(AuditLogSchema),
});
/** What the security and compliance reports share: how many entries, by action, and the newest ten. */
const ActionReportSchema = z.object({
  totalEvents: z.number().int(),
  byAction: z.array(ActionCountSchema),
  recentEvents: z.array(AuditLogSchema),
});
const count = z.number().int();
export const AuditSecurityReportSchema = ActionReportSchema.extend({ loginAttempts: count, failedLogins: count, permissionChanges: count });
export const AuditComplianceReportSchema = ActionReportSchema.extend({ dataAccess: count, dataChanges: count, exports: count });
export const AuditStatsSchema = z.object({
  totalEvents: z.number().int(),
  byCategory: z.array(z.object({ category: AuditCategorySchema, count: z.number().int() })),
  byUser: z.array(z.object({ userId: z.string(), userName: z.string(), actionCount: z.number().int() })),
  range: z.object({ from: TimestampSchema.nullable(), to: TimestampSchema.nullable() }),
});

/** `GET path` over the entries of from..to the caller may see: a report of 05 "03 §2.6/§4.4". */
function report<const P extends string, R extends z.ZodType, const S extends string>(path: P, response: R, summary: S) {
  return endpoint({ method: 'GET', path, query: AuditRangeSchema, responses: { 200: response }, auth: { permission: 'audit:read' }, summary });
}

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

const list = endpoint({
  method: 'GET',
  path: '/audit-logs/logs',
  query: AuditListQuerySchema,
  responses: { 200: AuditPageSchema },
  auth: { permission: 'audit:read' },
  summary: 'List audit log entries, newest first',
});

export const audit = {
  list,
  // Issue 15 item 11: the path the deployed service's clients list from; the same list as /audit-logs/logs.
  listAll: endpoint({ ...list, path: '/audit-logs', summary: 'List audit log entries, newest first (the same list as /audit-logs/logs)' }),
  get: getById('/audit-logs/logs/:id', AuditLogSchema, { permission: 'audit:read' }, 'Get one audit log entry'),
  search: endpoint({
    ...list,
    path: '/audit-logs/search',
    query: AuditListQuerySchema.extend({ q: z.string().max(255).optional() }),
    responses: { 200: AuditSearchPageSchema },
    summary: 'Search audit entries: q matches action, actor e-mail, resource type, resource name and details',
  }),
  export: endpoint({
    method: 'GET',
    path: '/audit-logs/export',
    query: AuditFilterSchema.omit({ page: true, limit: true }).extend({
      format: z.enum(['csv', 'jsonl']).optional(),
      userId: z.string().max(255).optional().describe('Only the entries of this actor id (exact)'),
      columns: ExportColumnsSchema.optional().describe(`Comma-separated columns, in this order (known: ${AUDIT_EXPORT_KNOWN_COLUMNS.join(', ')})`),
      includeDetails: QueryBooleanSchema.optional().describe('false: leave the details column out (default true)'),
    }),
    responses: { 200: { raw: true, contentTypes: ['text/csv', 'application/x-ndjson'] } },
    auth: { permission: 'audit:export', mfa: true, sessionOnly: true },
    summary: 'Export matching audit entries as CSV (or JSON lines), oldest first',
  }),
  reportUserActivity: report('/audit-logs/reports/user-activity', AuditUserActivityReportSchema,
    'Who did how much in from..to (at most 5,000 entries considered)'),
  reportSecurityEvents: report('/audit-logs/reports/security-events', AuditSecurityReportSchema,
    'Logins, failed logins, permission and policy changes in from..to (03 §2.6 security actions)'),
  reportCompliance: report('/audit-logs/reports/compliance', AuditComplianceReportSchema,
    'Data access, changes and exports in from..to (03 §2.6 compliance actions)'),
  stats: report('/audit-logs/stats', AuditStatsSchema, 'Entries in from..to by category and by actor'),
  verify: endpoint({
    method: 'GET',
    path: '/audit-logs/verify',
    query: z.object({ orgId: UuidSchema.optional() }),
    responses: { 200: AuditVerifySchema },
    auth: { permission: 'audit:read' },
    summary: 'Check the checksum chains of the entries the caller can see',
  }),
} as const;
