import { and, count, desc, eq, sql } from 'drizzle-orm';
import type { Caller } from '../../context.js';
import type { Db } from '../../db/connection.js';
import { inJson, preparedShapes, shapeConditions, shapeOf } from '../../db/prepared.js';
import { alerts } from '../../db/schema/index.js';
import type { AlertSeverity, AlertStatus } from '../../db/schema/alerts.js';
import { callerReach } from '../tenancy/access.js';
import { alertCountsIn, reachIn } from './alerts-service.js';

/** What the mobile inbox (02 §4.6) asks of the alerts: a filter, a page or a keyset position. */
export interface InboxFilter {
  orgId?: string | undefined;
  statuses: AlertStatus[];
  severity?: AlertSeverity | undefined;
}

/** What the inbox shows of an alert (mobile/inbox.ts): only these columns are read. */
const inboxColumns = {
  id: alerts.id,
  orgId: alerts.orgId,
  deviceId: alerts.deviceId,
  status: alerts.status,
  severity: alerts.severity,
  title: alerts.title,
  message: alerts.message,
  triggeredAt: alerts.triggeredAt,
  acknowledgedAt: alerts.acknowledgedAt,
  resolvedAt: alerts.resolvedAt,
};

/** The inbox's page (newest first by (triggeredAt, id), `limit` and `offset`) and its total, per shape: the reach
 * (alerts-service reachIn) and, as letters, S the statuses of the JSON array `statuses`, v `severity`, k after the
 * keyset position `ts`, `afterId` (the page only). */
const inboxQueries = preparedShapes((db, shape) => {
  const where = and(
    reachIn(shape),
    ...shapeConditions(shape, {
      S: () => inJson(alerts.status, 'statuses'),
      v: () => eq(alerts.severity, sql.placeholder('severity')),
    }),
  );
  const keyset = sql`(${alerts.triggeredAt} < ${sql.placeholder('ts')} OR (${alerts.triggeredAt} = ${sql.placeholder('ts')} AND ${alerts.id} < ${sql.placeholder('afterId')}))`;
  return {
    page: db
      .select(inboxColumns)
      .from(alerts)
      .where(and(where, ...shapeConditions(shape, { k: () => keyset })))
      .orderBy(desc(alerts.triggeredAt), desc(alerts.id))
      .limit(sql.placeholder('limit'))
      .offset(sql.placeholder('offset'))
      .prepare(),
    count: db.select({ n: count() }).from(alerts).where(where).prepare(),
  };
});

/**
 * Alert reads for the mobile interface (02 §4.6, 05 wire notes "4.6"): the inbox with keyset paging on
 * (triggeredAt, id), and the count of open critical alerts for the summary. Same visibility as AlertsService:
 * the organizations the caller reaches (an orgId out of reach is 403) and, for users restricted to sites or device
 * groups, the alerts of those (01 §2.6).
 */
export class MobileAlertReads {
  constructor(private readonly db: Db) {}

  inbox(caller: Caller, filter: InboxFilter, window: { limit: number; offset?: number; after?: { ts: string; id: string } }) {
    const reach = callerReach(this.db, caller, filter.orgId);
    if (reach === null) return { rows: [], total: 0 };
    const filters = reach.shape + shapeOf({ S: filter.statuses.length > 0, v: filter.severity });
    const { after } = window;
    const values = { ...reach.values, statuses: JSON.stringify(filter.statuses), severity: filter.severity };
    const rows = inboxQueries(this.db, filters + shapeOf({ k: after })).page.all({
      ...values,
      ts: after?.ts,
      afterId: after?.id,
      limit: window.limit,
      offset: window.offset ?? 0,
    });
    const total = inboxQueries(this.db, filters).count.get(values)?.n ?? 0;
    return { rows, total };
  }

  /** Alerts per status and the open (active or acknowledged) critical ones. */
  counts(caller: Caller, orgId: string | undefined) {
    const out = { total: 0, active: 0, acknowledged: 0, resolved: 0, critical: 0 };
    const reach = callerReach(this.db, caller, orgId);
    if (reach === null) return out;
    for (const { status, severity, n } of alertCountsIn(this.db, reach)) {
      out.total += n;
      if (status === 'active' || status === 'acknowledged' || status === 'resolved') out[status] += n;
      if (severity === 'critical' && (status === 'active' || status === 'acknowledged')) out.critical += n;
    }
    return out;
  }
}
