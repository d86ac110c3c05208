import { and, asc, count, desc, eq, isNull, or, sql } from 'drizzle-orm';
import type { z } from 'zod';
import type {
  AlertRule,
  AlertRuleCreateSchema,
  AlertRuleListQuerySchema,
  AlertRuleUpdateSchema,
  AlertTemplateCreateSchema,
  AlertTemplateListQuerySchema,
  AlertTemplateUpdateSchema,
} from '../../../contract/alerts.js';
import type { Db } from '../../db/connection.js';
import { deleteById, inJson, insertRow, preparedQueries, rowById, rowQuery, shapeConditions, shapeOf, updateRow } from '../../db/prepared.js';
import { alertRules, alertTemplates } from '../../db/schema/index.js';
import type { RequestContext } from '../../context.js';
import { badRequest, conflict, fieldError, forbidden, notFound } from '../../errors.js';
import { preparedPages, type PageQuery } from '../../lib/paging.js';
import { recordAudit } from '../audit/recorder.js';
import { channelIdsOfOrg } from '../notifications/channels.js';
import { policyOfOrg } from '../notifications/policies.js';
import { assertOrgWideWriter, assertTargetsWithinSites, isSiteOfOrg, readOrgIds, resolveWriteOrg } from '../tenancy/access.js';
import { messageTemplateFor, titleTemplateFor } from './builtin-templates.js';
import { reaches } from './scope.js';

export type TemplateRow = typeof alertTemplates.$inferSelect;
export type RuleRow = typeof alertRules.$inferSelect;

export interface FlatPage<T> {
  data: T[];
  page: number;
  limit: number;
  total: number;
}

const flat = <T>(data: T[], p: PageQuery, total: number): FlatPage<T> => ({ data, page: p.page, limit: p.limit, total });

function templateOut(row: TemplateRow) {
  const { createdBy: _c, ...rest } = row;
  return rest;
}

type TargetType = 'organization' | 'site' | 'device' | 'tag';

/** A rule as the wire shows it: targets summarized as targetType/targetId (05 wire notes), isActive = enabled.
 * Written field by field (see docs/api-notes.md, "Output objects"): `{ ...row, more }` costs ~1 µs a field here. */
export function ruleOut(row: RuleRow): AlertRule {
  const targets = row.targets as { scope?: TargetType; orgId?: string; siteIds?: string[]; deviceIds?: string[]; tags?: string[] };
  const targetType: TargetType = targets.scope ?? 'organization';
  const listed =
    targetType === 'site' ? targets.siteIds : targetType === 'device' ? targets.deviceIds : targetType === 'tag' ? targets.tags : [targets.orgId ?? row.orgId];
  return {
    id: row.id,
    orgId: row.orgId,
    templateId: row.templateId,
    templateName: row.templateName,
    name: row.name,
    description: row.description,
    severity: row.severity,
    enabled: row.enabled,
    isActive: row.enabled,
    targets: row.targets,
    conditions: row.conditions,
    cooldownMinutes: row.cooldownMinutes,
    autoResolve: row.autoResolve,
    targetType,
    targetId: listed?.[0] ?? null,
    notificationChannelIds: row.notificationChannelIds,
    escalationPolicyId: row.escalationPolicyId,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}
export type RuleOut = ReturnType<typeof ruleOut>;

/** A page of rules, per shape: which filters of the list the request has, as letters (o the organizations of
 * the JSON array `orgIds`, e enabled, v severity, t templateId, T targetType, V targetValue, q search `needle`,
 * lower case). */
const rulePageOf = preparedPages(alertRules, [desc(alertRules.createdAt), desc(alertRules.id)], (shape) => {
  const scope = sql`json_extract(${alertRules.targets}, '$.scope')`;
  const value = sql.placeholder('targetValue');
  const needle = sql.placeholder('needle');
  return and(
    ...shapeConditions(shape, {
      o: () => inJson(alertRules.orgId, 'orgIds'),
      e: () => sql`${alertRules.enabled} = ${sql.placeholder('enabled')}`,
      v: () => eq(alertRules.severity, sql.placeholder('severity')),
      t: () => eq(alertRules.templateId, sql.placeholder('templateId')),
      T: () => sql`${scope} = ${sql.placeholder('targetType')}`,
      V: () => sql`((${scope} = 'organization' AND coalesce(json_extract(${alertRules.targets}, '$.orgId'), ${alertRules.orgId}) = ${value})
            OR EXISTS (SELECT 1 FROM json_each(${alertRules.targets}, '$.siteIds') WHERE value = ${value})
            OR EXISTS (SELECT 1 FROM json_each(${alertRules.targets}, '$.deviceIds') WHERE value = ${value})
            OR EXISTS (SELECT 1 FROM json_each(${alertRules.targets}, '$.tags') WHERE value = ${value}))`,
      q: () =>
        sql`(instr(lower(coalesce(${alertRules.name}, '')), ${needle}) > 0 OR instr(lower(coalesce(${alertRules.description}, '')), ${needle}) > 0)`,
    }),
  );
});

/** A page of templates, per shape: which organizations (O the one `orgId`; n built-ins and those of the JSON array
 * `orgIds`; none: all) and which filters of the list the request has, as letters (B built-in only, C custom only,
 * v severity, q search `needle`, lower case). */
const templatePageOf = preparedPages(alertTemplates, [desc(alertTemplates.builtIn), asc(alertTemplates.name), asc(alertTemplates.id)], (shape) => {
  const needle = sql.placeholder('needle');
  return and(
    ...shapeConditions(shape, {
      O: () => eq(alertTemplates.orgId, sql.placeholder('orgId')),
      n: () => or(isNull(alertTemplates.orgId), inJson(alertTemplates.orgId, 'orgIds')),
      B: () => eq(alertTemplates.builtIn, true),
      C: () => eq(alertTemplates.builtIn, false),
      v: () => eq(alertTemplates.severity, sql.placeholder('severity')),
      q: () =>
        or(
          sql`instr(lower(coalesce(${alertTemplates.name}, '')), ${needle}) > 0`,
          sql`instr(lower(coalesce(${alertTemplates.description}, '')), ${needle}) > 0`,
        ),
    }),
  );
});

/** The rules of a template (`templateId`; a template in use cannot be deleted), and every enabled rule by id (the
 * evaluator's input), prepared once per database (db/prepared.ts). */
const ruleQueries = preparedQueries((db) => ({
  usingTemplate: db
    .select({ n: count() })
    .from(alertRules)
    .where(eq(alertRules.templateId, sql.placeholder('templateId')))
    .prepare(),
  enabled: rowQuery(db, alertRules, eq(alertRules.enabled, true), { orderBy: [asc(alertRules.id)] }),
}));

/** Templates and rules (02 §2.1, §2.2, §4.1, §7). */
export class AlertRulesService {
  constructor(private readonly db: Db) {}

  // ---- Templates ----

  listTemplates(ctx: RequestContext, query: z.infer<typeof AlertTemplateListQuerySchema>, builtInOnly = false): FlatPage<ReturnType<typeof templateOut>> {
    const orgIds = builtInOnly ? [] : readOrgIds(this.db, ctx.caller, query.orgId);
    const shape = shapeOf({
      O: query.orgId !== undefined,
      n: query.orgId === undefined && orgIds !== null,
      B: builtInOnly || query.builtIn === true,
      C: query.builtIn === false,
      v: query.severity,
      q: query.search,
    });
    const values = {
      orgId: query.orgId,
      orgIds: orgIds === null ? null : JSON.stringify(orgIds),
      severity: query.severity,
      needle: query.search?.toLowerCase(),
    };
    const { rows, total } = templatePageOf(this.db, shape, values, query);
    return flat(rows.map(templateOut), query, total);
  }

  /** A template the caller sees: built-in, or of an organization it reaches; else 404 `Template not found`. */
  template(ctx: RequestContext, id: string): TemplateRow {
    const row = rowById(this.db, alertTemplates, id);
    if (!row || (row.orgId !== null && !reaches(this.db, ctx.caller, row.orgId))) throw notFound('Template not found', 'TEMPLATE_NOT_FOUND');
    return row;
  }

  getTemplate(ctx: RequestContext, id: string) {
    return { data: templateOut(this.template(ctx, id)) };
  }

  createTemplate(ctx: RequestContext, body: z.infer<typeof AlertTemplateCreateSchema>) {
    return this.db.$client.transaction(() => {
      const org = resolveWriteOrg(this.db, ctx.caller, body.orgId);
      assertOrgWideWriter(ctx.caller);
      const row = insertRow(this.db, alertTemplates, {
        orgId: org.id,
        name: body.name,
        description: body.description ?? null,
        category: body.category ?? 'Custom',
        severity: body.severity,
        conditions: body.conditions ?? {},
        targets: body.targets ?? { scope: 'organization' },
        defaultCooldownMinutes: body.defaultCooldownMinutes ?? 15,
        titleTemplate: titleTemplateFor(body.name),
        messageTemplate: messageTemplateFor(body.name),
        builtIn: false,
        createdBy: ctx.caller.userId,
      });
      this.audit(ctx, 'alert_template.create', row, org, { severity: row.severity, category: row.category });
      return { data: templateOut(row) };
    })();
  }

  updateTemplate(ctx: RequestContext, id: string, body: z.infer<typeof AlertTemplateUpdateSchema>) {
    return this.db.$client.transaction(() => {
      const current = this.template(ctx, id);
      if (current.builtIn) throw forbidden('Built-in templates cannot be modified', 'BUILT_IN_TEMPLATE');
      assertOrgWideWriter(ctx.caller);
      const changes = definedOnly(body);
      if (Object.keys(changes).length === 0) throw badRequest('No updates provided', 'NO_UPDATES');
      const row = updateRow(this.db, alertTemplates, current, { ...changes, updatedAt: new Date().toISOString() });
      if (!row) throw notFound('Template not found', 'TEMPLATE_NOT_FOUND');
      this.audit(ctx, 'alert_template.update', row, this.orgOf(row.orgId), { changedFields: Object.keys(changes).sort() });
      return { data: templateOut(row) };
    })();
  }

  deleteTemplate(ctx: RequestContext, id: string) {
    return this.db.$client.transaction(() => {
      const current = this.template(ctx, id);
      if (current.builtIn) throw forbidden('Built-in templates cannot be deleted', 'BUILT_IN_TEMPLATE');
      assertOrgWideWriter(ctx.caller);
      const used = ruleQueries(this.db).usingTemplate.get({ templateId: id })?.n ?? 0;
      if (used > 0) throw conflict(`Template is used by ${used} alert rule(s)`, 'TEMPLATE_IN_USE');
      deleteById(this.db, alertTemplates, id);
      this.audit(ctx, 'alert_template.delete', current, this.orgOf(current.orgId), {});
      return { data: { id, deleted: true as const } };
    })();
  }

  // ---- Rules ----

  listRules(ctx: RequestContext, query: z.infer<typeof AlertRuleListQuerySchema>): FlatPage<RuleOut> {
    const orgIds = readOrgIds(this.db, ctx.caller, query.orgId);
    if (orgIds !== null && orgIds.length === 0) return flat([], query, 0);
    const shape = shapeOf({
      o: orgIds !== null,
      e: query.enabled !== undefined,
      v: query.severity,
      t: query.templateId,
      T: query.targetType,
      V: query.targetValue !== undefined,
      q: query.search,
    });
    const values = {
      orgIds: orgIds === null ? null : JSON.stringify(orgIds),
      enabled: query.enabled === undefined ? null : Number(query.enabled),
      severity: query.severity,
      templateId: query.templateId,
      targetType: query.targetType,
      targetValue: query.targetValue,
      needle: query.search?.toLowerCase(),
    };
    const { rows, total } = rulePageOf(this.db, shape, values, query);
    return flat(rows.map(ruleOut), query, total);
  }

  /** A rule the caller reaches; else 404 `Rule not found`. */
  rule(ctx: RequestContext, id: string): RuleRow {
    const row = rowById(this.db, alertRules, id);
    if (!row || !reaches(this.db, ctx.caller, row.orgId)) throw notFound('Rule not found', 'RULE_NOT_FOUND');
    return row;
  }

  getRule(ctx: RequestContext, id: string) {
    return { data: ruleOut(this.rule(ctx, id)) };
  }

  /** 02 §2.2: severity, targets, conditions and cooldown default to the template's. */
  createRule(ctx: RequestContext, body: z.infer<typeof AlertRuleCreateSchema>) {
    return this.db.$client.transaction(() => {
      const org = resolveWriteOrg(this.db, ctx.caller, body.orgId);
      const template = this.template(ctx, body.templateId);
      if (template.orgId !== null && template.orgId !== org.id) throw notFound('Template not found', 'TEMPLATE_NOT_FOUND');
      const targets = body.targets ?? template.targets;
      assertTargetsWithinSites(ctx.caller, targets);
      this.checkTargets(org.id, targets);
      this.checkNotifications(org.id, body);
      const row = insertRow(this.db, alertRules, {
        orgId: org.id,
        templateId: template.id,
        templateName: template.name,
        name: body.name,
        description: body.description ?? null,
        severity: body.severity ?? template.severity,
        enabled: body.enabled ?? true,
        targets,
        conditions: body.conditions ?? template.conditions,
        cooldownMinutes: body.cooldownMinutes ?? template.defaultCooldownMinutes,
        autoResolve: body.autoResolve ?? true,
        notificationChannelIds: body.notificationChannelIds ?? null,
        escalationPolicyId: body.escalationPolicyId ?? null,
        createdBy: ctx.caller.userId,
      });
      this.audit(ctx, 'alert_rule.create', row, org, { templateId: template.id, severity: row.severity });
      return { data: ruleOut(row) };
    })();
  }

  updateRule(ctx: RequestContext, id: string, body: z.infer<typeof AlertRuleUpdateSchema>) {
    return this.db.$client.transaction(() => {
      const current = this.rule(ctx, id);
      const changes = definedOnly(body);
      if (Object.keys(changes).length === 0) throw badRequest('No updates provided', 'NO_UPDATES');
      assertTargetsWithinSites(ctx.caller, current.targets);
      if (changes.targets) {
        assertTargetsWithinSites(ctx.caller, changes.targets);
        this.checkTargets(current.orgId, changes.targets);
      }
      this.checkNotifications(current.orgId, changes);
      const row = updateRow(this.db, alertRules, current, { ...changes, updatedAt: new Date().toISOString() });
      if (!row) throw notFound('Rule not found', 'RULE_NOT_FOUND');
      this.audit(ctx, 'alert_rule.update', row, this.orgOf(row.orgId), { changedFields: Object.keys(changes).sort() });
      return { data: ruleOut(row) };
    })();
  }

  toggleRule(ctx: RequestContext, id: string, enabled: boolean) {
    return this.db.$client.transaction(() => {
      const current = this.rule(ctx, id);
      assertTargetsWithinSites(ctx.caller, current.targets);
      const row = updateRow(this.db, alertRules, current, { enabled, updatedAt: new Date().toISOString() });
      if (!row) throw notFound('Rule not found', 'RULE_NOT_FOUND');
      this.audit(ctx, 'alert_rule.toggle', row, this.orgOf(row.orgId), { enabled, previous: current.enabled });
      return { data: ruleOut(row) };
    })();
  }

  deleteRule(ctx: RequestContext, id: string) {
    return this.db.$client.transaction(() => {
      const current = this.rule(ctx, id);
      assertTargetsWithinSites(ctx.caller, current.targets);
      deleteById(this.db, alertRules, id);
      this.audit(ctx, 'alert_rule.delete', current, this.orgOf(current.orgId), { templateId: current.templateId });
      return { data: { id, deleted: true as const } };
    })();
  }

  /** Every enabled rule (the evaluator's input). */
  enabledRules(): RuleRow[] {
    return ruleQueries(this.db).enabled.all({});
  }

  /** The rule by id whatever the caller (the alerts service's own reads); undefined once deleted. */
  ruleById(id: string): RuleRow | undefined {
    return rowById(this.db, alertRules, id);
  }

  templateById(id: string): TemplateRow | undefined {
    return rowById(this.db, alertTemplates, id);
  }

  /** Sites named by targets must be of the rule's organization, and an organization target must be it. */
  private checkTargets(orgId: string, targets: Record<string, unknown>): void {
    if (typeof targets.orgId === 'string' && targets.orgId !== orgId) throw badRequest('targets.orgId must be the organization of the rule', 'INVALID_TARGETS');
    const siteIds = Array.isArray(targets.siteIds) ? targets.siteIds : [];
    for (const siteId of siteIds) {
      if (typeof siteId !== 'string' || !isSiteOfOrg(this.db, siteId, orgId)) throw badRequest(`Site ${String(siteId)} is not a site of the organization`, 'INVALID_TARGETS');
    }
  }

  /** Override channels and the escalation policy must be of the rule's organization: another tenant's id is
   * refused (never stored, so no view of the rule can show that channel). */
  private checkNotifications(orgId: string, body: { notificationChannelIds?: string[] | null; escalationPolicyId?: string | null }): void {
    const channelIds = body.notificationChannelIds ?? [];
    const known = channelIdsOfOrg(this.db, orgId, channelIds);
    const unknown = [...new Set(channelIds.filter((id) => !known.has(id)))];
    if (unknown.length > 0) throw fieldError('notificationChannelIds', `Unknown notification channel(s) of this organization: ${unknown.join(', ')}`);
    const policyId = body.escalationPolicyId;
    if (policyId && !policyOfOrg(this.db, orgId, policyId)) throw fieldError('escalationPolicyId', `Unknown escalation policy of this organization: ${policyId}`);
  }

  /** Whose entry a change to a row of ORGID is: that organization's, whose partner the recorder looks up (two
   * columns, not the whole organization); a built-in template's (no organization) is a platform entry. */
  private orgOf(orgId: string | null): AuditOrg {
    return orgId === null ? { id: null, partnerId: null } : { id: orgId };
  }

  private audit(
    ctx: RequestContext,
    action: string,
    row: { id: string; name: string },
    org: AuditOrg,
    details: Record<string, unknown>,
  ): void {
    recordAudit(this.db, ctx, {
      action,
      resourceType: action.split('.')[0] ?? 'alert',
      resourceId: row.id,
      resourceName: row.name,
      orgId: org.id,
      partnerId: org.partnerId,
      details,
    });
  }
}

/** The organization an audit entry belongs to; without partnerId, the recorder looks it up. */
type AuditOrg = { id: string | null; partnerId?: string | null };

/** The keys a partial body sets (undefined = not given; null is a value). */
function definedOnly<T extends Record<string, unknown>>(body: T): Partial<T> {
  return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined)) as Partial<T>;
}
