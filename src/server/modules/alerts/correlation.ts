import { and, desc, eq, gte, or, sql, type SQL } from 'drizzle-orm';
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core';
import type { z } from 'zod';
import type { CorrelationAnalyzeSchema, CorrelationListQuerySchema } from '../../../contract/alerts.js';
import type { Db } from '../../db/connection.js';
import { newId } from '../../db/ids.js';
import { alertCorrelations, alerts } from '../../db/schema/index.js';
import type { RequestContext } from '../../context.js';
import { inJson, preparedQueries, preparedShapes, rowQuery, shapeConditions, shapeOf } from '../../db/prepared.js';
import { preparedPages } from '../../lib/paging.js';
import { recordAudit } from '../audit/recorder.js';
import { alertOut, reachIn, type AlertOut, type AlertRow, type AlertsService } from './alerts-service.js';
import type { FlatPage } from './rules-service.js';
import { orgById } from './scope.js';
import { callerReach, readOrgIds, resolveWriteOrg, type CallerReach } from '../tenancy/access.js';

type LinkRow = typeof alertCorrelations.$inferSelect;
export type LinkOut = Omit<LinkRow, 'orgId'>;
const linkOut = ({ orgId: _o, ...rest }: LinkRow): LinkOut => rest;

/** A page of links, per shape `list:seen`: list has, as letters, o the organizations of the JSON array `orgIds`,
 * a links of `alertId`, m `minConfidence`; seen (a caller restricted to sites or device groups) is the reach
 * (alerts-service reachIn, its organizations as `reachOrgIds`) both alerts must be within, X for none. */
const linkPageOf = preparedPages(alertCorrelations, [desc(alertCorrelations.createdAt), desc(alertCorrelations.id)], (shape) => {
  const [list = '', seen] = shape.split(':');
  let both: SQL | undefined;
  if (seen === 'X') both = sql`0 = 1`;
  else if (seen !== undefined) {
    const scope = reachIn(seen, 'reachOrgIds') ?? sql`1 = 1`;
    const within = (column: SQLiteColumn) => sql`${column} IN (SELECT ${alerts.id} FROM ${alerts} WHERE ${scope})`;
    both = and(within(alertCorrelations.alertId), within(alertCorrelations.relatedAlertId));
  }
  const alertId = sql.placeholder('alertId');
  return and(
    ...shapeConditions(list, {
      o: () => inJson(alertCorrelations.orgId, 'orgIds'),
      a: () => or(eq(alertCorrelations.alertId, alertId), eq(alertCorrelations.relatedAlertId, alertId)),
      m: () => gte(alertCorrelations.confidence, sql.placeholder('minConfidence')),
    }),
    both,
  );
});

/** The links of one alert, strongest first, and (shape o: of the organizations of the JSON array `orgIds`, else
 * all) the newest links the groups are made of. */
const linksOfAlert = preparedQueries((db) =>
  rowQuery(db, alertCorrelations, or(eq(alertCorrelations.alertId, sql.placeholder('alertId')), eq(alertCorrelations.relatedAlertId, sql.placeholder('alertId'))), {
    orderBy: [desc(alertCorrelations.confidence)],
  }),
);
const groupLinksOf = preparedShapes((db, shape) =>
  db
    .select()
    .from(alertCorrelations)
    .where(and(...shapeConditions(shape, { o: () => inJson(alertCorrelations.orgId, 'orgIds') })))
    .orderBy(desc(alertCorrelations.createdAt))
    .limit(5_000)
    .prepare(),
);

/** An organization's (`orgId`) alerts triggered from `from` to `to`, at most 10,000, and a link stored (a link of
 * the same two alerts kept, at the higher confidence and the new reason; the insert names every column, as
 * drizzle's insert did), prepared once per database. */
const correlationQueries = preparedQueries((db) => {
  const value = (name: string) => sql`${sql.placeholder(name)}`;
  return {
    window: db
      .select()
      .from(alerts)
      .where(and(eq(alerts.orgId, sql.placeholder('orgId')), gte(alerts.triggeredAt, sql.placeholder('from')), sql`${alerts.triggeredAt} <= ${sql.placeholder('to')}`))
      .limit(10_000)
      .prepare(),
    link: db
      .insert(alertCorrelations)
      .values({
        id: value('id'),
        orgId: value('orgId'),
        alertId: value('alertId'),
        relatedAlertId: value('relatedAlertId'),
        reason: value('reason'),
        confidence: value('confidence'),
        createdAt: value('createdAt'),
      })
      .onConflictDoUpdate({
        target: [alertCorrelations.alertId, alertCorrelations.relatedAlertId],
        set: { confidence: sql`max(${alertCorrelations.confidence}, excluded.confidence)`, reason: sql`excluded.reason` },
      })
      .returning()
      .prepare(),
  };
});

/** The window the evaluator correlates new alerts over (02 §8 default). */
export const DEFAULT_WINDOW_MINUTES = 60;

export interface Pair {
  alertId: string;
  relatedAlertId: string;
  reason: 'same_device' | 'same_rule_site';
  confidence: number;
}

type Correlatable = Pick<AlertRow, 'id' | 'deviceId' | 'ruleId' | 'siteId' | 'triggeredAt'>;

/**
 * The method (pure; api-notes "Correlation"): two alerts of one organization triggered within the window are
 * linked, the earlier one as `alertId`, when they are on the same device (`same_device`: several symptoms of one
 * machine's problem; confidence 0.9 for simultaneous alerts falling to 0.5 at the window's edge) or from the same
 * rule on devices of the same site (`same_rule_site`: a site-wide cause such as the network or an update;
 * 0.8 falling to 0.5). `focus`, when given, keeps only pairs that involve one of those alerts.
 */
export function correlate(rows: Correlatable[], windowMinutes: number, focus?: ReadonlySet<string>): Pair[] {
  const windowMs = windowMinutes * 60_000;
  const sorted = [...rows].sort((a, b) => a.triggeredAt.localeCompare(b.triggeredAt) || a.id.localeCompare(b.id));
  const pairs: Pair[] = [];
  for (let i = 0; i < sorted.length; i++) {
    const a = sorted[i] as Correlatable;
    const ta = Date.parse(a.triggeredAt);
    for (let j = i + 1; j < sorted.length; j++) {
      const b = sorted[j] as Correlatable;
      const dt = Date.parse(b.triggeredAt) - ta;
      if (dt > windowMs) break;
      if (focus && !focus.has(a.id) && !focus.has(b.id)) continue;
      const closeness = 1 - dt / windowMs;
      if (a.deviceId !== null && a.deviceId === b.deviceId) {
        pairs.push({ alertId: a.id, relatedAlertId: b.id, reason: 'same_device', confidence: round2(0.5 + 0.4 * closeness) });
      } else if (a.ruleId !== null && a.ruleId === b.ruleId && a.siteId !== null && a.siteId === b.siteId) {
        pairs.push({ alertId: a.id, relatedAlertId: b.id, reason: 'same_rule_site', confidence: round2(0.5 + 0.3 * closeness) });
      }
    }
  }
  return pairs;
}

const round2 = (n: number) => Math.round(n * 100) / 100;

export interface GroupOut {
  id: string;
  title: string;
  summary: string;
  correlationScore: number;
  rootCauseHint: string;
  alerts: { id: string; ruleId: string | null; templateId: string | null; severity: AlertRow['severity']; message: string; deviceId: string | null; occurredAt: string }[];
  createdAt: string;
}

/** Connected components of the links (union-find), each over at least two visible alerts; id = the earliest alert. */
export function groupsOf(links: LinkRow[], byId: Map<string, AlertRow>): GroupOut[] {
  const parent = new Map<string, string>();
  const root = (x: string): string => {
    let r = x;
    for (let p = parent.get(r); p !== undefined && p !== r; p = parent.get(r)) r = p;
    parent.set(x, r);
    return r;
  };
  const usable = links.filter((l) => byId.has(l.alertId) && byId.has(l.relatedAlertId));
  for (const l of usable) {
    if (!parent.has(l.alertId)) parent.set(l.alertId, l.alertId);
    if (!parent.has(l.relatedAlertId)) parent.set(l.relatedAlertId, l.relatedAlertId);
    parent.set(root(l.relatedAlertId), root(l.alertId));
  }
  const members = new Map<string, AlertRow[]>();
  for (const id of parent.keys()) {
    const r = root(id);
    members.set(r, [...(members.get(r) ?? []), byId.get(id) as AlertRow]);
  }
  const groups: GroupOut[] = [];
  for (const [r, rows] of members) {
    if (rows.length < 2) continue;
    rows.sort((a, b) => a.triggeredAt.localeCompare(b.triggeredAt) || a.id.localeCompare(b.id));
    const first = rows[0] as AlertRow;
    const last = rows[rows.length - 1] as AlertRow;
    const mine = usable.filter((l) => root(l.alertId) === r);
    const devices = new Set(rows.map((a) => a.deviceId));
    const score = round2(mine.reduce((s, l) => s + l.confidence, 0) / mine.length);
    const hint =
      devices.size === 1
        ? `Several problems on ${first.deviceName ?? 'one device'} at once: start with the earliest alert, "${first.title}".`
        : `"${first.ruleName ?? first.title}" fired on ${devices.size} devices of one site: look for a shared cause (network, power, an update).`;
    groups.push({
      id: first.id,
      title: `Correlated Alert Group (${rows.length} alerts)`,
      summary: `${rows.length} alerts on ${devices.size} device(s) between ${first.triggeredAt} and ${last.triggeredAt}`,
      correlationScore: score,
      rootCauseHint: hint,
      alerts: rows.map((a) => ({ id: a.id, ruleId: a.ruleId, templateId: a.templateId, severity: a.severity, message: a.message, deviceId: a.deviceId, occurredAt: a.triggeredAt })),
      createdAt: mine.reduce((m, l) => (l.createdAt > m ? l.createdAt : m), ''),
    });
  }
  return groups.sort((a, b) => b.createdAt.localeCompare(a.createdAt) || a.id.localeCompare(b.id));
}

/** Correlation links and groups (02 §2.3, §4.1). */
export class CorrelationService {
  constructor(
    private readonly db: Db,
    private readonly alerts: AlertsService,
  ) {}

  /** Links the evaluator's new alerts with the alerts of the default window before them. */
  linkNew(raised: AlertRow[]): void {
    const byOrg = new Map<string, AlertRow[]>();
    for (const a of raised) byOrg.set(a.orgId, [...(byOrg.get(a.orgId) ?? []), a]);
    this.db.$client.transaction(() => {
      for (const [orgId, rows] of byOrg) {
        const latest = rows.reduce((m, a) => (a.triggeredAt > m ? a.triggeredAt : m), '');
        const candidates = this.windowAlerts(orgId, DEFAULT_WINDOW_MINUTES, Date.parse(latest));
        this.store(orgId, correlate(candidates, DEFAULT_WINDOW_MINUTES, new Set(rows.map((a) => a.id))));
      }
    })();
  }

  private windowAlerts(orgId: string, windowMinutes: number, end: number): AlertRow[] {
    const from = new Date(end - windowMinutes * 60_000).toISOString();
    return correlationQueries(this.db).window.all({ orgId, from, to: new Date(end).toISOString() });
  }

  private store(orgId: string, pairs: Pair[]): LinkRow[] {
    const out: LinkRow[] = [];
    for (const p of pairs) {
      const row = correlationQueries(this.db).link.get({ id: newId(), orgId, ...p, createdAt: new Date().toISOString() });
      if (row) out.push(row);
    }
    return out;
  }

  /** POST /correlations/analyze: correlates the window ending now (or the requested alerts against it). */
  analyze(ctx: RequestContext, body: z.infer<typeof CorrelationAnalyzeSchema>) {
    return this.db.$client.transaction(() => {
      const org = resolveWriteOrg(this.db, ctx.caller, body.orgId);
      const now = Date.now();
      const requested = body.alertIds ?? [];
      const visibleRequested = requested.length > 0 ? this.visibleAlerts(ctx, requested).filter((a) => a.orgId === org.id) : [];
      let candidates = this.windowAlerts(org.id, body.windowMinutes, now);
      for (const a of visibleRequested) {
        // A requested alert older than the window is analyzed against the window around it.
        candidates = [...candidates, ...this.windowAlerts(org.id, body.windowMinutes, Date.parse(a.triggeredAt) + body.windowMinutes * 60_000)];
      }
      // A restricted caller (sites, device groups) analyzes only the alerts it sees: no link (nor summary) tells of
      // others.
      const { siteIds, deviceGroupIds } = ctx.caller;
      const seen = siteIds === null && deviceGroupIds === null ? null : new Set(this.visibleAlerts(ctx, candidates.map((a) => a.id)).map((a) => a.id));
      const unique = [...new Map(candidates.filter((a) => seen === null || seen.has(a.id)).map((a) => [a.id, a])).values()];
      const focus = requested.length > 0 ? new Set(visibleRequested.map((a) => a.id)) : undefined;
      const links = focus && focus.size === 0 ? [] : this.store(org.id, correlate(unique, body.windowMinutes, focus));
      const involved = new Set(links.flatMap((l) => [l.alertId, l.relatedAlertId]));
      const groups = this.groupsFor(ctx, [org.id]).filter((g) => g.alerts.some((a) => involved.has(a.id)));
      recordAudit(this.db, ctx, {
        action: 'alert_correlation.analyze',
        resourceType: 'alert_correlation',
        orgId: org.id,
        partnerId: org.partnerId,
        details: { windowMinutes: body.windowMinutes, requestedAlertIds: requested, links: links.length, groups: groups.length },
      });
      const summary =
        unique.length === 0
          ? 'No alerts found for this organization.'
          : requested.length > 0
            ? 'Correlation analysis complete for requested alerts.'
            : 'Returning all correlation data.';
      return { data: { requestedAlertIds: requested, windowMinutes: body.windowMinutes, links: links.map(linkOut), groups, summary } };
    })();
  }

  list(ctx: RequestContext, query: z.infer<typeof CorrelationListQuerySchema>): FlatPage<LinkOut> {
    const orgIds = readOrgIds(this.db, ctx.caller, query.orgId);
    if (orgIds !== null && orgIds.length === 0) return { data: [], page: query.page, limit: query.limit, total: 0 };
    const seen = this.bothVisible(ctx);
    const list = shapeOf({ o: orgIds !== null, a: query.alertId, m: query.minConfidence !== undefined });
    const values = {
      orgIds: orgIds === null ? null : JSON.stringify(orgIds),
      alertId: query.alertId,
      minConfidence: query.minConfidence,
      reachOrgIds: seen?.values.orgIds ?? null,
      siteIds: seen?.values.siteIds ?? null,
      groupIds: seen?.values.groupIds ?? null,
    };
    const shape = seen === undefined ? list : `${list}:${seen === null ? 'X' : seen.shape}`;
    const { rows, total } = linkPageOf(this.db, shape, values, query);
    return { data: rows.map(linkOut), page: query.page, limit: query.limit, total };
  }

  groups(ctx: RequestContext, orgId: string | undefined) {
    const orgIds = readOrgIds(this.db, ctx.caller, orgId);
    return { data: this.groupsFor(ctx, orgIds) };
  }

  forAlert(ctx: RequestContext, alertId: string) {
    const alert = this.alerts.find(ctx, alertId);
    const links = linksOfAlert(this.db).all({ alertId });
    const otherIds = links.map((l) => (l.alertId === alertId ? l.relatedAlertId : l.alertId));
    const related = this.visibleAlerts(ctx, otherIds);
    const visible = new Set([alertId, ...related.map((a) => a.id)]);
    const shown = links.filter((l) => visible.has(l.alertId) && visible.has(l.relatedAlertId));
    const orgName = orgById(this.db, alert.orgId)?.name ?? null;
    const out = (a: AlertRow): AlertOut => alertOut(a, orgName);
    return {
      data: {
        alert: out(alert),
        correlations: shown.map(linkOut),
        relatedAlerts: related.map(out),
        groups: this.groupsFor(ctx, [alert.orgId]).filter((g) => g.alerts.some((a) => a.id === alertId)),
      },
    };
  }

  /** Groups over the links of these organizations, with only the alerts the caller sees; empty groups omitted. */
  private groupsFor(ctx: RequestContext, orgIds: readonly string[] | null): GroupOut[] {
    if (orgIds !== null && orgIds.length === 0) return [];
    const links = groupLinksOf(this.db, shapeOf({ o: orgIds !== null })).all({ orgIds: JSON.stringify(orgIds) });
    const ids = [...new Set(links.flatMap((l) => [l.alertId, l.relatedAlertId]))];
    const byId = new Map(this.visibleAlerts(ctx, ids).map((a) => [a.id, a]));
    return groupsOf(links, byId);
  }

  /** Those of these alerts the caller sees: its organizations, sites and device groups (01 §2.6), as the alerts
   * module decides for every read. */
  private visibleAlerts(ctx: RequestContext, ids: string[]): AlertRow[] {
    return this.alerts.visibleByIds(ctx.caller, [...new Set(ids)]);
  }

  /** For a caller restricted to sites or device groups: the reach both alerts of a link must be within (null:
   * none; the organizations are filtered apart, on the link's own column); undefined for other callers. */
  private bothVisible(ctx: RequestContext): CallerReach | null | undefined {
    const { siteIds, deviceGroupIds } = ctx.caller;
    if (siteIds === null && deviceGroupIds === null) return undefined;
    return callerReach(this.db, ctx.caller);
  }
}
