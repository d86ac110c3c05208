import { and, count, desc, eq, inArray, sql, type SQL } from 'drizzle-orm';
import type { z } from 'zod';
import type { Alert, AlertBulkSchema, AlertListQuerySchema } from '../../../contract/alerts.js';
import type { Db } from '../../db/connection.js';
import { newId } from '../../db/ids.js';
import { inJson, preparedQueries, preparedShapes, rowQuery, shapeConditions, shapeOf, updateRow } from '../../db/prepared.js';
import { alerts } from '../../db/schema/index.js';
import type { AlertSeverity, AlertStatus } from '../../db/schema/alerts.js';
import { systemContext, type Caller, type RequestContext } from '../../context.js';
import { DomainError, badRequest, notFound } from '../../errors.js';
import { publishEvent } from '../../jobs/queue.js';
import { paged, preparedPages, type Paged } from '../../lib/paging.js';
import { containsPattern } from '../../lib/like.js';
import { deviceInGroups, type DevicesService } from '../devices/service.js';
import { ruleOut, type AlertRulesService, type RuleRow } from './rules-service.js';
import { orgById } from './scope.js';
import { callerReach, type CallerReach } from '../tenancy/access.js';

export type AlertRow = typeof alerts.$inferSelect;

/** One delivery of an alert's notification (05 wire notes "GET /alerts/:id … notifications"). */
export interface AlertNotificationRow {
  id: string;
  channelId: string | null;
  status: string;
  sentAt: string | null;
  errorMessage: string | null;
  createdAt: string;
  channelName: string | null;
  channelType: string | null;
}

/** What the notification pipeline (branch `notify`) tells about an alert's deliveries (ALERT-EVENTS.md). */
export interface AlertDeliveryLog {
  forAlert(alertId: string): AlertNotificationRow[];
}

/** The payload of every alert.* event (ALERT-EVENTS.md): what subscribers read (notifications/alert-event.ts). */
export interface AlertEventPayload extends AlertEventFields {
  [key: string]: unknown;
}

export interface AlertEventFields {
  alertId: string;
  orgId: string;
  orgName: string;
  ruleId: string | null;
  ruleName: string | null;
  templateId: string | null;
  deviceId: string | null;
  deviceName: string | null;
  severity: AlertSeverity;
  status: AlertStatus;
  title: string;
  message: string;
  context: Record<string, unknown>;
  triggeredAt: string;
  notificationChannelIds: string[] | null;
  escalationPolicyId: string | null;
  actorUserId: string | null;
}

const OPEN: AlertStatus[] = ['active', 'acknowledged', 'suppressed'];
const SYSTEM = systemContext();
/** 05 wire notes: the cooldown when neither the rule nor its template has one. */
const DEFAULT_COOLDOWN_MINUTES = 15;

/** An alert as the wire shows it: its device's name as deviceHostname, its organization's name; not its
 * site or cooldown. Field by field (docs/api-notes.md, "Output objects"). */
export function alertOut(row: AlertRow, orgName: string | null): Alert {
  return {
    id: row.id,
    orgId: row.orgId,
    ruleId: row.ruleId,
    ruleName: row.ruleName,
    templateId: row.templateId,
    deviceId: row.deviceId,
    status: row.status,
    severity: row.severity,
    title: row.title,
    message: row.message,
    context: row.context,
    triggeredAt: row.triggeredAt,
    acknowledgedAt: row.acknowledgedAt,
    acknowledgedBy: row.acknowledgedBy,
    resolvedAt: row.resolvedAt,
    resolvedBy: row.resolvedBy,
    resolutionNote: row.resolutionNote,
    suppressedUntil: row.suppressedUntil,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    deviceHostname: row.deviceName,
    orgName,
  };
}
export type AlertOut = ReturnType<typeof alertOut>;

export interface NewAlert {
  rule: RuleRow;
  device: { id: string; hostname: string; siteId: string | null };
  title: string;
  message: string;
  context: Record<string, unknown>;
  triggeredAt: string;
}

/** Of one rule: the devices that may not fire and the alerts auto-resolve may close (`rulesState`). */
export interface RuleState {
  blocked: Set<string>;
  open: Map<string, AlertRow>;
}

/** A caller's reach as a shape (db/prepared.ts): 'o' within the organizations of the JSON array `orgIds`, 's'
 * within the sites of `siteIds` (a site-restricted user), 'g' of devices in the groups of `groupIds` (a
 * device-group-restricted user, 01 §2.6: an alert of no device is outside it, as one of no site is outside 's').
 * orgIdsName renames the organizations' placeholder where a statement has another list of them. */
export function reachIn(shape: string, orgIdsName = 'orgIds', values?: CallerReach['values']): SQL | undefined {
  return and(
    ...shapeConditions(shape, {
      o: () => inJson(alerts.orgId, orgIdsName, values),
      s: () => inJson(alerts.siteId, 'siteIds', values),
      g: () => deviceInGroups(alerts.deviceId, values),
    }),
  );
}

/** A page of alerts, per shape: the reach (reachIn) and which filters of the list the request has, as letters
 * (S statuses, v severity, d deviceId, r ruleId, a startDate, b endDate, u updatedSince). */
const alertPageOf = preparedPages(alerts, [desc(alerts.triggeredAt), desc(alerts.id)], (shape) =>
  and(
    reachIn(shape),
    ...shapeConditions(shape, {
      S: () => inJson(alerts.status, 'statuses'),
      v: () => eq(alerts.severity, sql.placeholder('severity')),
      d: () => eq(alerts.deviceId, sql.placeholder('deviceId')),
      r: () => eq(alerts.ruleId, sql.placeholder('ruleId')),
      a: () => sql`${alerts.triggeredAt} >= ${sql.placeholder('startDate')}`,
      b: () => sql`${alerts.triggeredAt} <= ${sql.placeholder('endDate')}`,
      u: () => sql`${alerts.updatedAt} >= ${sql.placeholder('updatedSince')}`,
    }),
  ),
);

/** The alerts of the JSON array `ids` whatever the caller, and the evaluator's statements, prepared once per database
 * (db/prepared.ts): a new alert unless one is open for its rule and device (the insert names every column, as
 * drizzle's insert did, `context` as its JSON text); an open alert resolved by nobody (`now`, `note`,
 * `cooldownUntil`); the suppressions ended `at`; the open or cooling-down alerts of the rules of the JSON array
 * `ruleIds` at `at`, on every device or (`stateOfDevices`) those of the JSON array `deviceIds`. */
const alertStatements = preparedQueries((db) => {
  const value = (name: string) => sql`${sql.placeholder(name)}`;
  const state = (devices: boolean) =>
    rowQuery(
      db,
      alerts,
      and(
        inJson(alerts.ruleId, 'ruleIds'),
        devices ? inJson(alerts.deviceId, 'deviceIds') : undefined,
        sql`(${alerts.status} IN ('active', 'acknowledged', 'suppressed') OR ${alerts.cooldownUntil} > ${sql.placeholder('at')})`,
      ),
    );
  return {
    byIds: rowQuery(db, alerts, inJson(alerts.id, 'ids')),
    trigger: db
      .insert(alerts)
      .values({
        id: value('id'),
        orgId: value('orgId'),
        siteId: value('siteId'),
        ruleId: value('ruleId'),
        ruleName: value('ruleName'),
        templateId: value('templateId'),
        deviceId: value('deviceId'),
        deviceName: value('deviceName'),
        status: 'active',
        severity: value('severity'),
        title: value('title'),
        message: value('message'),
        context: value('context'),
        triggeredAt: value('triggeredAt'),
        acknowledgedAt: null,
        acknowledgedBy: null,
        resolvedAt: null,
        resolvedBy: null,
        resolutionNote: null,
        suppressedUntil: null,
        cooldownUntil: null,
        createdAt: value('createdAt'),
        updatedAt: value('updatedAt'),
      })
      .onConflictDoNothing()
      .returning()
      .prepare(),
    autoResolve: db
      .update(alerts)
      .set({ status: 'resolved', resolvedAt: value('now'), resolvedBy: null, resolutionNote: value('note'), cooldownUntil: value('cooldownUntil'), suppressedUntil: null, updatedAt: value('now') })
      .where(and(eq(alerts.id, sql.placeholder('id')), inArray(alerts.status, ['active', 'acknowledged'])))
      .returning()
      .prepare(),
    endSuppressions: db
      .update(alerts)
      .set({ status: 'active', suppressedUntil: null, updatedAt: value('at') })
      .where(and(eq(alerts.status, 'suppressed'), sql`${alerts.suppressedUntil} IS NOT NULL AND ${alerts.suppressedUntil} <= ${sql.placeholder('at')}`))
      .prepare(),
    state: state(false),
    stateOfDevices: state(true),
  };
});

/** One alert within a reach, the alerts of the JSON array `ids` within one, and the counts by status and severity
 * within one, per reach shape (reachIn). */
const alertReadsOf = preparedShapes((db, shape) => ({
  byId: db
    .select()
    .from(alerts)
    .where(and(eq(alerts.id, sql.placeholder('id')), reachIn(shape)))
    .prepare(),
  byIds: rowQuery(db, alerts, and(inJson(alerts.id, 'ids'), reachIn(shape))),
  idsIn: db
    .select({ id: alerts.id })
    .from(alerts)
    .where(and(inJson(alerts.id, 'ids'), reachIn(shape)))
    .prepare(),
  summary: db
    .select({ status: alerts.status, severity: alerts.severity, n: count() })
    .from(alerts)
    .where(reachIn(shape))
    .groupBy(alerts.status, alerts.severity)
    .prepare(),
}));

const isoOf = (at: string | undefined) => (at ? new Date(at).toISOString() : null);

/** GET /search's alerts, per reach shape: title or message LIKE `pattern`, newest first, `limit` of them. */
const alertSearchOf = preparedShapes((db, shape) =>
  db
    .select({ id: alerts.id, title: alerts.title, message: alerts.message, severity: alerts.severity })
    .from(alerts)
    .where(and(reachIn(shape), sql`(${alerts.title} LIKE ${sql.placeholder('pattern')} ESCAPE '\\' OR ${alerts.message} LIKE ${sql.placeholder('pattern')} ESCAPE '\\')`))
    .orderBy(desc(alerts.triggeredAt))
    .limit(sql.placeholder('limit'))
    .prepare(),
);

/** Alerts the caller sees whose title or message contains `q` (case-insensitive), newest first; for GET /search. */
export function searchAlerts(db: Db, caller: Caller, q: string, limit: number) {
  const reach = callerReach(db, caller);
  return reach === null ? [] : alertSearchOf(db, reach.shape).all({ ...reach.values, pattern: containsPattern(q), limit });
}

/** The number of alerts by status and severity within a reach. */
export function alertCountsIn(db: Db, reach: CallerReach): { status: AlertStatus; severity: AlertSeverity; n: number }[] {
  return alertReadsOf(db, reach.shape).summary.all(reach.values);
}

/** Alerts and their state machine (02 §3, 05 wire notes "4.1 Core alerts"); events per ALERT-EVENTS.md. */
export class AlertsService {
  constructor(
    private readonly db: Db,
    private readonly rules: AlertRulesService,
    private readonly devices: DevicesService,
    private readonly deliveries: AlertDeliveryLog,
  ) {}

  /** Those of these alerts the caller sees (correlation: links and groups of alerts out of reach are not shown).
   * The ids go in as one JSON array: an alert storm's window may hold more than SQLite's bound parameters. */
  visibleByIds(caller: Caller, ids: string[]): AlertRow[] {
    const scope = callerReach(this.db, caller);
    if (ids.length === 0 || scope === null) return [];
    return alertReadsOf(this.db, scope.shape).byIds.all({ ...scope.values, ids: JSON.stringify(ids) });
  }

  private withOrgNames(rows: AlertRow[]): AlertOut[] {
    const names = new Map<string, string | null>();
    return rows.map((row) => {
      if (!names.has(row.orgId)) names.set(row.orgId, orgById(this.db, row.orgId)?.name ?? null);
      return alertOut(row, names.get(row.orgId) ?? null);
    });
  }

  list(ctx: RequestContext, query: z.infer<typeof AlertListQuerySchema>): Paged<AlertOut> {
    const scope = callerReach(this.db, ctx.caller, query.orgId);
    if (scope === null) return paged([], query, 0);
    const shape =
      scope.shape +
      shapeOf({
        S: query.status,
        v: query.severity,
        d: query.deviceId,
        r: query.ruleId,
        a: query.startDate,
        b: query.endDate,
        u: query.updatedSince,
      });
    const values = {
      ...scope.values,
      statuses: query.status ? JSON.stringify(query.status) : null,
      severity: query.severity,
      deviceId: query.deviceId,
      ruleId: query.ruleId,
      startDate: isoOf(query.startDate),
      endDate: isoOf(query.endDate),
      updatedSince: isoOf(query.updatedSince),
    };
    const { rows, total } = alertPageOf(this.db, shape, values, query);
    return paged(this.withOrgNames(rows), query, total);
  }

  summary(ctx: RequestContext, orgId: string | undefined) {
    const bySeverity = { critical: 0, high: 0, medium: 0, low: 0, info: 0 };
    const byStatus = { active: 0, acknowledged: 0, resolved: 0, suppressed: 0 };
    const scope = callerReach(this.db, ctx.caller, orgId);
    if (scope === null) return { bySeverity, byStatus, total: 0 };
    const rows = alertReadsOf(this.db, scope.shape).summary.all(scope.values);
    let total = 0;
    for (const { status, severity, n } of rows) {
      byStatus[status] += n;
      if (status === 'active') bySeverity[severity] += n;
      total += n;
    }
    return { bySeverity, byStatus, total };
  }

  /** An alert the caller sees: absent, out of reach or outside a site restriction all answer 404. */
  find(ctx: RequestContext, id: string): AlertRow {
    const scope = callerReach(this.db, ctx.caller);
    const row = scope === null ? undefined : alertReadsOf(this.db, scope.shape).byId.get({ ...scope.values, id });
    if (!row) throw notFound('Alert not found', 'ALERT_NOT_FOUND');
    return row;
  }

  get(ctx: RequestContext, id: string) {
    const row = this.find(ctx, id);
    const [out] = this.withOrgNames([row]);
    let device = null;
    if (row.deviceId) {
      try {
        const d = this.devices.findVisible(SYSTEM, row.deviceId);
        device = { id: d.id, hostname: d.hostname, osType: d.osType, status: d.status };
      } catch (err) {
        if (!(err instanceof DomainError)) throw err;
      }
    }
    const rule = row.ruleId ? this.rules.ruleById(row.ruleId) : undefined;
    const r = rule ? ruleOut(rule) : undefined;
    return {
      ...(out as AlertOut),
      device,
      rule: r ? { id: r.id, name: r.name, templateId: r.templateId, targetType: r.targetType, targetId: r.targetId, isActive: r.isActive } : null,
      notifications: this.deliveries.forAlert(row.id),
    };
  }

  acknowledge(ctx: RequestContext, id: string) {
    return this.transition(ctx, id, (row, now) => {
      if (row.status !== 'active') throw badRequest(`Cannot acknowledge alert with status: ${row.status}`, 'INVALID_ALERT_STATUS');
      return { event: 'alert.acknowledged', set: { status: 'acknowledged', acknowledgedAt: now, acknowledgedBy: ctx.caller.userId } };
    });
  }

  /** Resolving starts the cooldown: the rule's, else its template's, else 15 minutes (05 wire notes). A suppressed
   * alert can be resolved too (api-notes): otherwise an indefinitely suppressed alert would block its rule forever. */
  resolve(ctx: RequestContext, id: string, note: string | undefined) {
    return this.transition(ctx, id, (row, now) => {
      if (row.status === 'resolved') throw badRequest('Alert is already resolved', 'ALERT_ALREADY_RESOLVED');
      const cooldownUntil = this.cooldownEnd(row, now);
      return { event: 'alert.resolved', set: { status: 'resolved', resolvedAt: now, resolvedBy: ctx.caller.userId, resolutionNote: note ?? null, cooldownUntil, suppressedUntil: null } };
    });
  }

  suppress(ctx: RequestContext, id: string, until: string | undefined) {
    const untilIso = parseFutureTime(until);
    return this.transition(ctx, id, (row) => {
      if (row.status === 'resolved') throw badRequest('Cannot suppress a resolved alert', 'ALERT_ALREADY_RESOLVED');
      return { event: 'alert.suppressed', set: { status: 'suppressed', suppressedUntil: untilIso } };
    });
  }

  bulk(ctx: RequestContext, body: z.infer<typeof AlertBulkSchema>) {
    const scope = callerReach(this.db, ctx.caller);
    const ids = scope === null ? [] : alertReadsOf(this.db, scope.shape).idsIn.all({ ...scope.values, ids: JSON.stringify(body.alertIds) });
    if (ids.length === 0) throw notFound('No accessible alerts found', 'ALERT_NOT_FOUND');
    if (body.action === 'suppress') parseFutureTime(body.until);
    let updated = 0;
    let skipped = 0;
    let failed = 0;
    for (const { id } of ids) {
      try {
        if (body.action === 'acknowledge') this.acknowledge(ctx, id);
        else if (body.action === 'resolve') this.resolve(ctx, id, body.note);
        else this.suppress(ctx, id, body.until);
        updated += 1;
      } catch (err) {
        if (err instanceof DomainError && err.kind === 'invalid') skipped += 1;
        else failed += 1;
      }
    }
    return { updated, skipped, failed };
  }

  /** When the cooldown of an alert resolved at `resolvedAt` ends. */
  private cooldownEnd(row: AlertRow, resolvedAt: string): string {
    const rule = row.ruleId ? this.rules.ruleById(row.ruleId) : undefined;
    const template = !rule && row.templateId ? this.rules.templateById(row.templateId) : undefined;
    const minutes = rule?.cooldownMinutes ?? template?.defaultCooldownMinutes ?? DEFAULT_COOLDOWN_MINUTES;
    return new Date(Date.parse(resolvedAt) + minutes * 60_000).toISOString();
  }

  private transition(
    ctx: RequestContext,
    id: string,
    decide: (row: AlertRow, now: string) => { event: string; set: Partial<AlertRow> },
  ): AlertOut {
    return this.db.$client.transaction(() => {
      const row = this.find(ctx, id);
      const now = new Date().toISOString();
      const { event, set } = decide(row, now);
      const updated = updateRow(this.db, alerts, row, { ...set, updatedAt: now });
      if (!updated) throw notFound('Alert not found', 'ALERT_NOT_FOUND');
      this.publish(event, updated, ctx.caller.userId);
      const [out] = this.withOrgNames([updated]);
      return out as AlertOut;
    })();
  }

  /** A new alert from the evaluator; undefined when one is already open for the rule and device. Call inside a
   * transaction: the alert and its `alert.triggered` event commit together. */
  trigger(input: NewAlert): AlertRow | undefined {
    const { rule, device } = input;
    const row = alertStatements(this.db).trigger.get({
      id: newId(),
      orgId: rule.orgId,
      siteId: device.siteId,
      ruleId: rule.id,
      ruleName: rule.name,
      templateId: rule.templateId,
      deviceId: device.id,
      deviceName: device.hostname,
      severity: rule.severity,
      title: input.title.slice(0, 500),
      message: input.message,
      context: JSON.stringify(input.context),
      triggeredAt: input.triggeredAt,
      createdAt: new Date().toISOString(),
      updatedAt: new Date().toISOString(),
    });
    if (row) this.publish('alert.triggered', row, null);
    return row;
  }

  /** Rules' devices at `at`, by rule id (one query for every rule of an evaluation; only `deviceIds` when given):
   * `blocked` may not fire (an open alert, or a cooldown running), `open` are the alerts auto-resolve may close
   * (active or acknowledged; a suppressed alert was silenced by a person and stays). A rule without any is absent. */
  rulesState(ruleIds: readonly string[], at: string, deviceIds?: readonly string[]): Map<string, RuleState> {
    const states = new Map<string, RuleState>();
    if (ruleIds.length === 0) return states;
    const queries = alertStatements(this.db);
    const rows = deviceIds
      ? queries.stateOfDevices.all({ ruleIds: JSON.stringify(ruleIds), deviceIds: JSON.stringify(deviceIds), at })
      : queries.state.all({ ruleIds: JSON.stringify(ruleIds), at });
    for (const row of rows) {
      if (row.deviceId === null || row.ruleId === null) continue;
      let state = states.get(row.ruleId);
      if (!state) states.set(row.ruleId, (state = { blocked: new Set(), open: new Map() }));
      state.blocked.add(row.deviceId);
      if (row.status === 'active' || row.status === 'acknowledged') state.open.set(row.deviceId, row);
    }
    return states;
  }

  /** Auto-resolve (api-notes): the evaluator found the condition no longer holds. Like a person's resolve (the
   * cooldown starts, `alert.resolved` cancels the escalations) but by nobody; a no-op when the alert changed
   * state meanwhile. Call inside the evaluator's transaction. */
  autoResolve(row: AlertRow, note: string): AlertRow | undefined {
    const now = new Date().toISOString();
    const updated = alertStatements(this.db).autoResolve.get({ id: row.id, now, note, cooldownUntil: this.cooldownEnd(row, now) });
    if (updated) this.publish('alert.resolved', updated, null);
    return updated;
  }

  /** Suppressions whose time has passed: the alert is active again (api-notes). */
  endExpiredSuppressions(now: Date): number {
    return alertStatements(this.db).endSuppressions.run({ at: now.toISOString() }).changes;
  }

  /** Rows by id whatever the caller (the notifier's look at an alert's status). */
  byIds(ids: string[]): AlertRow[] {
    if (ids.length === 0) return [];
    return alertStatements(this.db).byIds.all({ ids: JSON.stringify(ids) });
  }

  private publish(type: string, row: AlertRow, actorUserId: string | null): void {
    const rule = row.ruleId ? this.rules.ruleById(row.ruleId) : undefined;
    const payload: AlertEventPayload = {
      alertId: row.id,
      orgId: row.orgId,
      orgName: orgById(this.db, row.orgId)?.name ?? '',
      ruleId: row.ruleId,
      ruleName: row.ruleName,
      templateId: row.templateId,
      deviceId: row.deviceId,
      deviceName: row.deviceName,
      severity: row.severity,
      status: row.status,
      title: row.title,
      message: row.message,
      context: row.context,
      triggeredAt: row.triggeredAt,
      notificationChannelIds: rule?.notificationChannelIds ?? null,
      escalationPolicyId: rule?.escalationPolicyId ?? null,
      actorUserId,
    };
    publishEvent(this.db, type, payload, row.orgId);
  }
}

export const OPEN_STATUSES = OPEN;

/** `until` of a suppression: omitted = indefinitely (null); otherwise a time in the future. */
function parseFutureTime(until: string | undefined): string | null {
  if (until === undefined) return null;
  const at = Date.parse(until);
  if (!Number.isFinite(at) || at <= Date.now()) throw badRequest('Suppression time must be in the future', 'INVALID_SUPPRESSION_TIME');
  return new Date(at).toISOString();
}
