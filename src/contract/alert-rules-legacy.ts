import { z } from 'zod';
import { createOne, deleteById, getById, listPaged } from './builders.js';
import { AlertConditionsSchema, AlertSeveritySchema } from './alerts.js';
import { IdParamsSchema as IdParams, JsonObjectSchema, PageQuerySchema, QueryBooleanSchema, SuccessSchema, TimestampSchema, UuidSchema, timestampFields } from './common.js';
import { endpoint } from './endpoint.js';

/** The legacy `/alerts/rules` routes of 05-wire-notes "4.1 Core alerts": the same rules as `/alert-templates/rules`,
 * in the deployed service's older shape (targets `{type, ids}`, PUT, `{success:true}`). */
const R = '/alerts/rules';
const READ = { permission: 'alerts:read' } as const;
const WRITE = { permission: 'alerts:write', mfa: true } as const;

export const LegacyTargetTypeSchema = z.enum(['all', 'org', 'site', 'group', 'device', 'tag']);
export const LegacyTargetsSchema = z.strictObject({
  type: LegacyTargetTypeSchema.describe('all, org, site, device (group is not supported; tag is an svc extension)'),
  ids: z.array(z.string().min(1).max(100)).max(10_000).optional().describe('Site, device or tag ids (by type)'),
});

export const LegacyRuleSchema = z.object({
  id: UuidSchema,
  orgId: UuidSchema,
  name: z.string(),
  description: z.string().nullable(),
  enabled: z.boolean(),
  isActive: z.boolean(),
  severity: AlertSeveritySchema,
  targets: z.object({ type: LegacyTargetTypeSchema, ids: z.array(z.string()) }),
  targetType: LegacyTargetTypeSchema,
  targetId: z.string().nullable(),
  conditions: JsonObjectSchema,
  cooldownMinutes: z.number().int(),
  autoResolve: z.boolean(),
  escalationPolicyId: UuidSchema.nullable(),
  notificationChannelIds: z.array(UuidSchema),
  notificationChannels: z.array(z.object({ id: UuidSchema, name: z.string(), type: z.string() })),
  templateId: UuidSchema,
  templateName: z.string(),
  ...timestampFields,
});
export type LegacyRule = z.infer<typeof LegacyRuleSchema>;

const Fields = {
  name: z.string().trim().min(1).max(200).optional().describe('Name, 1-200 characters (required without a template)'),
  description: z.string().max(2000).nullable().optional().describe('Description'),
  severity: AlertSeveritySchema.optional().describe('Severity (required without a template)'),
  targets: LegacyTargetsSchema.optional().describe('Targets {type, ids} (JSON; default all)'),
  conditions: AlertConditionsSchema.optional().describe('Conditions (JSON object; required without a template)'),
  notificationChannelIds: z.array(UuidSchema).max(100).optional().describe('Override channels'),
  cooldownMinutes: z.number().int().min(1).max(1440).optional().describe('Cooldown after resolve, 1-1440 minutes'),
  autoResolve: z.boolean().optional().describe('Resolve when the condition no longer holds (default true)'),
  enabled: z.boolean().optional().describe('Whether the rule is evaluated (default true)'),
  escalationPolicyId: UuidSchema.nullable().optional().describe('Escalation policy'),
};
export const LegacyRuleCreateSchema = z.strictObject({
  templateId: UuidSchema.optional().describe('A template; without one, a template is created from the rule'),
  ...Fields,
  orgId: UuidSchema.optional().describe('Organization (partner and system callers)'),
});
export const LegacyRuleUpdateSchema = z.strictObject(Fields);

export const LegacyRuleListQuerySchema = PageQuerySchema.extend({
  orgId: UuidSchema.optional().describe('Only rules of this organization'),
  enabled: QueryBooleanSchema.optional().describe('true or false'),
  isActive: QueryBooleanSchema.optional().describe('Same as enabled'),
});

export const LegacyRuleTestResultSchema = z.object({
  rule: z.object({ id: UuidSchema, name: z.string(), severity: AlertSeveritySchema }),
  device: z.object({ id: UuidSchema, hostname: z.string(), osType: z.string() }),
  targetMatch: z.boolean(),
  conditionResults: z.array(z.object({ condition: JsonObjectSchema, result: z.boolean(), reason: z.string() })),
  wouldTrigger: z.boolean(),
  testedAt: TimestampSchema,
});

export const alertRulesLegacy = {
  list: listPaged(R, LegacyRuleListQuerySchema, LegacyRuleSchema, READ,
    'List alert rules, newest first (legacy shape)'),
  get: getById(`${R}/:id`, LegacyRuleSchema, READ, 'Get an alert rule (legacy shape)'),
  create: createOne(R, LegacyRuleCreateSchema, LegacyRuleSchema, WRITE,
    'Create an alert rule (legacy shape; without templateId a template is created from it)'),
  update: endpoint({
    method: 'PUT',
    path: `${R}/:id`,
    params: IdParams,
    body: LegacyRuleUpdateSchema,
    responses: { 200: LegacyRuleSchema },
    auth: WRITE,
    summary: 'Change an alert rule (partial; legacy shape)',
  }),
  delete: deleteById(`${R}/:id`, SuccessSchema, WRITE,
    'Delete an alert rule without active alerts'),
  test: endpoint({
    method: 'POST',
    path: `${R}/:id/test`,
    params: IdParams,
    body: z.strictObject({ deviceId: UuidSchema.describe('The device to test the rule against') }),
    responses: { 200: LegacyRuleTestResultSchema },
    auth: READ,
    summary: "Test a rule against a device's current samples (creates nothing)",
  }),
};
