import { z } from 'zod';
import { createOne, deleteById, getById, listPaged, updateById } from './builders.js';
import {
  DateTimeSchema,
  IdParamsSchema as IdParams,
  JsonObjectSchema,
  NameSchema as Name,
  PageQuerySchema,
  QueryBooleanSchema,
  TimestampSchema,
  UuidSchema,
  timestampFields,
} from './common.js';
import { endpoint } from './endpoint.js';

export const AlertSeveritySchema = z.enum(['critical', 'high', 'medium', 'low', 'info']);
export type AlertSeverity = z.infer<typeof AlertSeveritySchema>;
export const AlertStatusSchema = z.enum(['active', 'acknowledged', 'resolved', 'suppressed']);
export type AlertStatus = z.infer<typeof AlertStatusSchema>;

/** 02 §8: 0-10080 minutes (7 days). */
const Cooldown = z.number().int().min(0).max(10_080);
/** 05 wire notes: conditions and targets are at most 64 KB of JSON. */
const MAX_OBJECT_BYTES = 64 * 1024;
const bounded = <T extends z.ZodType>(schema: T) =>
  schema.refine((value) => JSON.stringify(value).length <= MAX_OBJECT_BYTES, { message: 'Object too large (max 64KB)' });

/** The operators of 02 §2.1 "Conventional condition keys". */
export const ConditionOperatorSchema = z.enum(['>', '<', '>=', '<=', 'equals']);
export type ConditionOperator = z.infer<typeof ConditionOperatorSchema>;

/** Conditions are free-form (02 §2.1); the conventional keys, when present, must have their types. */
export const AlertConditionsSchema = bounded(
  z
    .looseObject({
      metric: z.string().trim().min(1).max(100).optional(),
      operator: ConditionOperatorSchema.optional(),
      threshold: z.union([z.number(), z.string().max(255)]).optional(),
      durationMinutes: z.number().min(0).max(1440).optional(),
      serviceName: z.string().trim().min(1).max(255).optional(),
    })
    .describe('metric, operator (> < >= <= equals), threshold, durationMinutes (0-1440), serviceName'),
);
export type AlertConditions = z.infer<typeof AlertConditionsSchema>;

/** 02 §2.1 Targets: organization (optional orgId), site (siteIds), device (deviceIds), tag (tags; any matches). */
export const AlertTargetsSchema = bounded(
  z
    .looseObject({
      scope: z.enum(['organization', 'site', 'device', 'tag']),
      orgId: UuidSchema.optional(),
      siteIds: z.array(UuidSchema).max(1000).optional(),
      deviceIds: z.array(UuidSchema).max(10_000).optional(),
      tags: z.array(z.string().min(1).max(100)).max(1000).optional(),
    })
    .superRefine((t, ctx) => {
      const need = { site: 'siteIds', device: 'deviceIds', tag: 'tags' } as const;
      if (t.scope === 'organization') return;
      const key = need[t.scope];
      if (!t[key] || t[key].length === 0) ctx.addIssue({ code: 'custom', path: [key], message: `scope ${t.scope} needs a non-empty ${key}` });
    })
    .describe('{scope: organization|site|device|tag, orgId?, siteIds?, deviceIds?, tags?}'),
);
export type AlertTargets = z.infer<typeof AlertTargetsSchema>;

export const AlertTemplateSchema = z.object({
  id: UuidSchema,
  orgId: UuidSchema.nullable(),
  name: z.string(),
  description: z.string().nullable(),
  category: z.string(),
  severity: AlertSeveritySchema,
  conditions: JsonObjectSchema,
  targets: JsonObjectSchema,
  defaultCooldownMinutes: z.number().int(),
  titleTemplate: z.string(),
  messageTemplate: z.string(),
  builtIn: z.boolean(),
  ...timestampFields,
});
export type AlertTemplate = z.infer<typeof AlertTemplateSchema>;

const TemplateFields = {
  name: Name.describe('Name, 1-255 characters'),
  description: z.string().max(2000).nullable().optional().describe('Description'),
  category: z.string().trim().min(1).max(100).optional().describe('Category, 1-100 characters (default Custom)'),
  severity: AlertSeveritySchema.describe('critical, high, medium, low or info'),
  conditions: AlertConditionsSchema.optional().describe('Conditions (JSON object; default {})'),
  targets: AlertTargetsSchema.optional().describe('Targets (JSON object; default {"scope":"organization"})'),
  defaultCooldownMinutes: Cooldown.optional().describe('Cooldown after resolve, 0-10080 minutes (default 15)'),
};

export const AlertTemplateCreateSchema = z.strictObject({
  ...TemplateFields,
  orgId: UuidSchema.optional().describe('Organization (partner and system callers)'),
});
export const AlertTemplateUpdateSchema = z.strictObject({
  name: TemplateFields.name.optional(),
  description: TemplateFields.description,
  category: TemplateFields.category,
  severity: TemplateFields.severity.optional(),
  conditions: TemplateFields.conditions,
  targets: TemplateFields.targets,
  defaultCooldownMinutes: TemplateFields.defaultCooldownMinutes,
});

export const AlertTemplateListQuerySchema = PageQuerySchema.extend({
  severity: AlertSeveritySchema.optional().describe('Only templates of this severity'),
  search: z.string().trim().max(255).optional().describe('Part of the name or description (case-insensitive)'),
  builtIn: QueryBooleanSchema.optional().describe('true: only built-in templates; false: only custom ones'),
  orgId: UuidSchema.optional().describe('Custom templates of this organization only'),
});

/** The flat list envelope of /alert-templates (05 wire notes). */
export function flatPagedSchema<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item), page: z.number().int(), limit: z.number().int(), total: z.number().int() });
}
const dataOf = <T extends z.ZodType>(item: T) => z.object({ data: item });
const DeletedSchema = dataOf(z.object({ id: UuidSchema, deleted: z.literal(true) }));

export const AlertRuleSchema = z.object({
  id: UuidSchema,
  orgId: UuidSchema,
  templateId: UuidSchema,
  templateName: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  severity: AlertSeveritySchema,
  enabled: z.boolean(),
  isActive: z.boolean(),
  targets: JsonObjectSchema,
  conditions: JsonObjectSchema,
  cooldownMinutes: z.number().int(),
  autoResolve: z.boolean(),
  targetType: z.enum(['organization', 'site', 'device', 'tag']),
  targetId: z.string().nullable(),
  notificationChannelIds: z.array(UuidSchema).nullable(),
  escalationPolicyId: UuidSchema.nullable(),
  ...timestampFields,
});
export type AlertRule = z.infer<typeof AlertRuleSchema>;

const RuleFields = {
  name: Name.describe('Name, 1-255 characters'),
  description: z.string().max(2000).nullable().optional().describe('Description'),
  severity: AlertSeveritySchema.optional().describe("Severity (default: the template's)"),
  enabled: z.boolean().optional().describe('Whether the rule is evaluated (default true)'),
  targets: AlertTargetsSchema.optional().describe("Targets (JSON object; default: the template's)"),
  conditions: AlertConditionsSchema.optional().describe("Conditions (JSON object; default: the template's)"),
  cooldownMinutes: Cooldown.optional().describe("Cooldown after resolve, 0-10080 minutes (default: the template's)"),
  autoResolve: z.boolean().optional().describe('Resolve the alert when the condition no longer holds (default true)'),
  notificationChannelIds: z.array(UuidSchema).max(100).nullable().optional().describe('Override channels (default: every enabled channel)'),
  escalationPolicyId: UuidSchema.nullable().optional().describe('Escalation policy'),
};

export const AlertRuleCreateSchema = z.strictObject({
  templateId: UuidSchema.describe('The template the rule instantiates'),
  ...RuleFields,
  orgId: UuidSchema.optional().describe('Organization (partner and system callers)'),
});
export const AlertRuleUpdateSchema = z.strictObject({
  name: RuleFields.name.optional(),
  description: RuleFields.description,
  severity: RuleFields.severity,
  enabled: RuleFields.enabled,
  targets: RuleFields.targets,
  conditions: RuleFields.conditions,
  cooldownMinutes: RuleFields.cooldownMinutes,
  autoResolve: RuleFields.autoResolve,
  notificationChannelIds: RuleFields.notificationChannelIds,
  escalationPolicyId: RuleFields.escalationPolicyId,
});

export const AlertRuleListQuerySchema = PageQuerySchema.extend({
  orgId: UuidSchema.optional().describe('Only rules of this organization'),
  enabled: QueryBooleanSchema.optional().describe('true or false'),
  severity: AlertSeveritySchema.optional().describe('Only rules of this severity'),
  templateId: UuidSchema.optional().describe('Only rules of this template'),
  targetType: z.enum(['device', 'site', 'organization', 'tag']).optional().describe('Only rules whose targets have this scope'),
  targetValue: z.string().trim().min(1).max(255).optional().describe('Only rules targeting this device id, site id, organization id or tag'),
  search: z.string().trim().max(255).optional().describe('Part of the name or description (case-insensitive)'),
});

// ---- Alerts ----

export const AlertSchema = z.object({
  id: UuidSchema,
  ruleId: UuidSchema.nullable(),
  templateId: UuidSchema.nullable(),
  deviceId: UuidSchema.nullable(),
  orgId: UuidSchema,
  status: z.string().describe('active, acknowledged, resolved or suppressed'),
  severity: AlertSeveritySchema,
  title: z.string(),
  message: z.string(),
  context: JsonObjectSchema,
  triggeredAt: TimestampSchema,
  acknowledgedAt: TimestampSchema.nullable(),
  acknowledgedBy: UuidSchema.nullable(),
  resolvedAt: TimestampSchema.nullable(),
  resolvedBy: UuidSchema.nullable(),
  resolutionNote: z.string().nullable(),
  suppressedUntil: TimestampSchema.nullable(),
  ...timestampFields,
  deviceHostname: z.string().nullable(),
  ruleName: z.string().nullable(),
  orgName: z.string().nullable(),
});
export type Alert = z.infer<typeof AlertSchema>;

export const AlertNotificationSchema = z.object({
  id: z.string(),
  channelId: z.string().nullable(),
  status: z.string(),
  sentAt: TimestampSchema.nullable(),
  errorMessage: z.string().nullable(),
  createdAt: TimestampSchema,
  channelName: z.string().nullable(),
  channelType: z.string().nullable(),
});

export const AlertDetailSchema = AlertSchema.extend({
  device: z.object({ id: UuidSchema, hostname: z.string(), osType: z.string(), status: z.string() }).nullable(),
  rule: z
    .object({ id: UuidSchema, name: z.string(), templateId: UuidSchema, targetType: z.string(), targetId: z.string().nullable(), isActive: z.boolean() })
    .nullable(),
  notifications: z.array(AlertNotificationSchema),
});

const StatusList = z
  .string()
  .transform((s) => s.split(',').map((x) => x.trim()).filter(Boolean))
  .pipe(z.array(AlertStatusSchema).min(1));

export const AlertListQuerySchema = PageQuerySchema.extend({
  orgId: UuidSchema.optional().describe('Only alerts of this organization'),
  status: StatusList.optional().describe('One status or a comma list (active, acknowledged, resolved, suppressed)'),
  severity: AlertSeveritySchema.optional().describe('Only alerts of this severity'),
  deviceId: UuidSchema.optional().describe('Only alerts of this device'),
  ruleId: UuidSchema.optional().describe('Only alerts of this rule'),
  startDate: DateTimeSchema.optional().describe('Triggered at or after (ISO 8601)'),
  endDate: DateTimeSchema.optional().describe('Triggered at or before (ISO 8601)'),
  updatedSince: DateTimeSchema.optional().describe('Changed at or after (ISO 8601); what `svc alerts watch` polls with'),
});

export const AlertSummarySchema = z.object({
  bySeverity: z.object({ critical: z.number(), high: z.number(), medium: z.number(), low: z.number(), info: z.number() }),
  byStatus: z.object({ active: z.number(), acknowledged: z.number(), resolved: z.number(), suppressed: z.number() }),
  total: z.number(),
});

export const AlertResolveSchema = z.strictObject({ note: z.string().max(5000).optional().describe('Resolution note') });
export const AlertSuppressSchema = z.strictObject({
  until: z.string().optional().describe('Suppressed until (ISO 8601, in the future); omitted: indefinitely'),
});
export const AlertBulkSchema = z.strictObject({
  action: z.enum(['acknowledge', 'resolve', 'suppress']).describe('acknowledge, resolve or suppress'),
  alertIds: z.array(UuidSchema).min(1).max(100).describe('1-100 alert ids'),
  until: z.string().optional().describe('For suppress: until when (ISO 8601)'),
  note: z.string().max(5000).optional().describe('For resolve: resolution note'),
});
export const AlertBulkResultSchema = z.object({ updated: z.number().int(), skipped: z.number().int(), failed: z.number().int() });

// ---- Correlations ----

export const CorrelationLinkSchema = z.object({
  id: UuidSchema,
  alertId: UuidSchema,
  relatedAlertId: UuidSchema,
  reason: z.string(),
  confidence: z.number(),
  createdAt: TimestampSchema,
});
export const CorrelationGroupSchema = z.object({
  id: UuidSchema,
  title: z.string(),
  summary: z.string(),
  correlationScore: z.number(),
  rootCauseHint: z.string(),
  alerts: z.array(
    z.object({
      id: UuidSchema,
      ruleId: UuidSchema.nullable(),
      templateId: UuidSchema.nullable(),
      severity: AlertSeveritySchema,
      message: z.string(),
      deviceId: UuidSchema.nullable(),
      occurredAt: TimestampSchema,
    }),
  ),
  createdAt: TimestampSchema,
});
export const CorrelationListQuerySchema = PageQuerySchema.extend({
  orgId: UuidSchema.optional().describe('Only links of this organization'),
  alertId: UuidSchema.optional().describe('Only links involving this alert'),
  minConfidence: z.coerce.number().min(0).max(1).optional().describe('Only links at least this confident (0.0-1.0)'),
});
export const CorrelationAnalyzeSchema = z.strictObject({
  alertIds: z.array(UuidSchema).max(1000).optional().describe('Alerts to analyze (default: all of the window)'),
  windowMinutes: z.number().int().min(5).max(1440).optional().default(60).describe('Window, 5-1440 minutes (default 60)'),
  orgId: UuidSchema.optional().describe('Organization (partner and system callers)'),
});

// ---- Agent metrics ----

export const MetricSampleSchema = z.strictObject({
  metric: z
    .string()
    .regex(/^[a-zA-Z][a-zA-Z0-9_.-]{0,99}$/)
    .describe('cpu.usage, memory.availablePercent, disk.freePercent, network.latencyMs, service.status, …'),
  value: z.union([z.number().finite(), z.string().max(255)]),
  serviceName: z.string().min(1).max(255).optional().describe('For per-service metrics such as service.status'),
  timestamp: DateTimeSchema.optional().describe("When it was measured (default: the request's timestamp, else now)"),
});
export const AgentMetricsSchema = z.strictObject({
  timestamp: DateTimeSchema.optional().describe('When the samples were measured (default now)'),
  samples: z.array(MetricSampleSchema).min(1).max(5000),
});
export const AgentMetricsResponseSchema = z.object({ accepted: z.number().int() });

const SCOPE = {} as const;
const WRITE = { permission: 'alerts:write', mfa: true } as const;
const T = '/alert-templates';

export const alertTemplates = {
  listTemplates: endpoint({
    method: 'GET',
    path: `${T}/templates`,
    query: AlertTemplateListQuerySchema,
    responses: { 200: flatPagedSchema(AlertTemplateSchema) },
    auth: SCOPE,
    summary: 'List built-in and own-organization templates, built-ins first, then by name',
  }),
  listBuiltInTemplates: endpoint({
    method: 'GET',
    path: `${T}/templates/built-in`,
    query: AlertTemplateListQuerySchema.omit({ builtIn: true, orgId: true }),
    responses: { 200: flatPagedSchema(AlertTemplateSchema) },
    auth: SCOPE,
    summary: 'List the built-in templates',
  }),
  createTemplate: createOne(`${T}/templates`, AlertTemplateCreateSchema, dataOf(AlertTemplateSchema), WRITE,
    'Create a custom template'),
  getTemplate: getById(`${T}/templates/:id`, dataOf(AlertTemplateSchema), SCOPE, 'Get a template'),
  updateTemplate: updateById(`${T}/templates/:id`, AlertTemplateUpdateSchema, dataOf(AlertTemplateSchema), WRITE,
    'Change a custom template (built-ins are read-only)'),
  deleteTemplate: deleteById(`${T}/templates/:id`, DeletedSchema, WRITE, 'Delete a custom template that no rule uses'),
  listRules: endpoint({
    method: 'GET',
    path: `${T}/rules`,
    query: AlertRuleListQuerySchema,
    responses: { 200: flatPagedSchema(AlertRuleSchema) },
    auth: SCOPE,
    summary: 'List alert rules, newest first',
  }),
  createRule: createOne(`${T}/rules`, AlertRuleCreateSchema, dataOf(AlertRuleSchema), WRITE,
    "Create a rule from a template; omitted fields inherit the template's"),
  getRule: getById(`${T}/rules/:id`, dataOf(AlertRuleSchema), SCOPE, 'Get a rule'),
  updateRule: updateById(`${T}/rules/:id`, AlertRuleUpdateSchema, dataOf(AlertRuleSchema), WRITE, 'Change a rule'),
  deleteRule: deleteById(`${T}/rules/:id`, DeletedSchema, WRITE, 'Delete a rule (its alerts stay as history)'),
  toggleRule: endpoint({
    method: 'POST',
    path: `${T}/rules/:id/toggle`,
    params: IdParams,
    body: z.strictObject({ enabled: z.boolean().describe('true to enable, false to disable') }),
    responses: { 200: dataOf(AlertRuleSchema) },
    auth: WRITE,
    summary: 'Enable or disable a rule',
  }),
  listCorrelations: endpoint({
    method: 'GET',
    path: `${T}/correlations`,
    query: CorrelationListQuerySchema,
    responses: { 200: flatPagedSchema(CorrelationLinkSchema) },
    auth: SCOPE,
    summary: 'List correlation links, newest first',
  }),
  correlationGroups: endpoint({
    method: 'GET',
    path: `${T}/correlations/groups`,
    query: z.object({ orgId: UuidSchema.optional().describe('Only groups of this organization') }),
    responses: { 200: dataOf(z.array(CorrelationGroupSchema)) },
    auth: SCOPE,
    summary: "Groups of correlated alerts (the caller's organizations only)",
  }),
  analyzeCorrelations: endpoint({
    method: 'POST',
    path: `${T}/correlations/analyze`,
    body: CorrelationAnalyzeSchema,
    responses: {
      200: dataOf(
        z.object({
          requestedAlertIds: z.array(UuidSchema),
          windowMinutes: z.number().int(),
          links: z.array(CorrelationLinkSchema),
          groups: z.array(CorrelationGroupSchema),
          summary: z.string(),
        }),
      ),
    },
    auth: SCOPE,
    summary: 'Correlate alerts of a window: same device, or same rule across a site',
  }),
  getCorrelation: endpoint({
    method: 'GET',
    path: `${T}/correlations/:alertId`,
    params: z.object({ alertId: UuidSchema }),
    responses: {
      200: dataOf(
        z.object({
          alert: AlertSchema,
          correlations: z.array(CorrelationLinkSchema),
          relatedAlerts: z.array(AlertSchema),
          groups: z.array(CorrelationGroupSchema),
        }),
      ),
    },
    auth: SCOPE,
    summary: "An alert's correlation links, related alerts and groups",
  }),
} as const;

export const alerts = {
  list: listPaged('/alerts', AlertListQuerySchema, AlertSchema, { permission: 'alerts:read' },
    'List alerts, newest first'),
  summary: endpoint({
    method: 'GET',
    path: '/alerts/summary',
    query: z.object({ orgId: UuidSchema.optional().describe('Only this organization') }),
    responses: { 200: AlertSummarySchema },
    auth: SCOPE,
    summary: 'Counts by severity (active alerts) and by status',
  }),
  get: getById('/alerts/:id', AlertDetailSchema, SCOPE, 'Get an alert with its device, rule and notifications'),
  acknowledge: endpoint({
    method: 'POST',
    path: '/alerts/:id/acknowledge',
    params: IdParams,
    responses: { 200: AlertSchema },
    auth: { permission: 'alerts:acknowledge' },
    summary: 'Acknowledge an active alert',
  }),
  resolve: endpoint({
    method: 'POST',
    path: '/alerts/:id/resolve',
    params: IdParams,
    body: AlertResolveSchema,
    responses: { 200: AlertSchema },
    auth: { permission: 'alerts:write' },
    summary: "Resolve an alert; the rule's cooldown starts",
  }),
  suppress: endpoint({
    method: 'POST',
    path: '/alerts/:id/suppress',
    params: IdParams,
    body: AlertSuppressSchema,
    responses: { 200: AlertSchema },
    auth: { permission: 'alerts:write' },
    summary: 'Suppress an alert until a time, or indefinitely',
  }),
  bulk: endpoint({
    method: 'POST',
    path: '/alerts/bulk',
    body: AlertBulkSchema,
    responses: { 200: AlertBulkResultSchema },
    auth: { permission: 'alerts:write' },
    summary: 'Acknowledge, resolve or suppress up to 100 alerts; alerts in the wrong state are skipped',
  }),
  reportMetrics: endpoint({
    method: 'POST',
    path: '/agents/:id/metrics',
    params: IdParams,
    body: AgentMetricsSchema,
    responses: { 202: AgentMetricsResponseSchema },
    auth: { agent: true },
    bodyLimit: 2 * 1024 * 1024,
    summary: 'Report metric samples (agent token); alert rules are evaluated against them',
  }),
} as const;
