import { and, count, eq, inArray, sql } from 'drizzle-orm';
import type { z } from 'zod';
import type { LegacyRule, LegacyRuleCreateSchema, LegacyRuleListQuerySchema, LegacyRuleUpdateSchema, LegacyTargetsSchema } from '../../../contract/alert-rules-legacy.js';
import type { AlertRuleUpdateSchema } from '../../../contract/alerts.js';
import type { Db } from '../../db/connection.js';
import { preparedQueries } from '../../db/prepared.js';
import { alerts } from '../../db/schema/index.js';
import { systemContext, type RequestContext } from '../../context.js';
import { DomainError, badRequest, notFound } from '../../errors.js';
import type { Paged } from '../../lib/paging.js';
import type { DevicesService } from '../devices/service.js';
import { OPEN_STATUSES } from './alerts-service.js';
import { targeted, type AlertEvaluator } from './evaluator.js';
import type { AlertRulesService, RuleRow } from './rules-service.js';

type LegacyTargets = z.infer<typeof LegacyTargetsSchema>;
type SvcTargets = NonNullable<z.infer<typeof AlertRuleUpdateSchema>['targets']>;
/** A channel's organization, name and type by id (the notifications module's channels), for `notificationChannels`. */
export type ChannelLookup = (id: string) => { id: string; orgId: string; name: string; type: string } | null;

const SYSTEM = systemContext();

/** How many open alerts a rule (`ruleId`) has, prepared once per database (db/prepared.ts). */
const openAlertsOf = preparedQueries((db) =>
  db
    .select({ n: count() })
    .from(alerts)
    .where(and(eq(alerts.ruleId, sql.placeholder('ruleId')), inArray(alerts.status, OPEN_STATUSES)))
    .prepare(),
);

/** svc targets → the legacy `{type, ids}`. */
function legacyTargets(row: RuleRow): { type: LegacyRule['targetType']; ids: string[] } {
  const t = row.targets as { scope?: string; orgId?: string; siteIds?: string[]; deviceIds?: string[]; tags?: string[] };
  switch (t.scope) {
    case 'site':
      return { type: 'site', ids: t.siteIds ?? [] };
    case 'device':
      return { type: 'device', ids: t.deviceIds ?? [] };
    case 'tag':
      return { type: 'tag', ids: t.tags ?? [] };
    default:
      return { type: 'org', ids: [t.orgId ?? row.orgId] };
  }
}

/** The legacy `{type, ids}` → svc targets (api-notes: `all` and `org` are the organization; `group` is refused). */
function svcTargets(targets: LegacyTargets): SvcTargets {
  const ids = targets.ids ?? [];
  const need = (what: string) => {
    if (ids.length === 0) throw badRequest(`targets.ids: ${what} targets need at least one id`, 'INVALID_TARGETS');
    return ids;
  };
  switch (targets.type) {
    case 'site':
      return { scope: 'site', siteIds: need('site') };
    case 'device':
      return { scope: 'device', deviceIds: need('device') };
    case 'tag':
      return { scope: 'tag', tags: need('tag') };
    case 'group':
      throw badRequest('Device group targets are not supported', 'INVALID_TARGETS');
    default:
      return { scope: 'organization' };
  }
}

/** Re-throws the rule service's 404 with the legacy message. */
function legacyNotFound<T>(work: () => T): T {
  try {
    return work();
  } catch (err) {
    if (err instanceof DomainError && err.code === 'RULE_NOT_FOUND') throw notFound('Alert rule not found', 'RULE_NOT_FOUND');
    throw err;
  }
}

/** `/alerts/rules` (05-wire-notes "4.1 Core alerts", legacy): the rules of `AlertRulesService` in the older shape. */
export class LegacyAlertRules {
  constructor(
    private readonly db: Db,
    private readonly rules: AlertRulesService,
    private readonly evaluator: AlertEvaluator,
    private readonly devices: DevicesService,
    private readonly channelOf: ChannelLookup,
  ) {}

  private out(row: RuleRow): LegacyRule {
    const targets = legacyTargets(row);
    const channelIds = row.notificationChannelIds ?? [];
    return {
      id: row.id,
      orgId: row.orgId,
      name: row.name,
      description: row.description,
      enabled: row.enabled,
      isActive: row.enabled,
      severity: row.severity,
      targets,
      targetType: targets.type,
      targetId: targets.ids[0] ?? null,
      conditions: row.conditions,
      cooldownMinutes: row.cooldownMinutes,
      autoResolve: row.autoResolve,
      escalationPolicyId: row.escalationPolicyId,
      notificationChannelIds: channelIds,
      notificationChannels: channelIds.flatMap((id) => {
        // Only the rule's own organization's channels: a rule stored before ids were checked may name another's.
        const channel = this.channelOf(id);
        return channel && channel.orgId === row.orgId ? [{ id: channel.id, name: channel.name, type: channel.type }] : [];
      }),
      templateId: row.templateId,
      templateName: row.templateName,
      createdAt: row.createdAt,
      updatedAt: row.updatedAt,
    };
  }

  private byId(ctx: RequestContext, id: string): RuleRow {
    return legacyNotFound(() => this.rules.rule(ctx, id));
  }

  list(ctx: RequestContext, query: z.infer<typeof LegacyRuleListQuerySchema>): Paged<LegacyRule> {
    const page = this.rules.listRules(ctx, { page: query.page, limit: query.limit, orgId: query.orgId, enabled: query.enabled ?? query.isActive });
    const rows = page.data.map((r) => this.rules.ruleById(r.id)).filter((r): r is RuleRow => r !== undefined);
    return { data: rows.map((r) => this.out(r)), pagination: { page: page.page, limit: page.limit, total: page.total } };
  }

  get(ctx: RequestContext, id: string): LegacyRule {
    return this.out(this.byId(ctx, id));
  }

  /** Without a template, name, severity and conditions are required and a template is created from them (05). */
  create(ctx: RequestContext, body: z.infer<typeof LegacyRuleCreateSchema>): LegacyRule {
    return this.db.$client.transaction(() => {
      const targets = body.targets ? svcTargets(body.targets) : undefined;
      let templateId = body.templateId;
      let name = body.name;
      if (templateId === undefined) {
        if (!body.name) throw badRequest('Rule name is required', 'VALIDATION_ERROR');
        if (!body.severity) throw badRequest('Severity is required', 'VALIDATION_ERROR');
        if (!body.conditions) throw badRequest('Conditions are required', 'VALIDATION_ERROR');
        const template = this.rules.createTemplate(ctx, {
          name: body.name,
          description: body.description,
          severity: body.severity,
          conditions: body.conditions,
          targets: targets ?? { scope: 'organization' },
          defaultCooldownMinutes: body.cooldownMinutes,
          orgId: body.orgId,
        });
        templateId = template.data.id;
      } else {
        name ??= this.rules.getTemplate(ctx, templateId).data.name;
      }
      const created = this.rules.createRule(ctx, {
        ...this.changes(body),
        templateId,
        name: name ?? '',
        targets: targets ?? { scope: 'organization' },
        orgId: body.orgId,
      });
      return this.get(ctx, created.data.id);
    })();
  }

  update(ctx: RequestContext, id: string, body: z.infer<typeof LegacyRuleUpdateSchema>): LegacyRule {
    return this.db.$client.transaction(() => {
      this.byId(ctx, id);
      this.rules.updateRule(ctx, id, this.changes(body));
      return this.get(ctx, id);
    })();
  }

  /** The fields both shapes share, plus targets translated. */
  private changes(body: z.infer<typeof LegacyRuleUpdateSchema>): z.infer<typeof AlertRuleUpdateSchema> {
    const { targets, ...rest } = body;
    return { ...rest, ...(targets ? { targets: svcTargets(targets) } : {}) };
  }

  /** 05: a rule with open alerts cannot be deleted (409 with their count). */
  delete(ctx: RequestContext, id: string): { success: true } {
    return this.db.$client.transaction(() => {
      this.byId(ctx, id);
      const open = openAlertsOf(this.db).get({ ruleId: id })?.n ?? 0;
      if (open > 0) throw new DomainError('conflict', 'Cannot delete rule with active alerts', 'RULE_HAS_ACTIVE_ALERTS', { extra: { activeAlerts: open } });
      this.rules.deleteRule(ctx, id);
      return { success: true as const };
    })();
  }

  /** 05 `POST /alerts/rules/:id/test`: the rule against the device's current samples; creates nothing. */
  test(ctx: RequestContext, id: string, deviceId: string) {
    const rule = this.byId(ctx, id);
    let device;
    try {
      device = this.devices.get(SYSTEM, deviceId);
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
    }
    if (!device || device.orgId !== rule.orgId) throw notFound('Device not found or belongs to different organization', 'DEVICE_NOT_FOUND');
    const targetMatch = targeted(rule.targets, device);
    const check = this.evaluator.check(rule.conditions, device.id, Date.now());
    return {
      rule: { id: rule.id, name: rule.name, severity: rule.severity },
      device: { id: device.id, hostname: device.hostname, osType: device.osType },
      targetMatch,
      conditionResults: [{ condition: rule.conditions, result: check.result, reason: check.reason }],
      wouldTrigger: rule.enabled && targetMatch && check.result,
      testedAt: new Date().toISOString(),
    };
  }
}
